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

/* The models started, in order: the load-on-startup ones (startup[k]),
 * with the router; then those asked, names comma-separated, a name as
 * often as it is asked for; then the models never named, each by name
 * (llama.cpp's order). seq receives the preset's model indices, *n of
 * them (GGFIT_ROUTER_MAX at most). */
static ggfit_status order_of(const ggfit__preset *p, const char *order, const bool *startup,
                             uint32_t *seq, uint32_t *n, char **err)
{
    bool taken[GGFIT__PRESET_MODELS] = { false };
    *n = 0;
    /* the load-on-startup models, started with the router, whatever is
     * asked after */
    for (uint32_t k = 0; k < p->n_models; k++)
        if (startup[k]) {
            taken[k] = true;
            seq[(*n)++] = k;
        }
    for (const char *s = order ? order : ""; *s;) {
        size_t len = strcspn(s, ",");
        uint32_t k = 0;
        while (k < p->n_models &&
               (strlen(p->models[k].name) != len || strncmp(p->models[k].name, s, len)))
            k++;
        if (k == p->n_models)
            return ggfit__fail(err, GGFIT_EINVAL, "--order: '%.*s' is not a model of the "
                                                  "preset", (int)(len > 80 ? 80 : len), s);
        if (*n == GGFIT_ROUTER_MAX)
            return ggfit__fail(err, GGFIT_EINVAL, "--order: more than %d requests",
                               GGFIT_ROUTER_MAX);
        taken[k] = true;
        seq[(*n)++] = k;
        s += len + (s[len] == ',');
    }
    for (uint32_t k = 0; k < p->n_models && *n < GGFIT_ROUTER_MAX; k++)
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
    ggfit__preset *preset;     /* the preset's models and the directory's */
    uint32_t seq[GGFIT_ROUTER_MAX];  /* the models asked for, in order */
    uint32_t n_seq;
    bool startup[GGFIT__PRESET_MODELS];
} router_line;

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

static ggfit_status line_read(int argc, char **argv, const char *order, router_line *l,
                              ggfit_router *out, char **err)
{
    l->split = 0;
    while (l->split < argc && strcmp(argv[l->split], "--"))
        l->split++;
    l->n_router = 0;
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
                                              "[its flags]");
    if (!(l->preset = ggfit__calloc(1, sizeof *l->preset)))
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_status rc = models_read(out->preset, out->models_dir, l->preset, out->notes,
                                  sizeof out->notes, err);
    if (!rc && !l->preset->n_models)
        rc = ggfit__fail(err, GGFIT_EINVAL, "%s: no model (a [name] section with model = "
                                            "FILE, or a DIR/NAME.gguf)",
                         out->preset[0] ? out->preset : out->models_dir);
    out->n_models = rc ? 0 : l->preset->n_models;
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
        rc = order_of(l->preset, order, l->startup, l->seq, &l->n_seq, err);
    return rc;
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
    ggfit_status rc = ggfit__preset_args(l->preset, j, pw, sizeof pw / sizeof pw[0],
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

/* The set's shares (ggfit_router_fit_set): each model alone at its
 * smallest (its own context, else 4096, every layer on the GPUs, fit off)
 * needs need[k][d]; a device's free memory less its one margin is shared so
 * that any m of the n models fit at once: each model its need and an equal
 * part e of what is left (the models whose context can grow), e the
 * largest with the m largest shares within the pool; or shares in
 * proportion to the needs when the m largest needs alone are more than
 * the pool. held[k][d] is then what model k's fit must see taken. */
static void shares(uint32_t n, uint32_t m, uint64_t need[][GGFIT_MAX_DEVICES],
                   const bool *grows, const uint64_t *free_dev, uint64_t margin,
                   uint64_t held[][GGFIT_MAX_DEVICES])
{
    for (uint32_t d = 0; d < GGFIT_MAX_DEVICES; d++) {
        uint64_t pool = free_dev[d] > margin ? free_dev[d] - margin : 0;
        uint64_t v[GGFIT__PRESET_MODELS], budget[GGFIT__PRESET_MODELS];
        for (uint32_t k = 0; k < n; k++)
            v[k] = need[k][d];
        uint64_t top = top_sum(v, n, m);
        if (top <= pool) {
            /* the largest e with top_sum(need + e on the growing) <= pool */
            uint64_t lo = 0, hi = pool - top;
            while (lo < hi) {
                uint64_t e = lo + (hi - lo + 1) / 2;
                for (uint32_t k = 0; k < n; k++)
                    v[k] = need[k][d] + (grows[k] ? e : 0);
                if (top_sum(v, n, m) <= pool)
                    lo = e;
                else
                    hi = e - 1;
            }
            for (uint32_t k = 0; k < n; k++)
                budget[k] = need[k][d] + (grows[k] ? lo : 0);
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
static void over_of(ggfit_router *out)
{
    uint64_t had[GGFIT_MAX_DEVICES] = { 0 }, had_host = 0;
    if (!free_before(out, had, &had_host))
        return;
    uint64_t (*dev)[GGFIT_MAX_DEVICES] = ggfit__calloc(GGFIT_ROUTER_MAX, sizeof *dev);
    uint64_t host[GGFIT_ROUTER_MAX] = { 0 }, at_once[GGFIT_MAX_DEVICES + 1] = { 0 };
    uint64_t v[GGFIT_ROUTER_MAX];
    uint32_t n = 0;
    if (!dev)
        return;
    for (uint32_t k = 0; k < out->n_children; k++) {
        const ggfit_router_child *c = &out->children[k];
        if (!c->plan)
            continue;
        memset(dev[n], 0, sizeof dev[n]);
        host[n] = 0;
        holds(c->plan, dev[n], &host[n]);
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
    /* the group started at once: all of them (a set: any resident) */
    uint32_t m = out->set ? out->resident : n;
    for (uint32_t d = 0; d <= GGFIT_MAX_DEVICES; d++) {
        for (uint32_t k = 0; k < n; k++)
            v[k] = d < GGFIT_MAX_DEVICES ? dev[k][d] : host[k];
        uint64_t group = top_sum(v, n, m);
        if (group > at_once[d])
            at_once[d] = group;
        uint64_t free = d < GGFIT_MAX_DEVICES ? had[d] : had_host;
        out->over |= free && at_once[d] > free;
    }
    memcpy(out->held, at_once, sizeof out->held);
    out->held_host = at_once[GGFIT_MAX_DEVICES];
    ggfit_free(dev);
}

/* One running child: its model and what it holds. */
typedef struct running {
    uint32_t model, last;      /* last: the step it was last asked for */
    uint64_t dev[GGFIT_MAX_DEVICES], host;
} running;

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
    running *run = ggfit__calloc(GGFIT__PRESET_MODELS, sizeof *run);
    ggfit_status rc = !l || !words || !need || !share || !run
                          ? ggfit__fail(err, GGFIT_ENOMEM, "out of memory")
                          : line_read(argc, argv, order, l, out, err);
    uint64_t seen[GGFIT_MAX_DEVICES] = { 0 }, seen_host = 0, free_dev[GGFIT_MAX_DEVICES] = { 0 };
    uint64_t margin = (uint64_t)1024 << 20;   /* -fitt's default, kept once for all */
    bool grows[GGFIT__PRESET_MODELS] = { false };
    uint32_t n_models = rc ? 0 : l->preset->n_models, n_run = 0;
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
        out->max_fits = most_at_once(n_models, need, free_dev, margin);
        shares(n_models, out->resident, need, grows, free_dev, margin, share);
        l->n_seq = n_models;   /* each model once, by name */
        for (uint32_t j = 0; j < n_models; j++)
            l->seq[j] = j;
    }
    for (uint32_t s = 0; !rc && s < l->n_seq; s++) {
        uint32_t j = l->seq[s];
        /* asked for while it runs: nothing starts */
        uint32_t r = 0;
        while (r < n_run && run[r].model != j)
            r++;
        if (!set && r < n_run) {
            run[r].last = s;
            continue;
        }
        ggfit_router_child *c = &out->children[out->n_children++];
        char *why = NULL, *extra[2] = { fitt, zero };
        int n = 0;
        snprintf(c->name, sizeof c->name, "%s", l->preset->models[j].name);
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
                snprintf(c->evicted, sizeof c->evicted, "%s",
                         l->preset->models[run[v].model].name);
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
    }
    if (!rc)
        over_of(out);
    if (l && l->preset) {
        ggfit__preset_free(l->preset);
        ggfit_free(l->preset);
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
