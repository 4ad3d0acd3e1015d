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
#include "render/render.h"

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

/* One child: its words (the machine's, -- llama-server, the preset's, the
 * router's, and extra: a set's) planned as if held were taken already. */
static ggfit_status plan_child(ggfit_plan **pl_out, char **words, int n_words,
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
    *pl_out = pl;
    pl = NULL;
done:
    ggfit_free(pl);
    ggfit_request_free(r);
    return rc;
}

/* What a plan holds on each device and in system memory. */
static void holds(const ggfit_plan *pl, uint64_t *dev, uint64_t *host)
{
    const ggfit_verdict *v = ggfit__plan_verdict(pl);
    for (uint32_t k = 0; k < v->n_pools; k++) {
        const ggfit_pool *q = &v->pools[k];
        if (q->kind == GGFIT_POOL_DEVICE && q->device >= 0 && q->device < GGFIT_MAX_DEVICES)
            dev[q->device] += q->used;
        else if (q->kind == GGFIT_POOL_HOST)
            *host += q->used;
    }
}

/* The router's line, read once: the machine's words, the router's words
 * for every child, the preset. */
typedef struct router_line {
    int split;                 /* argv[split] is "--" */
    char *router[ROUTER_ARGS];
    int n_router;
    ggfit__preset *preset;
    uint32_t idx[GGFIT__PRESET_MODELS];
    bool startup[GGFIT__PRESET_MODELS];
} router_line;

static ggfit_status line_read(int argc, char **argv, const char *order, router_line *l,
                              ggfit_router *out, char **err)
{
    l->split = 0;
    while (l->split < argc && strcmp(argv[l->split], "--"))
        l->split++;
    const char *preset = NULL;
    l->n_router = 0;
    for (int i = l->split + 2; i < argc; i++) {
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
            for (int k = 0; k <= v && i + k < argc && l->n_router < ROUTER_ARGS; k++)
                l->router[l->n_router++] = argv[i + k];
        }
        i += v;
    }
    if (l->split + 1 >= argc || strcmp(argv[l->split + 1], "llama-server") != 0 || !preset)
        return ggfit__fail(err, GGFIT_EINVAL, "a router line is -- llama-server "
                                              "--models-preset FILE [its flags]");
    snprintf(out->preset, sizeof out->preset, "%s", preset);
    if (!(l->preset = ggfit__calloc(1, sizeof *l->preset)))
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_status rc = ggfit__preset_read(preset, l->preset, err);
    if (!rc && !l->preset->n_models)
        rc = ggfit__fail(err, GGFIT_EINVAL, "%s: no model in the preset (a [name] section "
                                            "with model = FILE)", preset);
    for (uint32_t k = 0; !rc && k < l->preset->n_models; k++)
        l->startup[k] = ggfit__preset_starts(l->preset, k);
    if (!rc)
        rc = order_of(l->preset, order, l->startup, l->idx, err);
    return rc;
}

/* Child j's words into words (the preset's copied into c->words, which
 * its plan points into), extra ones after them. *n words; a preset key
 * llama-server refuses is the child's error (false). */
static ggfit_status child_words(int argc, char **argv, const router_line *l, uint32_t j,
                                ggfit_router_child *c, char **extra, int n_extra, char **words,
                                int *n, char **why)
{
    const char *pw[2 * GGFIT__PRESET_KEYS];
    char names[2 * GGFIT__PRESET_KEYS * 64];
    size_t n_pw = 0;
    (void)argc;
    c->load_on_startup = l->startup[l->idx[j]];
    ggfit_status rc = ggfit__preset_args(l->preset, l->idx[j], pw, sizeof pw / sizeof pw[0],
                                         &n_pw, names, sizeof names, why);
    if (rc)
        return rc;
    *n = 0;
    for (int i = 0; i < l->split; i++)
        words[(*n)++] = argv[i];
    static char dashes[] = "--", server[] = "llama-server";
    words[(*n)++] = dashes;
    words[(*n)++] = server;
    size_t len = 0, bytes = 0;
    for (size_t i = 0; i < n_pw; i++)
        bytes += strlen(pw[i]) + 1;
    if (!c->words && !(c->words = ggfit__malloc(bytes ? bytes : 1)))
        return ggfit__fail(why, GGFIT_ENOMEM, "out of memory");
    c->args[0] = '\0';
    for (size_t i = 0, at = 0; i < n_pw; i++) {
        size_t w = strlen(pw[i]) + 1;
        memcpy(c->words + at, pw[i], w);
        words[(*n)++] = c->words + at;
        at += w;
        if (len < sizeof c->args)
            len += (size_t)snprintf(c->args + len, sizeof c->args - len, "%s%s",
                                    len ? " " : "", pw[i]);
    }
    for (int i = 0; i < l->n_router; i++)
        words[(*n)++] = l->router[i];
    for (int i = 0; i < n_extra; i++)
        words[(*n)++] = extra[i];
    return GGFIT_OK;
}

#define CHILD_WORDS (ROUTER_ARGS + 2 * GGFIT__PRESET_KEYS + 16)

/* Whether the child's preset words set its context. */
static bool sets_context(const ggfit_router_child *c)
{
    return !strncmp(c->args, "-c ", 3) || strstr(c->args, " -c ");
}

/* The set's shares (ggfit_router_fit_set): each model alone at its
 * smallest (its own context, else 4096, every layer on the GPUs, fit off)
 * needs need[k][d]; a device's free memory less its one margin is shared:
 * each model its need and an equal part of what is left, or a part in
 * proportion to its need when the needs alone are more than the device
 * has. held[k][d] is then what model k's fit must see taken. */
static void shares(uint32_t n, uint64_t need[][GGFIT_MAX_DEVICES], const bool *grows,
                   const uint64_t *free_dev, uint64_t margin,
                   uint64_t held[][GGFIT_MAX_DEVICES])
{
    uint32_t n_grow = 0;
    for (uint32_t k = 0; k < n; k++)
        n_grow += grows[k];
    for (uint32_t d = 0; d < GGFIT_MAX_DEVICES; d++) {
        uint64_t pool = free_dev[d] > margin ? free_dev[d] - margin : 0, sum = 0;
        for (uint32_t k = 0; k < n; k++)
            sum += need[k][d];
        for (uint32_t k = 0; k < n; k++) {
            /* what the needs leave goes to the models whose fit can use it
             * (a context of their own is fixed: more would stay unused) */
            uint64_t budget = sum <= pool ? need[k][d] + (grows[k] ? (pool - sum) / n_grow : 0)
                              : sum ? (uint64_t)((double)pool * need[k][d] / (double)sum) : 0;
            held[k][d] = free_dev[d] > budget ? free_dev[d] - budget : 0;
        }
    }
}

static ggfit_status router_run(int argc, char **argv, const char *order, bool set,
                               ggfit_router *out, char **err)
{
    if (err)
        *err = NULL;
    if (!out || argc < 0 || (argc && !argv))
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_router_plan: NULL argument");
    memset(out, 0, sizeof *out);
    out->models_max = 4;
    out->set = set;
    router_line *l = ggfit__calloc(1, sizeof *l);
    char **words = ggfit__calloc(CHILD_WORDS, sizeof *words);
    uint64_t (*need)[GGFIT_MAX_DEVICES] = ggfit__calloc(GGFIT__PRESET_MODELS, sizeof *need);
    uint64_t (*share)[GGFIT_MAX_DEVICES] = ggfit__calloc(GGFIT__PRESET_MODELS, sizeof *share);
    ggfit_status rc = !l || !words || !need || !share
                          ? ggfit__fail(err, GGFIT_ENOMEM, "out of memory")
                          : line_read(argc, argv, order, l, out, err);
    uint64_t held[GGFIT_MAX_DEVICES] = { 0 }, held_host = 0;
    uint64_t seen[GGFIT_MAX_DEVICES] = { 0 }, seen_host = 0, free_dev[GGFIT_MAX_DEVICES] = { 0 };
    uint64_t margin = (uint64_t)1024 << 20;   /* -fitt's default, kept once for all */
    bool grows[GGFIT__PRESET_MODELS] = { false };
    static char fit_off[] = "-fit", off[] = "off", ngl[] = "-ngl", all[] = "all", c4k[] = "-c",
                n4k[] = "4096", fitt[] = "-fitt", zero[] = "0";
    /* a set: each model's need at its smallest first */
    for (uint32_t j = 0; !rc && set && l && j < l->preset->n_models; j++) {
        ggfit_router_child *c = &out->children[j];
        char *why = NULL, *extra[6] = { ngl, all, fit_off, off, c4k, n4k };
        int n = 0;
        snprintf(c->name, sizeof c->name, "%s", l->preset->models[l->idx[j]].name);
        ggfit_status crc = child_words(argc, argv, l, j, c, extra, 4, words, &n, &why);
        if (!crc && !sets_context(c)) {
            words[n++] = extra[4];
            words[n++] = extra[5];
            grows[j] = true;
        }
        ggfit_plan *pl = NULL;
        uint64_t none[GGFIT_MAX_DEVICES] = { 0 }, host = 0;
        if (!crc)
            crc = plan_child(&pl, words, n, none, 0, &why);
        if (crc == GGFIT_ENOMEM)
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        if (!crc) {
            holds(pl, need[j], &host);
            const ggfit_verdict *v = ggfit__plan_verdict(pl);
            for (uint32_t q = 0; q < v->n_pools; q++)
                if (v->pools[q].kind == GGFIT_POOL_DEVICE && v->pools[q].device >= 0 &&
                    v->pools[q].device < GGFIT_MAX_DEVICES)
                    free_dev[v->pools[q].device] = v->pools[q].free;
            ggfit_plan_free(pl);
            ggfit_free(pl);
        }
        ggfit_free(why);
    }
    if (!rc && set && l)
        shares(l->preset->n_models, need, grows, free_dev, margin, share);
    for (uint32_t j = 0; !rc && l && j < l->preset->n_models; j++) {
        ggfit_router_child *c = &out->children[out->n_children++];
        char *why = NULL, *extra[2] = { fitt, zero };
        int n = 0;
        snprintf(c->name, sizeof c->name, "%s", l->preset->models[l->idx[j]].name);
        ggfit_status crc = child_words(argc, argv, l, j, c, extra, set ? 2 : 0, words, &n, &why);
        if (set) {
            /* its share: the rest of each device taken; system memory all
             * of theirs together, checked after */
            memcpy(seen, share[j], sizeof seen);
            seen_host = 0;
        } else {
            c->together = !order && l->startup[l->idx[j]];
            if (!c->together) {
                memcpy(seen, held, sizeof held);
                seen_host = held_host;
            }
        }
        memcpy(c->free_held, seen, sizeof seen);
        c->host_held = seen_host;
        if (!crc)
            crc = plan_child(&c->plan, words, n, seen, seen_host, &why);
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
        holds(c->plan, held, &held_host);
    }
    memcpy(out->held, held, sizeof held);
    out->held_host = held_host;
    /* against what the machine had free before any child */
    for (uint32_t k = 0; !rc && k < out->n_children; k++) {
        const ggfit_plan *pl = out->children[k].plan;
        if (!pl)
            continue;
        const ggfit_verdict *v = ggfit__plan_verdict(pl);
        for (uint32_t q = 0; q < v->n_pools; q++) {
            const ggfit_pool *pool = &v->pools[q];
            uint64_t had = pool->free;
            if (pool->kind == GGFIT_POOL_DEVICE && pool->device >= 0 &&
                pool->device < GGFIT_MAX_DEVICES) {
                had += out->children[k].free_held[pool->device];
                out->over |= held[pool->device] > had;
            } else if (pool->kind == GGFIT_POOL_HOST) {
                had += out->children[k].host_held;
                out->over |= held_host > had;
            }
        }
        break;
    }
    if (l && l->preset) {
        ggfit__preset_free(l->preset);
        ggfit_free(l->preset);
    }
    ggfit_free(l);
    ggfit_free(words);
    ggfit_free(need);
    ggfit_free(share);
    if (rc)
        ggfit_router_free(out);
    return rc;
}

ggfit_status ggfit_router_plan(int argc, char **argv, const char *order, ggfit_router *out,
                               char **err)
{
    return router_run(argc, argv, order, false, out, err);
}

ggfit_status ggfit_router_fit_set(int argc, char **argv, ggfit_router *out, char **err)
{
    return router_run(argc, argv, NULL, true, out, err);
}

/* The table row of a preset key or of a flag word (its dashes dropped):
 * two spellings of one option give the same row. -1: none. */
static int row_of(const char *w)
{
    bool neg;
    while (*w == '-')
        w++;
    return ggfit__flag_find_key(w, &neg);
}

char *ggfit_router_preset(const ggfit_router *r)
{
    ggfit__preset *p = ggfit__calloc(1, sizeof *p);
    char *why = NULL;
    ggfit_sb sb = { 0 };
    if (!p || ggfit__preset_read(r->preset, p, &why)) {
        ggfit_free(why);
        if (p)
            ggfit__preset_free(p);
        ggfit_free(p);
        return NULL;
    }
    ggfit__sb_printf(&sb, "; %s, each model's flags fitted to its share of the machine by "
                          "ggfit (fit off: whichever loads first takes no more)\n", r->preset);
    ggfit__sb_printf(&sb, "[*]\n");
    for (uint32_t i = 0; i < p->global.n_kv; i++)
        ggfit__sb_printf(&sb, "%s = %s\n", p->global.kv[i].key, p->global.kv[i].value);
    for (uint32_t k = 0; k < r->n_children; k++) {
        const ggfit_router_child *c = &r->children[k];
        const ggfit__preset_section *s = NULL;
        for (uint32_t j = 0; j < p->n_models && !s; j++)
            if (!strcmp(p->models[j].name, c->name))
                s = &p->models[j];
        if (!s)
            continue;
        size_t n = 0;
        char **w = c->plan ? ggfit_plan_argv(c->plan, GGFIT_FOR_SERVER, &n) : NULL;
        ggfit__sb_printf(&sb, "\n[%s]\n", c->name);
        /* its own keys, but those the plan's flags set */
        for (uint32_t i = 0; i < s->n_kv; i++) {
            int row = row_of(s->kv[i].key);
            bool replaced = false;
            for (size_t j = 0; w && j < n && !replaced; j++)
                replaced = w[j][0] == '-' && row >= 0 && row_of(w[j]) == row;
            if (!replaced)
                ggfit__sb_printf(&sb, "%s = %s\n", s->kv[i].key, s->kv[i].value);
        }
        if (!c->plan)
            ggfit__sb_printf(&sb, "; not planned: %s\n", c->error);
        for (size_t j = 0; w && j < n; j++) {
            const char *flag = w[j];
            int v = values_of(flag);
            while (*flag == '-')
                flag++;
            if (v && j + 1 < n) {
                ggfit__sb_printf(&sb, "%s = %s\n", flag, w[j + 1]);
                j++;
            } else {
                ggfit__sb_printf(&sb, "%s = true\n", flag);
            }
        }
        ggfit_argv_free(w);
    }
    ggfit__preset_free(p);
    ggfit_free(p);
    return ggfit__sb_take(&sb);
}
