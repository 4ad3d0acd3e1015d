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
#include "common/swap.h"
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

/* The router's line, read once: the machine's words, the router's words
 * for every child, the preset. */
struct router_line {
    int split;                 /* argv[split] is "--" */
    char *router[ROUTER_ARGS];
    int n_router;
    ggfit__preset *preset;     /* the preset's models and the directory's */
    ggfit__swap *swap;         /* or llama-swap's config */
    uint32_t n_models;
    uint32_t seq[GGFIT_ROUTER_MAX];  /* the models asked for, in order */
    uint32_t n_seq;
    bool startup[GGFIT__PRESET_MODELS];
};
typedef struct router_line router_line;

static const char *model_name(const router_line *l, uint32_t j)
{
    return l->swap ? l->swap->models[j].name : l->preset->models[j].name;
}

/* The model named s[0..len) (llama-swap: or by an alias), UINT32_MAX none. */
static uint32_t model_find(const router_line *l, const char *s, size_t len)
{
    char name[256];
    if (len >= sizeof name)
        return UINT32_MAX;
    memcpy(name, s, len);
    name[len] = '\0';
    if (l->swap)
        return ggfit__swap_find(l->swap, name);
    for (uint32_t k = 0; k < l->n_models; k++)
        if (!strcmp(model_name(l, k), name))
            return k;
    return UINT32_MAX;
}

/* The models started, in order: the load-on-startup ones (startup[k]),
 * with the router, or llama-swap's preload list, one by one; then those
 * asked, names comma-separated, a name as often as it is asked for; then
 * the models never named, each by name (llama.cpp's order, llama-swap's
 * ids sorted). seq receives the model indices, *n of them
 * (GGFIT_ROUTER_MAX at most). */
static ggfit_status order_of(const struct router_line *l, const char *order, const bool *startup,
                             const uint32_t *preload, uint32_t n_preload, uint32_t *seq,
                             uint32_t *n, char **err)
{
    bool taken[GGFIT__PRESET_MODELS] = { false };
    uint32_t n_models = l->n_models;
    *n = 0;
    for (uint32_t k = 0; k < n_models; k++)
        if (startup[k]) {
            taken[k] = true;
            seq[(*n)++] = k;
        }
    for (uint32_t i = 0; i < n_preload && *n < GGFIT_ROUTER_MAX; i++) {
        taken[preload[i]] = true;
        seq[(*n)++] = preload[i];
    }
    for (const char *s = order ? order : ""; *s;) {
        size_t len = strcspn(s, ",");
        uint32_t k = model_find(l, s, len);
        if (k == UINT32_MAX)
            return ggfit__fail(err, GGFIT_EINVAL, "--order: '%.*s' is not a model of the "
                                                  "%s", (int)(len > 80 ? 80 : len), s,
                               l->swap ? "config" : "preset");
        if (*n == GGFIT_ROUTER_MAX)
            return ggfit__fail(err, GGFIT_EINVAL, "--order: more than %d requests",
                               GGFIT_ROUTER_MAX);
        taken[k] = true;
        seq[(*n)++] = k;
        s += len + (s[len] == ',');
    }
    for (uint32_t k = 0; k < n_models && *n < GGFIT_ROUTER_MAX; k++)
        if (!taken[k])
            seq[(*n)++] = k;
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

static void take(uint64_t *x, uint64_t n)
{
    *x = *x > n ? *x - n : 0;
}

/* What a plan holds on each device and in system memory once loaded: a
 * draft no speculative type runs (-md without --spec-type draft-simple)
 * was measured by the fit and loaded, then freed (server-context.cpp
 * load_model: no speculative context, model_dft reset). */
static void holds(const ggfit_plan *pl, uint64_t *dev, uint64_t *host)
{
    const ggfit_verdict *v = ggfit__plan_verdict(pl);
    uint64_t d_dev[GGFIT_MAX_DEVICES] = { 0 }, d_host = 0;
    for (uint32_t k = 0; k < v->n_pools; k++) {
        const ggfit_pool *q = &v->pools[k];
        if (q->kind == GGFIT_POOL_DEVICE && q->device >= 0 && q->device < GGFIT_MAX_DEVICES)
            d_dev[q->device] += q->used;
        else if (q->kind == GGFIT_POOL_HOST)
            d_host += q->used;
    }
    if (pl->has_draft && pl->draft_unused) {
        const ggfit_projection *d = &pl->draft;
        for (uint32_t j = 0; j < d->n_devices; j++)
            if (d->device_of[j] < GGFIT_MAX_DEVICES)
                take(&d_dev[d->device_of[j]], d->devices[j].model + d->devices[j].context +
                                                  d->devices[j].compute);
        take(&d_host, d->host.model + d->host.context + d->host.compute + d->cpu_extra.model +
                          d->cpu_extra.context);
    }
    for (uint32_t k = 0; k < GGFIT_MAX_DEVICES; k++)
        dev[k] += d_dev[k];
    *host += d_host;
}

/* The preset file and the models directory into p (either may be ""). */
static ggfit_status models_read(const char *preset, const char *dir, ggfit__preset *p,
                                char *notes, size_t cap, char **err)
{
    ggfit_status rc = GGFIT_OK;
    if (*preset)
        rc = ggfit__preset_read(preset, p, err);
    else
        memset(p, 0, sizeof *p);
    if (!rc && *dir)
        rc = ggfit__preset_dir(p, dir, notes, cap, err);
    return rc;
}

/* A llama-swap line: -- llama-swap --config FILE (Go's flags: one dash or
 * two, FILE apart or after '='); its other flags are its own. */
static ggfit_status swap_read(int argc, char **argv, router_line *l, ggfit_router *out,
                              char **err)
{
    for (int i = l->split + 2; i < argc; i++) {
        const char *a = argv[i] + (argv[i][0] == '-') + (argv[i][0] == '-' && argv[i][1] == '-');
        if (!strncmp(a, "config=", 7))
            snprintf(out->preset, sizeof out->preset, "%s", a + 7);
        else if (!strcmp(a, "config") && i + 1 < argc)
            snprintf(out->preset, sizeof out->preset, "%s", argv[++i]);
    }
    if (!out->preset[0])
        return ggfit__fail(err, GGFIT_EINVAL, "a llama-swap line is -- llama-swap --config "
                                              "FILE");
    out->swap = true;
    out->models_max = 0;
    if (!(l->swap = ggfit__calloc(1, sizeof *l->swap)))
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_status rc = ggfit__swap_read(out->preset, l->swap, err);
    if (rc)
        return rc;
    if (!l->swap->n_models)
        return ggfit__fail(err, GGFIT_EINVAL, "%s: no model (a models: entry with its cmd)",
                           out->preset);
    if (l->swap->n_models > GGFIT__PRESET_MODELS)
        return ggfit__fail(err, GGFIT_EINVAL, "%s: %u models, more than ggfit plans at once "
                                              "(%d)", out->preset, l->swap->n_models,
                           GGFIT__PRESET_MODELS);
    l->n_models = out->n_models = l->swap->n_models;
    /* what a model's environment decides that ggfit does not follow */
    for (uint32_t j = 0; j < l->n_models; j++)
        for (int i = 0; i < l->swap->models[j].n_env; i++) {
            const char *e = l->swap->models[j].env[i];
            size_t len = strlen(out->notes);
            if ((!strncmp(e, "CUDA_VISIBLE_DEVICES=", 21) ||
                 !strncmp(e, "HIP_VISIBLE_DEVICES=", 20)) && len + 1 < sizeof out->notes)
                snprintf(out->notes + len, sizeof out->notes - len, "%smodel %.80s: %.80s: "
                         "its child sees only those GPUs, and ggfit plans it on every GPU "
                         "given", len ? "\n" : "", l->swap->models[j].name, e);
        }
    return GGFIT_OK;
}

static ggfit_status line_read(int argc, char **argv, const char *order, router_line *l,
                              ggfit_router *out, char **err)
{
    l->split = 0;
    while (l->split < argc && strcmp(argv[l->split], "--"))
        l->split++;
    l->n_router = 0;
    uint32_t preload[GGFIT_ROUTER_MAX], n_preload = 0;
    ggfit_status rc;
    if (l->split + 1 < argc && !strcmp(argv[l->split + 1], "llama-swap")) {
        if ((rc = swap_read(argc, argv, l, out, err)))
            return rc;
        for (uint32_t i = 0; i < l->swap->n_preload && n_preload < GGFIT_ROUTER_MAX; i++) {
            uint32_t k = ggfit__swap_find(l->swap, l->swap->preload[i]);
            if (k != UINT32_MAX)
                preload[n_preload++] = k;
        }
        return order_of(l, order, l->startup, preload, n_preload, l->seq, &l->n_seq, err);
    }
    for (int i = l->split + 2; i < argc; i++) {
        const char *a = argv[i];
        int v = a[0] == '-' ? values_of(a) : 0;
        const char *val = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--models-preset"))
            snprintf(out->preset, sizeof out->preset, "%s", val);
        else if (!strcmp(a, "--models-dir"))
            snprintf(out->models_dir, sizeof out->models_dir, "%s", val);
        else if (!strcmp(a, "--models-max"))
            out->models_max = (uint32_t)strtoul(val, NULL, 10);
        if (!reserved(a)) {
            for (int k = 0; k <= v && i + k < argc && l->n_router < ROUTER_ARGS; k++)
                l->router[l->n_router++] = argv[i + k];
        }
        i += v;
    }
    if (l->split + 1 >= argc || strcmp(argv[l->split + 1], "llama-server") != 0 ||
        (!out->preset[0] && !out->models_dir[0]))
        return ggfit__fail(err, GGFIT_EINVAL, "a router line is -- llama-server "
                                              "--models-preset FILE and/or --models-dir DIR "
                                              "[its flags], or -- llama-swap --config FILE");
    if (!(l->preset = ggfit__calloc(1, sizeof *l->preset)))
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    rc = models_read(out->preset, out->models_dir, l->preset, out->notes, sizeof out->notes,
                     err);
    if (!rc && !l->preset->n_models)
        rc = ggfit__fail(err, GGFIT_EINVAL, "%s: no model (a [name] section with model = "
                                            "FILE, or a DIR/NAME.gguf)",
                         out->preset[0] ? out->preset : out->models_dir);
    l->n_models = out->n_models = rc ? 0 : l->preset->n_models;
    uint32_t n_startup = 0;
    for (uint32_t k = 0; !rc && k < l->preset->n_models; k++)
        n_startup += l->startup[k] = ggfit__preset_starts(l->preset, k);
    out->n_startup = n_startup;
    /* server-models.cpp load_models: no ">0" exception, so --models-max 0
     * (no limit) refuses any load-on-startup model too */
    if (!rc && n_startup > out->models_max)
        rc = ggfit__fail(err, GGFIT_EINVAL, "failed to initialize router models: number of "
                                            "models to load on startup (%u) exceeds "
                                            "models_max (%u) (raise --models-max%s, or take "
                                            "load-on-startup off some)", n_startup,
                         out->models_max, out->models_max ? "" : "; llama-server counts 0 "
                                                                 "as no room here");
    if (!rc)
        rc = order_of(l, order, l->startup, NULL, 0, l->seq, &l->n_seq, err);
    return rc;
}

/* llama-swap's model j as preset-like words: its env's LLAMA_ARG_
 * variables as flags (its cmd's own flags come after them and win, as
 * llama.cpp's command line wins over its environment), then its cmd's
 * words after the llama-server program. */
static ggfit_status swap_words(const router_line *l, uint32_t j, const char **pw, size_t max,
                               size_t *n, char *names, size_t cap, char **why)
{
    const ggfit__swap_model *m = &l->swap->models[j];
    size_t used = 0;
    *n = 0;
    int at = 0;
    /* the program: llama-server, or a path to it (a docker line's is in
     * its image, not in the line) */
    while (at < m->argc) {
        const char *base = strrchr(m->argv[at], '/');
        base = base ? base + 1 : m->argv[at];
        at++;
        if (!strncmp(base, "llama-server", 12))
            break;
        if (at == m->argc)
            return ggfit__fail(why, GGFIT_EINVAL, "model %.80s: its cmd runs no llama-server "
                                                  "(ggfit plans llama-server's children)",
                               m->name);
    }
    if (m->argc == 0)
        return ggfit__fail(why, GGFIT_EINVAL, "model %.80s: empty command", m->name);
    for (int i = 0; i < m->n_env; i++) {
        const char *eq = strchr(m->env[i], '=');
        char key[128];
        if (!eq || (size_t)(eq - m->env[i]) >= sizeof key)
            continue;
        memcpy(key, m->env[i], (size_t)(eq - m->env[i]));
        key[eq - m->env[i]] = '\0';
        if (!strncmp(key, "LLAMA_ARG_", 10)) {
            ggfit__preset_kv kv = { key, (char *)(uintptr_t)(eq + 1) };
            ggfit_status rc = ggfit__preset_kv_words(&kv, m->name, pw, max, n, names, &used, cap,
                                                     why);
            if (rc)
                return rc;
        }
    }
    for (int i = at; i < m->argc && *n < max; i++)
        pw[(*n)++] = m->argv[i];
    return GGFIT_OK;
}

/* Model j's words into words (the preset's copied into c->words, which
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
    c->load_on_startup = l->startup[j];
    ggfit_status rc = l->swap ? swap_words(l, j, pw, sizeof pw / sizeof pw[0], &n_pw, names,
                                           sizeof names, why)
                              : ggfit__preset_args(l->preset, j, pw, sizeof pw / sizeof pw[0],
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

/* The sum of the m largest of v[0..n). */
static uint64_t top_sum(const uint64_t *v, uint32_t n, uint32_t m)
{
    uint64_t sorted[GGFIT__PRESET_MODELS], sum = 0;
    memcpy(sorted, v, n * sizeof *v);
    for (uint32_t i = 0; i < m && i < n; i++) {
        uint32_t best = i;
        for (uint32_t j = i + 1; j < n; j++)
            if (sorted[j] > sorted[best])
                best = j;
        uint64_t t = sorted[i];
        sorted[i] = sorted[best];
        sorted[best] = t;
        sum += sorted[i];
    }
    return sum;
}

/* The most a set of models resident at once holds, v[k] model k's: the
 * router's, any m of them (the m largest); llama-swap's, by its groups
 * (a swap group one member at a time, the largest; the others all of
 * theirs; the persistent and the non-exclusive groups together with at
 * most one exclusive group, the largest: the resident sets of
 * groupSwapper.EvictionFor). */
static uint64_t resident_most(const router_line *l, const uint64_t *v, uint32_t m)
{
    if (!l->swap)
        return top_sum(v, l->n_models, m);
    uint64_t always = 0, one = 0;
    for (uint32_t g = 0; g < l->swap->n_groups; g++) {
        const ggfit__swap_group *gr = &l->swap->groups[g];
        uint64_t w = 0;
        for (uint32_t i = 0; i < gr->n_members; i++) {
            uint64_t x = gr->members[i] < l->n_models ? v[gr->members[i]] : 0;
            w = gr->swap ? (x > w ? x : w) : w + x;
        }
        if (gr->persistent || !gr->exclusive)
            always += w;
        else if (w > one)
            one = w;
    }
    return always + one;
}

/* The set's shares (ggfit_router_fit_set): each model alone at its
 * smallest (its own context, else 4096, every layer on the GPUs, fit off)
 * needs need[k][d]; a device's free memory less its one margin is shared so
 * that every set that can be resident (resident_most: any m of the router's
 * models) fits at once: each model its need and its weight's part w e of
 * what is left (the models whose context can grow), e the largest that keeps the
 * largest resident set within the pool; or shares in proportion to the
 * needs when the needs of the largest resident set alone are more than
 * the pool. held[k][d] is then what model k's fit must see taken. */
static void shares(const router_line *l, uint32_t m, uint64_t need[][GGFIT_MAX_DEVICES],
                   const bool *grows, const double *weight, const uint64_t *free_dev,
                   uint64_t margin, uint64_t held[][GGFIT_MAX_DEVICES])
{
    uint32_t n = l->n_models;
    for (uint32_t d = 0; d < GGFIT_MAX_DEVICES; d++) {
        uint64_t pool = free_dev[d] > margin ? free_dev[d] - margin : 0;
        uint64_t v[GGFIT__PRESET_MODELS], budget[GGFIT__PRESET_MODELS];
        for (uint32_t k = 0; k < n; k++)
            v[k] = need[k][d];
        uint64_t top = resident_most(l, v, m);
        if (top <= pool) {
            /* the largest e with top_sum(need + e on the growing) <= pool */
            uint64_t lo = 0, hi = pool - top;
            while (lo < hi) {
                uint64_t e = lo + (hi - lo + 1) / 2;
                for (uint32_t k = 0; k < n; k++)
                    v[k] = need[k][d] + (grows[k] ? (uint64_t)(weight[k] * (double)e) : 0);
                if (resident_most(l, v, m) <= pool)
                    lo = e;
                else
                    hi = e - 1;
            }
            for (uint32_t k = 0; k < n; k++)
                budget[k] = need[k][d] + (grows[k] ? (uint64_t)(weight[k] * (double)lo) : 0);
        } else {
            for (uint32_t k = 0; k < n; k++)
                budget[k] = (uint64_t)((double)pool * (double)need[k][d] / (double)top);
        }
        for (uint32_t k = 0; k < n; k++)
            held[k][d] = free_dev[d] > budget[k] ? free_dev[d] - budget[k] : 0;
    }
}

/* The most models that fit at once, each at its smallest: the largest m
 * whose m largest needs fit every device's pool. */
static uint32_t most_at_once(uint32_t n, uint64_t need[][GGFIT_MAX_DEVICES],
                             const uint64_t *free_dev, uint64_t margin)
{
    uint32_t m = n;
    for (; m > 0; m--) {
        bool fits = true;
        for (uint32_t d = 0; d < GGFIT_MAX_DEVICES && fits; d++) {
            uint64_t v[GGFIT__PRESET_MODELS];
            for (uint32_t k = 0; k < n; k++)
                v[k] = need[k][d];
            fits = top_sum(v, n, m) + margin <= free_dev[d] || top_sum(v, n, m) == 0;
        }
        if (fits)
            break;
    }
    return m;
}

/* What the machine had free before any child (the first planned child's
 * pools, with what it saw taken given back) into had; false: no child
 * planned. */
static bool free_before(const ggfit_router *out, uint64_t *had, uint64_t *had_host)
{
    for (uint32_t k = 0; k < out->n_children; k++) {
        const ggfit_router_child *c = &out->children[k];
        if (!c->plan)
            continue;
        const ggfit_verdict *v = ggfit__plan_verdict(c->plan);
        for (uint32_t q = 0; q < v->n_pools; q++) {
            const ggfit_pool *pool = &v->pools[q];
            if (pool->kind == GGFIT_POOL_DEVICE && pool->device >= 0 &&
                pool->device < GGFIT_MAX_DEVICES)
                had[pool->device] = pool->free + c->free_held[pool->device];
            else if (pool->kind == GGFIT_POOL_HOST)
                *had_host = pool->free + c->host_held;
        }
        return true;
    }
    return false;
}

/* The most the children hold at once (held, held_host) and whether that
 * is more than the machine had free (over): after each child's start what
 * it saw taken and its own; the load-on-startup children, started
 * together, all of theirs; a set's, any resident of them. */
static void over_of(const router_line *l, ggfit_router *out)
{
    uint64_t had[GGFIT_MAX_DEVICES] = { 0 }, had_host = 0;
    if (!free_before(out, had, &had_host))
        return;
    uint64_t (*dev)[GGFIT_MAX_DEVICES] = ggfit__calloc(GGFIT_ROUTER_MAX, sizeof *dev);
    uint64_t host[GGFIT_ROUTER_MAX] = { 0 }, at_once[GGFIT_MAX_DEVICES + 1] = { 0 };
    uint64_t v[GGFIT_ROUTER_MAX];
    uint32_t model[GGFIT_ROUTER_MAX], n = 0;
    if (!dev)
        return;
    for (uint32_t k = 0; k < out->n_children; k++) {
        const ggfit_router_child *c = &out->children[k];
        if (!c->plan)
            continue;
        memset(dev[n], 0, sizeof dev[n]);
        host[n] = 0;
        holds(c->plan, dev[n], &host[n]);
        model[n] = l->seq[k];
        /* (a set's children saw their shares' complements, not children) */
        for (uint32_t d = 0; d < GGFIT_MAX_DEVICES && !out->set; d++) {
            uint64_t after = c->free_held[d] + dev[n][d];
            at_once[d] = after > at_once[d] ? after : at_once[d];
        }
        uint64_t after = out->set ? 0 : c->host_held + host[n];
        if (after > at_once[GGFIT_MAX_DEVICES])
            at_once[GGFIT_MAX_DEVICES] = after;
        if (!out->set && !c->together)
            continue;   /* not part of a group started at once */
        n++;
    }
    /* the group started at once: all of them; a set's, the largest that
     * can be resident (v per model) */
    for (uint32_t d = 0; d <= GGFIT_MAX_DEVICES; d++) {
        uint64_t group = 0;
        if (out->set) {
            memset(v, 0, sizeof v);
            for (uint32_t k = 0; k < n; k++)
                v[model[k]] = d < GGFIT_MAX_DEVICES ? dev[k][d] : host[k];
            group = resident_most(l, v, out->resident);
        } else {
            for (uint32_t k = 0; k < n; k++)
                group += d < GGFIT_MAX_DEVICES ? dev[k][d] : host[k];
        }
        if (group > at_once[d])
            at_once[d] = group;
        uint64_t free = d < GGFIT_MAX_DEVICES ? had[d] : had_host;
        out->over |= free && at_once[d] > free;
    }
    memcpy(out->held, at_once, sizeof out->held);
    out->held_host = at_once[GGFIT_MAX_DEVICES];
    ggfit_free(dev);
}

/* --priority's "NAME=W,..." into weight[] (1 where not given). */
static ggfit_status weights_of(const router_line *l, const char *list, double *weight,
                               char **err)
{
    for (uint32_t k = 0; k < l->n_models; k++)
        weight[k] = 1.0;
    for (const char *s = list ? list : ""; *s;) {
        size_t len = strcspn(s, ","), name = strcspn(s, "=");
        if (name >= len)
            return ggfit__fail(err, GGFIT_EINVAL, "--priority: '%.*s' is not NAME=WEIGHT "
                                                  "(e.g. coder=2)", (int)(len > 80 ? 80 : len),
                               s);
        uint32_t k = model_find(l, s, name);
        if (k == UINT32_MAX)
            return ggfit__fail(err, GGFIT_EINVAL, "--priority: '%.*s' is not a model of the "
                                                  "%s", (int)(name > 80 ? 80 : name), s,
                               l->swap ? "config" : "preset");
        char num[32], *end;
        size_t nl = len - name - 1;
        snprintf(num, sizeof num, "%.*s", (int)(nl < sizeof num ? nl : sizeof num - 1),
                 s + name + 1);
        double w = strtod(num, &end);
        if (!num[0] || *end || nl >= sizeof num || !(w > 0 && w <= 1000))
            return ggfit__fail(err, GGFIT_EINVAL, "--priority: %.*s: expected a weight above 0 "
                                                  "and at most 1000", (int)(len > 80 ? 80 : len),
                               s);
        weight[k] = w;
        s += len + (s[len] == ',');
    }
    return GGFIT_OK;
}

/* One running child: its model and what it holds. */
typedef struct running {
    uint32_t model, last;      /* last: the step it was last asked for */
    uint64_t dev[GGFIT_MAX_DEVICES], host;
} running;

static ggfit_status router_run(int argc, char **argv, const char *order, bool set,
                               const char *priorities, ggfit_router *out, char **err)
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
    running *run = ggfit__calloc(GGFIT__PRESET_MODELS, sizeof *run);
    ggfit_status rc = !l || !words || !need || !share || !run
                          ? ggfit__fail(err, GGFIT_ENOMEM, "out of memory")
                          : line_read(argc, argv, order, l, out, err);
    uint64_t seen[GGFIT_MAX_DEVICES] = { 0 }, seen_host = 0, free_dev[GGFIT_MAX_DEVICES] = { 0 };
    uint64_t margin = (uint64_t)1024 << 20;   /* -fitt's default, kept once for all */
    bool grows[GGFIT__PRESET_MODELS] = { false };
    double weight[GGFIT__PRESET_MODELS];
    uint32_t n_models = rc ? 0 : l->n_models, n_run = 0;
    if (!rc)
        rc = weights_of(l, priorities, weight, err);
    static char fit_off[] = "-fit", off[] = "off", ngl[] = "-ngl", all[] = "all", c4k[] = "-c",
                n4k[] = "4096", fitt[] = "-fitt", zero[] = "0";
    /* a set: each model's need at its smallest first */
    for (uint32_t j = 0; !rc && set && j < n_models; j++) {
        ggfit_router_child *c = &out->children[j];
        char *why = NULL, *extra[6] = { ngl, all, fit_off, off, c4k, n4k };
        int n = 0;
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
    if (!rc && set) {
        out->resident = out->models_max && out->models_max < n_models ? out->models_max
                                                                        : n_models;
        out->max_fits = l->swap ? n_models : most_at_once(n_models, need, free_dev, margin);
        shares(l, out->resident, need, grows, weight, free_dev, margin, share);
        l->n_seq = n_models;   /* each model once, by name */
        for (uint32_t j = 0; j < n_models; j++)
            l->seq[j] = j;
    }
    uint32_t *seq_of = ggfit__calloc(GGFIT_ROUTER_MAX, sizeof *seq_of);
    if (!rc && !seq_of)
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    for (uint32_t s = 0; !rc && s < l->n_seq; s++) {
        uint32_t j = l->seq[s];
        char stopped_names[256] = "";
        if (!set && l->swap) {
            /* llama-swap stops what the asked model's group evicts, on
             * every request (also when it runs already) */
            bool up[GGFIT__PRESET_MODELS] = { false }, stopped[GGFIT__PRESET_MODELS] = { false };
            for (uint32_t k = 0; k < n_run; k++)
                up[run[k].model] = true;
            ggfit__swap_evicts(l->swap, j, up, stopped);
            for (uint32_t k = 0; k < n_run;) {
                if (!stopped[run[k].model]) {
                    k++;
                    continue;
                }
                size_t len = strlen(stopped_names);
                if (len + 2 < sizeof stopped_names)
                    snprintf(stopped_names + len, sizeof stopped_names - len, "%s%.200s",
                             len ? "," : "", model_name(l, run[k].model));
                run[k] = run[--n_run];
            }
        }
        /* asked for while it runs: nothing starts */
        uint32_t r = 0;
        while (r < n_run && run[r].model != j)
            r++;
        if (!set && r < n_run) {
            run[r].last = s;
            continue;
        }
        seq_of[out->n_children] = j;
        ggfit_router_child *c = &out->children[out->n_children++];
        char *why = NULL, *extra[2] = { fitt, zero };
        int n = 0;
        snprintf(c->name, sizeof c->name, "%s", model_name(l, j));
        c->priority = weight[j];
        snprintf(c->evicted, sizeof c->evicted, "%s", stopped_names);
        ggfit_status crc = child_words(argc, argv, l, j, c, extra, set ? 2 : 0, words, &n, &why);
        memset(seen, 0, sizeof seen);
        seen_host = 0;
        if (set) {
            /* its share: the rest of each device taken; system memory all
             * of theirs together, checked after */
            memcpy(seen, share[j], sizeof seen);
        } else {
            if (out->models_max && n_run >= out->models_max) {
                /* the least recently asked makes room, and has exited
                 * before this one starts (server-models.cpp unload_lru) */
                uint32_t v = 0;
                for (uint32_t k = 1; k < n_run; k++)
                    if (run[k].last < run[v].last)
                        v = k;
                snprintf(c->evicted, sizeof c->evicted, "%s", model_name(l, run[v].model));
                run[v] = run[--n_run];
            }
            c->together = l->startup[j] && s < out->n_startup;
            for (uint32_t k = 0; k < n_run && !c->together; k++) {
                for (uint32_t d = 0; d < GGFIT_MAX_DEVICES; d++)
                    seen[d] += run[k].dev[d];
                seen_host += run[k].host;
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
        running *now = &run[n_run++];
        memset(now, 0, sizeof *now);
        now->model = j;
        now->last = s;
        holds(c->plan, now->dev, &now->host);
        memcpy(c->hold, now->dev, sizeof c->hold);
        c->hold_host = now->host;
    }
    if (!rc) {
        /* the children's models, in order (seq now: one per child) */
        memcpy(l->seq, seq_of, out->n_children * sizeof *seq_of);
        over_of(l, out);
    }
    ggfit_free(seq_of);
    if (l && l->preset) {
        ggfit__preset_free(l->preset);
        ggfit_free(l->preset);
    }
    if (l && l->swap) {
        ggfit__swap_free(l->swap);
        ggfit_free(l->swap);
    }
    ggfit_free(l);
    ggfit_free(words);
    ggfit_free(need);
    ggfit_free(share);
    ggfit_free(run);
    if (rc)
        ggfit_router_free(out);
    return rc;
}

ggfit_status ggfit_router_plan(int argc, char **argv, const char *order, ggfit_router *out,
                               char **err)
{
    return router_run(argc, argv, order, false, NULL, out, err);
}

ggfit_status ggfit_router_fit_set(int argc, char **argv, const char *priorities,
                                  ggfit_router *out, char **err)
{
    return router_run(argc, argv, NULL, true, priorities, out, err);
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

/* s as a YAML double-quoted scalar. */
static void yaml_quoted(ggfit_sb *sb, const char *s)
{
    ggfit__sb_printf(sb, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            ggfit__sb_printf(sb, "\\%c", ch);
        else if (ch < 0x20)
            ggfit__sb_printf(sb, "\\x%02x", ch);
        else
            ggfit__sb_printf(sb, "%c", ch);
    }
    ggfit__sb_printf(sb, "\"");
}

/* "KEY VALUE" on a line of its own, VALUE quoted: key is "  name:" or
 * "      -" (a list's item). */
static void yaml_key(ggfit_sb *sb, const char *key, const char *value)
{
    ggfit__sb_printf(sb, "%s%s ", key, key[strlen(key) - 1] == '-' ? "" : ":");
    yaml_quoted(sb, value);
    ggfit__sb_printf(sb, "\n");
}

/* "KEY:" and its n items, nothing when none. */
static void yaml_list(ggfit_sb *sb, const char *key, const char *const *items, uint32_t n)
{
    if (n)
        ggfit__sb_printf(sb, "%s:\n", key);
    for (uint32_t i = 0; i < n; i++)
        yaml_key(sb, "      -", items[i]);
}

/* w as one POSIX shell word (llama-swap's SanitizeCommand reads cmd so):
 * single-quoted when it holds anything but plain characters; ${PORT}
 * left bare for llama-swap to fill in. */
static void shell_word(ggfit_sb *sb, const char *w)
{
    if (*w && (strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                         "_-+=/.,:@%") == strlen(w) || !strcmp(w, "${PORT}"))) {
        ggfit__sb_printf(sb, "%s", w);
        return;
    }
    ggfit__sb_printf(sb, "'");
    for (; *w; w++)
        ggfit__sb_printf(sb, *w == '\'' ? "'\\''" : "%c", *w);
    ggfit__sb_printf(sb, "'");
}

/* llama-swap's config with each model's cmd given its plan's flags (its
 * own words kept where the plan sets no other value, its port ${PORT}
 * again), and what llama-swap needs to run it: env, aliases, ttl, the
 * groups and the preload list. Macros are written out expanded. */
static char *swap_config(const ggfit_router *r)
{
    ggfit__swap *s = ggfit__calloc(1, sizeof *s);
    char *why = NULL;
    ggfit_sb sb = { 0 };
    if (!s || ggfit__swap_read(r->preset, s, &why)) {
        ggfit_free(why);
        if (s)
            ggfit__swap_free(s);
        ggfit_free(s);
        return NULL;
    }
    ggfit__sb_printf(&sb, "# %s, each model's flags fitted to its share of the machine by "
                          "ggfit (fit off: whichever loads first takes no more)\n", r->preset);
    ggfit__sb_printf(&sb, "startPort: %lld\nhealthCheckTimeout: %lld\nglobalTTL: %lld\n",
                     (long long)s->start_port, (long long)s->health_check_timeout,
                     (long long)s->global_ttl);
    ggfit__sb_printf(&sb, "\nmodels:\n");
    for (uint32_t j = 0; j < s->n_models; j++) {
        const ggfit__swap_model *m = &s->models[j];
        const ggfit_router_child *c = NULL;
        for (uint32_t k = 0; k < r->n_children && !c; k++)
            if (!strcmp(r->children[k].name, m->name))
                c = &r->children[k];
        size_t n = 0;
        char **w = c && c->plan ? ggfit_plan_argv(c->plan, GGFIT_FOR_SERVER, &n) : NULL;
        ggfit__sb_printf(&sb, "  ");
        yaml_quoted(&sb, m->name);
        ggfit__sb_printf(&sb, ":\n");
        if (c && !c->plan)
            ggfit__sb_printf(&sb, "    # not planned: %s\n", c->error);
        /* the program, its words but those the plan's flags set, the plan's */
        ggfit_sb cmd = { 0 };
        int at = 0;
        while (at < m->argc) {
            const char *base = strrchr(m->argv[at], '/');
            base = base ? base + 1 : m->argv[at];
            shell_word(&cmd, m->argv[at++]);
            if (!strncmp(base, "llama-server", 12))
                break;
            ggfit__sb_printf(&cmd, " ");
        }
        char port[24];
        snprintf(port, sizeof port, "%d", m->port);
        for (int i = at; i < m->argc; i++) {
            const char *a = m->argv[i];
            int v = a[0] == '-' ? values_of(a) : 0, row = a[0] == '-' ? row_of(a) : -1;
            bool replaced = false;
            for (size_t k = 0; w && k < n && !replaced && row >= 0; k++)
                replaced = w[k][0] == '-' && row_of(w[k]) == row;
            for (int k = 0; k <= v && i + k < m->argc; k++) {
                const char *word = m->argv[i + k];
                if (replaced)
                    continue;
                ggfit__sb_printf(&cmd, " ");
                shell_word(&cmd, k == 1 && m->port && !strcmp(a, "--port") &&
                                         !strcmp(word, port) ? "${PORT}" : word);
            }
            i += v;
        }
        for (size_t k = 0; w && k < n; k++) {
            ggfit__sb_printf(&cmd, " ");
            shell_word(&cmd, w[k]);
        }
        ggfit_argv_free(w);
        char *line = ggfit__sb_take(&cmd);
        ggfit__sb_printf(&sb, "    cmd: ");
        yaml_quoted(&sb, line ? line : "");
        ggfit__sb_printf(&sb, "\n");
        ggfit_free(line);
        yaml_list(&sb, "    env", (const char *const *)m->env, (uint32_t)m->n_env);
        yaml_list(&sb, "    aliases", (const char *const *)m->aliases, m->n_aliases);
        if (m->ttl)
            ggfit__sb_printf(&sb, "    ttl: %lld\n", (long long)m->ttl);
        if (m->unlisted)
            ggfit__sb_printf(&sb, "    unlisted: true\n");
        if (m->use_model_name && m->use_model_name[0])
            yaml_key(&sb, "    useModelName", m->use_model_name);
        if (m->check_endpoint && strcmp(m->check_endpoint, "/health"))
            yaml_key(&sb, "    checkEndpoint", m->check_endpoint);
        if (m->cmd_stop && m->cmd_stop[0])
            yaml_key(&sb, "    cmdStop", m->cmd_stop);
    }
    bool groups = false;
    for (uint32_t g = 0; g < s->n_groups; g++) {
        const ggfit__swap_group *gr = &s->groups[g];
        if (!strcmp(gr->name, GGFIT__SWAP_DEFAULT_GROUP))
            continue;   /* llama-swap makes it again */
        if (!groups)
            ggfit__sb_printf(&sb, "\ngroups:\n");
        groups = true;
        ggfit__sb_printf(&sb, "  ");
        yaml_quoted(&sb, gr->name);
        ggfit__sb_printf(&sb, ":\n    swap: %s\n    exclusive: %s\n    persistent: %s\n"
                              "    members:\n", gr->swap ? "true" : "false",
                         gr->exclusive ? "true" : "false", gr->persistent ? "true" : "false");
        for (uint32_t i = 0; i < gr->n_members; i++)
            yaml_key(&sb, "      -", s->models[gr->members[i]].name);
    }
    if (s->n_preload) {
        ggfit__sb_printf(&sb, "\nhooks:\n  on_startup:\n");
        yaml_list(&sb, "    preload", (const char *const *)s->preload, s->n_preload);
    }
    ggfit__swap_free(s);
    ggfit_free(s);
    return ggfit__sb_take(&sb);
}

char *ggfit_router_preset(const ggfit_router *r)
{
    if (r->swap)
        return swap_config(r);
    ggfit__preset *p = ggfit__calloc(1, sizeof *p);
    char *why = NULL;
    ggfit_sb sb = { 0 };
    char notes[sizeof r->notes];
    if (!p || models_read(r->preset, r->models_dir, p, notes, sizeof notes, &why)) {
        ggfit_free(why);
        if (p)
            ggfit__preset_free(p);
        ggfit_free(p);
        return NULL;
    }
    ggfit__sb_printf(&sb, "; %s%s%s, each model's flags fitted to its share of the machine "
                          "by ggfit (fit off: whichever loads first takes no more)\n",
                     r->preset, r->preset[0] && r->models_dir[0] ? " and " : "", r->models_dir);
    if (r->resident < r->n_models)
        ggfit__sb_printf(&sb, "; any %u of the %u at once: run the router with --models-max "
                              "%u\n", r->resident, r->n_models, r->resident);
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
        /* the files its --models-dir entry gave, where its keys name none */
        static const char *const dir_keys[GGFIT__DIR_KEYS] = { "model", "mmproj",
                                                               "model-draft" };
        for (int d = 0; d < GGFIT__DIR_KEYS; d++) {
            bool named = !s->from_dir[d];
            for (uint32_t i = 0; i < s->n_kv && !named; i++)
                named = row_of(s->kv[i].key) == row_of(dir_keys[d]);
            for (uint32_t i = 0; i < p->global.n_kv && !named; i++)
                named = row_of(p->global.kv[i].key) == row_of(dir_keys[d]);
            if (!named)
                ggfit__sb_printf(&sb, "%s = %s\n", dir_keys[d], s->from_dir[d]);
        }
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
