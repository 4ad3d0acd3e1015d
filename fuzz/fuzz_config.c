/*
 * fuzz_config.c - libFuzzer target for the readers of the files that name
 * several models (`make fuzz`): llama-swap's YAML config
 * (common/swap.c) and llama.cpp's INI lines (common/preset.c), the
 * router's presets and config.ini.
 *
 * Each input is read as a llama-swap config from memory. A refused input
 * must come with a message; an accepted one is walked as the planner walks
 * it (every model's words and env, every group's members, the evictions
 * each model's request makes with every other model up). The same bytes,
 * line by line, go through the INI line reader, whose pieces must lie
 * inside the line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/preset.h"
#include "common/swap.h"

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static volatile uint64_t sink;

static void touch(const char *s)
{
    for (; s && *s; s++)
        sink += (unsigned char)*s;
}

static void walk(const ggfit__swap *s)
{
    bool *up = calloc(s->n_models + 1, 1), *stopped = calloc(s->n_models + 1, 1);
    CHECK(up && stopped);
    for (uint32_t j = 0; j < s->n_models; j++) {
        const ggfit__swap_model *m = &s->models[j];
        touch(m->name);
        for (int i = 0; i < m->argc; i++)
            touch(m->argv[i]);
        for (int i = 0; i < m->n_env; i++)
            touch(m->env[i]);
        CHECK(m->group == GGFIT__SWAP_NO_GROUP || m->group < s->n_groups);
        CHECK(ggfit__swap_find(s, m->name) == j);
        up[j] = true;
    }
    for (uint32_t g = 0; g < s->n_groups; g++)
        for (uint32_t i = 0; i < s->groups[g].n_members; i++)
            CHECK(s->groups[g].members[i] < s->n_models);
    for (uint32_t j = 0; j < s->n_models && j < 64; j++) {
        memset(stopped, 0, s->n_models);
        ggfit__swap_evicts(s, j, up, stopped);
        CHECK(!stopped[j]);
    }
    for (uint32_t i = 0; i < s->n_preload; i++)
        CHECK(ggfit__swap_find(s, s->preload[i]) < s->n_models);
    free(up);
    free(stopped);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    ggfit__swap s;
    char *err = NULL;
    ggfit_status rc = ggfit__swap_parse(text, size, "fuzz.yaml", &s, &err);
    if (rc == GGFIT_OK)
        walk(&s);
    else
        CHECK(err && err[0]);
    ggfit_free(err);
    ggfit__swap_free(&s);
    for (size_t at = 0; at < size;) {
        size_t len = 0;
        while (at + len < size && data[at + len] != '\n')
            len++;
        ggfit__ini_line l;
        ggfit__ini_kind k = ggfit__ini_parse_line(text + at, len, &l);
        if (k == GGFIT__INI_SECTION || k == GGFIT__INI_KEY)
            CHECK(l.text >= text + at && l.text + l.n <= text + at + len);
        if (k == GGFIT__INI_KEY)
            CHECK(l.value >= text + at && l.value + l.value_n <= text + at + len);
        at += len + 1;
    }
    return 0;
}
