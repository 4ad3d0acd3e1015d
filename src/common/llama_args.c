/*
 * llama_args.c - the table of every flag ggfit takes (llama_args.h): llama.cpp's
 * (common/arg.cpp, as data/llama_args.tsv lists them), so that a
 * llama-server or llama-cli command line pasted whole is understood, and
 * ggfit's own; and the lookups on it. common/args.c parses with it.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/llama_args.h"

/* The table, one row per flag (struct flag_row), generated. */
#include "llama_args_data.h"

#define N_ROWS (sizeof flag_rows / sizeof flag_rows[0])

static_assert(sizeof flag_order / sizeof flag_order[0] == N_ROWS, "flag_order: every row once");
static_assert(GGFIT_CLI_COUNT < 256 && GGFIT__AT_COUNT < 256, "a row's bytes");
static_assert(N_ROWS <= GGFIT_MAX_FLAG_ROWS, "ggfit_request.rows_given: a bit per row");

bool ggfit__flag_named(const char *list, const char *a)
{
    size_t n = strlen(a);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, a, n))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

const char *ggfit__flag_first(const char *list, char *buf, size_t n)
{
    size_t len = strcspn(list, ",");
    if (len >= n)
        len = n - 1;
    memcpy(buf, list, len);
    buf[len] = '\0';
    return buf;
}

bool ggfit_program_named(const char *word, ggfit_program *out)
{
    static const struct { const char *name; ggfit_program prog; } progs[] = {
        { "llama-server", GGFIT_FOR_SERVER }, { "llama-cli", GGFIT_FOR_CLI },
        { "llama-fit-params", GGFIT_FOR_FIT_PARAMS }, { "llama-bench", GGFIT_FOR_BENCH },
    };
    const char *base = strrchr(word, '/');
    base = base ? base + 1 : word;
    for (size_t k = 0; k < sizeof progs / sizeof progs[0]; k++)
        if (!strcmp(base, progs[k].name)) {
            *out = progs[k].prog;
            return true;
        }
    return false;
}

bool ggfit__flag_row(size_t i, ggfit__flag *out)
{
    if (i >= N_ROWS)
        return false;
    const flag_row *r = &flag_rows[i];
    *out = (ggfit__flag){
        .names = r->names, .negated = r->negated, .env = r->env, .example = r->example,
        .prints = r->prints, .metavar = r->metavar,
        .help = (const char *)&flag_help + r->help,
        .commands = r->commands, .cli = (ggfit_cli_flag)r->cli,
        .kind = (ggfit_flag_kind)r->kind, .lands = (ggfit__flag_at)r->lands,
        .scope = (ggfit_flag_scope)r->scope, .programs = r->programs,
        .memory = (ggfit__flag_memory)r->memory, .values = r->values,
        .llama = r->llama, .since = r->since, .until = r->until,
        .programs_before = r->programs_before, .programs_until = r->programs_until,
        .value = r->value, .value_since = r->value_since,
    };
    return true;
}

bool ggfit__flag_versioned(const ggfit__flag *f)
{
    return f->since || f->until || f->programs_until || f->value_since;
}

static unsigned program_bit(ggfit_program prog)
{
    switch (prog) {
    case GGFIT_FOR_CLI: return GGFIT_PROGRAM_CLI;
    case GGFIT_FOR_FIT_PARAMS: return GGFIT_PROGRAM_FIT_PARAMS;
    case GGFIT_FOR_BENCH: return GGFIT_PROGRAM_BENCH;
    default: return GGFIT_PROGRAM_SERVER;
    }
}

static const char *program_name(ggfit_program prog)
{
    switch (prog) {
    case GGFIT_FOR_CLI: return "llama-cli";
    case GGFIT_FOR_FIT_PARAMS: return "llama-fit-params";
    case GGFIT_FOR_BENCH: return "llama-bench";
    default: return "llama-server";
    }
}

ggfit_status ggfit__flag_in_version(const ggfit__flag *f, const char *a, const char *v, bool env,
                                    uint32_t build, ggfit_program prog, char **err)
{
    /* llama.cpp reads the variables of its own flags alone (a variable
     * of a flag it has not is no error): only a value it refuses stops it */
    if (env) {
        if (f->value_since && v && build < f->value_since && !strcmp(v, f->value))
            return ggfit__fail(err, GGFIT_EINVAL, "llama.cpp b%u's %s takes no '%s' (from b%u): "
                               "it stops with \"error while handling environment variable "
                               "\"%s\": invalid value\"", build, a, v, f->value_since, a);
        return GGFIT_OK;
    }
    /* llama.cpp's words when its parser meets a flag it has not
     * (common_params_parse_ex), or a value its handler refuses */
    if (f->since && build < f->since)
        return ggfit__fail(err, GGFIT_EINVAL, "llama.cpp b%u has no %s (added in b%u): %s stops "
                           "with \"error: invalid argument: %s\"; drop it, or answer for "
                           "--llama-version b%u or later", build, a, f->since,
                           program_name(prog), a, f->since);
    if (f->until && build > f->until)
        return ggfit__fail(err, GGFIT_EINVAL, "llama.cpp b%u has no %s (removed after b%u): %s "
                           "stops with \"error: invalid argument: %s\"", build, a, f->until,
                           program_name(prog), a);
    if (f->programs_until) {
        unsigned bit = program_bit(prog);
        bool before = build < f->programs_until;
        unsigned now = before ? f->programs_before : f->programs;
        unsigned other = before ? f->programs : f->programs_before;
        if (!(now & bit) && (other & bit))
            return ggfit__fail(err, GGFIT_EINVAL, "llama.cpp b%u's %s has no %s (%s it from "
                               "b%u): it stops with \"error: invalid argument: %s\"", build,
                               program_name(prog), a, before ? "added to" : "removed from",
                               f->programs_until, a);
    }
    if (f->value_since && v && build < f->value_since && !strcmp(v, f->value))
        return ggfit__fail(err, GGFIT_EINVAL, "llama.cpp b%u's %s takes no '%s' (from b%u): %s "
                           "stops with \"error while handling argument \"%s\": invalid "
                           "value\"", build, a, v, f->value_since, program_name(prog), a);
    return GGFIT_OK;
}

int ggfit__flag_find(const char *a, bool *negated)
{
    *negated = false;
    if (a[0] != '-')
        return -1;
    for (size_t i = 0; i < N_ROWS; i++) {
        if (ggfit__flag_named(flag_rows[i].names, a))
            return (int)i;
        if (ggfit__flag_named(flag_rows[i].negated, a)) {
            *negated = true;
            return (int)i;
        }
    }
    return -1;
}

const char *ggfit__flag_printed(ggfit__flag_at at, bool draft)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (flag_rows[i].lands == at && (flag_rows[i].scope == GGFIT_SCOPE_DRAFT) == draft &&
            flag_rows[i].prints[0])
            return flag_rows[i].prints;
    return "";   /* tests/test_flags.c: every one the renderers ask for is there */
}

double *ggfit_speed_field(struct ggfit_speed_options *so, ggfit_cli_flag f)
{
    switch (f) {
    case GGFIT_CLI_BANDWIDTH: return &so->bandwidth_gbs;
    case GGFIT_CLI_HOST_BW: return &so->host_bw_gbs;
    case GGFIT_CLI_EFFICIENCY: return &so->efficiency;
    case GGFIT_CLI_HOST_EFFICIENCY: return &so->host_efficiency;
    case GGFIT_CLI_FIXED_MS: return &so->fixed_ms;
    case GGFIT_CLI_LINK_BW: return &so->link_gbs;
    case GGFIT_CLI_TFLOPS: return &so->tflops;
    case GGFIT_CLI_HOST_TFLOPS: return &so->host_tflops;
    case GGFIT_CLI_PP_EFFICIENCY: return &so->pp_efficiency;
    case GGFIT_CLI_CROSS_MS: return &so->cross_ms;
    case GGFIT_CLI_HOST_GFLOPS: return &so->host_gflops;
    default: return NULL;
    }
}

/* Whether the comma list holds k once its names' leading dashes are gone. */
static bool named_bare(const char *list, const char *k)
{
    size_t n = strlen(k);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        size_t d = 0;
        while (d < len && p[d] == '-')
            d++;
        if (len - d == n && !strncmp(p + d, k, n))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

int ggfit__flag_find_key(const char *k, bool *negated)
{
    *negated = false;
    if (!k[0] || k[0] == '-')
        return -1;
    for (size_t i = 0; i < N_ROWS; i++) {
        if (!strcmp(flag_rows[i].env, k) || named_bare(flag_rows[i].names, k))
            return (int)i;
        if (named_bare(flag_rows[i].negated, k)) {
            *negated = true;
            return (int)i;
        }
    }
    return -1;
}

/* The name of list closest to a, if closer than *best (then *best is its
 * distance). */
static void nearest_in(const char *list, const char *a, size_t *best, char *buf, size_t n)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        char name[64];
        if (len < sizeof name) {
            memcpy(name, p, len);
            name[len] = '\0';
            size_t d = ggfit__edit_distance(a, strlen(a), name, len);
            if (d < *best) {
                *best = d;
                snprintf(buf, n, "%s", name);
            }
        }
        p += len + (p[len] == ',');
    }
}

const char *ggfit__flag_nearest(const char *a, unsigned commands, char *buf, size_t n)
{
    size_t best = SIZE_MAX;
    if (!n)
        return NULL;
    buf[0] = '\0';
    for (size_t i = 0; i < N_ROWS; i++) {
        if (commands && !(flag_rows[i].commands & commands))
            continue;
        nearest_in(flag_rows[i].names, a, &best, buf, n);
        nearest_in(flag_rows[i].negated, a, &best, buf, n);
    }
    /* as close as a third of its letters (at least one edit); an exact
     * name is no suggestion, nor is any one-letter flag for another ("-q") */
    size_t len = strlen(a), most = len / 3 ? len / 3 : 1;
    return best > 0 && best <= most && strspn(a, "-") + 1 < len ? buf : NULL;
}

/* ---- the public face (ggfit_app.h) --------------------------------------- */

bool ggfit_flag_get(size_t i, ggfit_flag_info *out)
{
    ggfit__flag f;
    if (i >= N_ROWS || !ggfit__flag_row(flag_order[i], &f))
        return false;
    *out = (ggfit_flag_info){
        .names = f.names, .negated = f.negated, .env = f.env, .metavar = f.metavar,
        .help = f.help, .example = f.example, .kind = f.kind,
        .n_values = f.values, .scope = f.scope, .programs = f.programs,
        .commands = f.commands, .memory = f.memory != GGFIT__MEM_NONE,
        .counted = f.memory == GGFIT__MEM_COUNTED, .cli = f.cli,
    };
    return true;
}

/* The public index of a table row. */
static int public_index(size_t row)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (flag_order[i] == row)
            return (int)i;
    return -1;
}

int ggfit_flag_find(const char *name, unsigned commands, bool *negated)
{
    bool neg = false;
    if (!commands) {
        int row = ggfit__flag_find(name, &neg);
        if (negated)
            *negated = neg;
        return row < 0 ? -1 : public_index((size_t)row);
    }
    /* the tool's own rows first: they take names of llama.cpp's for their
     * commands */
    for (int tool = 1; tool >= 0; tool--)
        for (size_t i = 0; i < N_ROWS; i++) {
            const flag_row *r = &flag_rows[i];
            if (!(r->commands & commands) || (r->scope == GGFIT_SCOPE_TOOL) != tool)
                continue;
            bool in_names = ggfit__flag_named(r->names, name);
            if (in_names || ggfit__flag_named(r->negated, name)) {
                if (negated)
                    *negated = !in_names;
                return public_index(i);
            }
        }
    if (negated)
        *negated = false;
    return -1;
}

const char *ggfit_flag_suggest(const char *name, unsigned commands, char *buf, size_t n)
{
    return ggfit__flag_nearest(name, commands, buf, n);
}
