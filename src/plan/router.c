/*
 * router.c - llama-server's router mode (--models-preset FILE): each model
 * of the preset is a child llama-server, started with the preset's flags
 * for it ([*], then its section) and the router's own command line on top
 * (tools/server/server-models.cpp: load_models, update_args), whose fit
 * (common/fit.cpp) runs against the memory free when it starts: what the
 * children started before it hold is gone. Planned here child by child in
 * the order asked, each against what the ones before it left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/llama_args.h"
#include "common/preset.h"
#include "plan/plan.h"

#define ROUTER_ARGS 1024

/* Router flags no child gets (server-models.cpp's unset_reserved_args:
 * the router's own, the model's, and the address it overwrites). */
static bool reserved(const char *a)
{
    static const char *const names[] = {
        "--models-preset", "--models-dir", "--models-max", "--models-autoload",
        "--no-models-autoload", "-m", "--model", "-mm", "--mmproj", "-a", "--alias", "-hf",
        "-hfr", "--hf-repo", "--host", "--port", "--api-key", "--api-key-file",
        "--ssl-key-file", "--ssl-cert-file", NULL,
    };
    for (size_t i = 0; names[i]; i++)
        if (!strcmp(a, names[i]))
            return true;
    return false;
}

/* Words a flag of llama.cpp's takes after it (0 for a bool, 1 else). */
static int values_of(const char *a)
{
    bool neg;
    ggfit_flag_info f;
    int row = ggfit_flag_find(a, 0, &neg);
    return row >= 0 && ggfit_flag_get((size_t)row, &f) ? (neg ? 0 : f.n_values) : 0;
}

void ggfit_router_free(ggfit_router *r)
{
    if (!r)
        return;
    for (uint32_t k = 0; k < r->n_children; k++) {
        if (r->children[k].plan) {
            ggfit_plan_free(r->children[k].plan);
            ggfit_free(r->children[k].plan);
            r->children[k].plan = NULL;
        }
        ggfit_free(r->children[k].words);
        r->children[k].words = NULL;
    }
}

/* The order asked: names comma-separated (each once; the rest after them
 * in llama.cpp's order), else llama.cpp's: the load-on-startup models
 * first (startup[k]), then the rest, each by name. idx receives the preset's
 * model indices. */
static ggfit_status order_of(const ggfit__preset *p, const char *order, const bool *startup,
                             uint32_t *idx, char **err)
{
    bool taken[GGFIT__PRESET_MODELS] = { false };
    uint32_t n = 0;
    for (const char *s = order ? order : ""; *s;) {
        size_t len = strcspn(s, ",");
        uint32_t k = 0;
        while (k < p->n_models &&
               (strlen(p->models[k].name) != len || strncmp(p->models[k].name, s, len)))
            k++;
        if (k == p->n_models)
            return ggfit__fail(err, GGFIT_EINVAL, "--order: '%.*s' is not a model of the "
                                                  "preset", (int)(len > 80 ? 80 : len), s);
        if (taken[k])
            return ggfit__fail(err, GGFIT_EINVAL, "--order: '%.*s' given twice",
                               (int)(len > 80 ? 80 : len), s);
        taken[k] = true;
        idx[n++] = k;
        s += len + (s[len] == ',');
    }
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t k = 0; k < p->n_models; k++)
            if (!taken[k] && startup[k] == (pass == 0) && !order) {
                taken[k] = true;
                idx[n++] = k;
            }
    for (uint32_t k = 0; k < p->n_models; k++)
        if (!taken[k])
            idx[n++] = k;
    return GGFIT_OK;
}

/* Whether model k loads on startup (its [*] or section says so). */
static bool starts(const ggfit__preset *p, uint32_t k)
{
    const ggfit__preset_section *s[2] = { &p->global, &p->models[k] };
    bool on = false;
    for (int j = 0; j < 2; j++)
        for (uint32_t i = 0; i < s[j]->n_kv; i++)
            if (!strcmp(s[j]->kv[i].key, "load-on-startup"))
                on = strcmp(s[j]->kv[i].value, "off") && strcmp(s[j]->kv[i].value, "disabled") &&
                     strcmp(s[j]->kv[i].value, "false") && strcmp(s[j]->kv[i].value, "0");
    return on;
}

/* One child: its words (the machine's, -- llama-server, the preset's, the
 * router's) planned against what the children before it hold. */
static ggfit_status plan_child(ggfit_router_child *c, char **words, int n_words,
                               const uint64_t *held, uint64_t held_host, char **err)
{
    ggfit_request *r = ggfit_request_new();
    ggfit_plan *pl = ggfit__calloc(1, sizeof *pl);
    ggfit_status rc = GGFIT_OK;
    if (!r || !pl) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = ggfit_request_env(r, err)) ||
        (rc = ggfit__plan_argv(r, n_words, words, NULL, err)))
        goto done;
    memcpy(r->held, held, sizeof r->held);
    r->held_host = held_host;
    r->fit.no_log = true;
    if ((rc = ggfit_request_plan(r, pl, err)))
        goto done;
    c->plan = pl;
    pl = NULL;
done:
    ggfit_free(pl);
    ggfit_request_free(r);
    return rc;
}

ggfit_status ggfit_router_plan(int argc, char **argv, const char *order, ggfit_router *out,
                               char **err)
{
    if (err)
        *err = NULL;
    if (!out || argc < 0 || (argc && !argv))
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_router_plan: NULL argument");
    memset(out, 0, sizeof *out);
    out->models_max = 4;
    /* the machine's words, then the router's line after -- llama-server */
    int split = 0;
    while (split < argc && strcmp(argv[split], "--"))
        split++;
    const char *preset = NULL;
    char *router[ROUTER_ARGS];
    int n_router = 0;
    for (int i = split + 2; i < argc; i++) {
        const char *a = argv[i];
        int v = a[0] == '-' ? values_of(a) : 0;
        if (!strcmp(a, "--models-preset") && i + 1 < argc)
            preset = argv[i + 1];
        else if (!strcmp(a, "--models-max") && i + 1 < argc)
            out->models_max = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(a, "--models-dir"))
            return ggfit__fail(err, GGFIT_EINVAL, "--models-dir: not planned yet (give the "
                                                  "models in a --models-preset file)");
        if (!reserved(a)) {
            for (int k = 0; k <= v && i + k < argc && n_router < ROUTER_ARGS; k++)
                router[n_router++] = argv[i + k];
        }
        i += v;
    }
    if (split + 1 >= argc || strcmp(argv[split + 1], "llama-server") != 0 || !preset)
        return ggfit__fail(err, GGFIT_EINVAL, "a router line is -- llama-server "
                                              "--models-preset FILE [its flags]");
    snprintf(out->preset, sizeof out->preset, "%s", preset);
    ggfit__preset *p = ggfit__calloc(1, sizeof *p);
    if (!p)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_status rc = ggfit__preset_read(preset, p, err);
    uint32_t idx[GGFIT__PRESET_MODELS];
    if (!rc && !p->n_models)
        rc = ggfit__fail(err, GGFIT_EINVAL, "%s: no model in the preset (a [name] section "
                                            "with model = FILE)", preset);
    bool startup[GGFIT__PRESET_MODELS];
    for (uint32_t k = 0; !rc && k < p->n_models; k++)
        startup[k] = starts(p, k);
    if (!rc)
        rc = order_of(p, order, startup, idx, err);
    /* the load-on-startup children start together (no order asked): each
     * one's fit sees what none of them holds yet */
    uint64_t held[GGFIT_MAX_DEVICES] = { 0 }, held_host = 0;
    uint64_t seen[GGFIT_MAX_DEVICES] = { 0 }, seen_host = 0;
    for (uint32_t j = 0; !rc && j < p->n_models; j++) {
        ggfit_router_child *c = &out->children[out->n_children++];
        const char *pw[2 * GGFIT__PRESET_KEYS];
        char names[2 * GGFIT__PRESET_KEYS * 64];
        size_t n_pw = 0;
        snprintf(c->name, sizeof c->name, "%s", p->models[idx[j]].name);
        char *why = NULL;
        ggfit_status crc = ggfit__preset_args(p, idx[j], pw, sizeof pw / sizeof pw[0], &n_pw,
                                              names, sizeof names, &c->load_on_startup, &why);
        /* the child's words: the machine's, the preset's, the router's */
        char *words[ROUTER_ARGS + 2 * GGFIT__PRESET_KEYS + 2];
        int n = 0;
        for (int i = 0; i < split; i++)
            words[n++] = argv[i];
        static char dashes[] = "--", server[] = "llama-server";
        words[n++] = dashes;
        words[n++] = server;
        /* the preset's words copied into the child, which its plan points
         * into after the preset is gone */
        size_t len = 0, bytes = 0;
        for (size_t i = 0; i < n_pw; i++)
            bytes += strlen(pw[i]) + 1;
        c->words = ggfit__malloc(bytes ? bytes : 1);
        if (!c->words) {
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
            ggfit_free(why);
            break;
        }
        for (size_t i = 0, at = 0; i < n_pw; i++) {
            size_t w = strlen(pw[i]) + 1;
            memcpy(c->words + at, pw[i], w);
            words[n++] = c->words + at;
            at += w;
            if (len < sizeof c->args)
                len += (size_t)snprintf(c->args + len, sizeof c->args - len, "%s%s",
                                        len ? " " : "", pw[i]);
        }
        for (int i = 0; i < n_router; i++)
            words[n++] = router[i];
        c->together = !order && startup[idx[j]];
        if (!c->together) {
            memcpy(seen, held, sizeof held);
            seen_host = held_host;
        }
        memcpy(c->free_held, seen, sizeof seen);
        c->host_held = seen_host;
        if (!crc)
            crc = plan_child(c, words, n, seen, seen_host, &why);
        if (crc == GGFIT_ENOMEM) {
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
            ggfit_free(why);
            break;
        }
        if (crc) {
            snprintf(c->error, sizeof c->error, "%s", why ? why : "cannot be planned");
            ggfit_free(why);
            continue;
        }
        out->n_startup += c->load_on_startup;
        /* what it holds from now on, on each device and in system memory */
        const ggfit_plan *pl = c->plan;
        const ggfit_verdict *v = pl->has_alternative ? &pl->alternative_verdict : &pl->verdict;
        for (uint32_t k = 0; k < v->n_pools; k++) {
            const ggfit_pool *q = &v->pools[k];
            if (q->kind == GGFIT_POOL_DEVICE && q->device >= 0 && q->device < GGFIT_MAX_DEVICES)
                held[q->device] += q->used;
            else if (q->kind == GGFIT_POOL_HOST)
                held_host += q->used;
        }
    }
    memcpy(out->held, held, sizeof held);
    out->held_host = held_host;
    /* against what the machine had free before any child */
    for (uint32_t k = 0; k < out->n_children; k++) {
        const ggfit_plan *pl = out->children[k].plan;
        if (!pl || out->children[k].free_held[0] || out->children[k].host_held)
            continue;
        const ggfit_verdict *v = pl->has_alternative ? &pl->alternative_verdict : &pl->verdict;
        for (uint32_t q = 0; q < v->n_pools; q++) {
            const ggfit_pool *pool = &v->pools[q];
            if (pool->kind == GGFIT_POOL_DEVICE && pool->device >= 0 &&
                pool->device < GGFIT_MAX_DEVICES)
                out->over |= held[pool->device] > pool->free;
            else if (pool->kind == GGFIT_POOL_HOST)
                out->over |= held_host > pool->free;
        }
        break;
    }
    ggfit__preset_free(p);
    ggfit_free(p);
    if (rc)
        ggfit_router_free(out);
    return rc;
}
