/*
 * search.c - plans other than llama.cpp's, judged by their predicted
 * speed: --objective speed (the fastest plan that fits, beside llama.cpp's
 * own) and ggfit sweep (memory and speed against the context, -ngl or the
 * blocks whose experts stay in system RAM).
 *
 * Every plan tried is projected with its placement, judged on the whole
 * machine (ggfit_verdict_of: the devices' margins and system memory) and
 * given its speed (ggfit_speed_of).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "plan/plan.h"
#include "remote/remote.h"
#include "speed/speed.h"

/* ---- one plan tried ------------------------------------------------------ */

/* What a tried plan is judged with, and scratch space for it. */
typedef struct judge {
    const ggfit_model *m;
    const ggfit_device *devs;
    size_t n;
    const ggfit_host_mem *host;
    const ggfit_fit_options *fo;
    const ggfit_speed_options *so;
    ggfit_projection pr;
    ggfit_speed sp;
    ggfit_verdict v;
} judge;

typedef struct tried {
    bool fits;                /* the whole machine holds it */
    bool devices_fit;         /* every device keeps its margin */
    uint32_t n_ctx;
    int32_t n_gpu_layers;     /* offloaded, output layer included */
    double pp_tps, tg_tps;
} tried;

static ggfit_status judge_params(judge *j, const ggfit_params *p, tried *t, char **err)
{
    memset(t, 0, sizeof *t);
    ggfit_status rc = ggfit__speed_of_params(j->m, p, j->devs, j->n, j->host, j->so, &j->pr,
                                             &j->sp, err);
    if (!rc)
        rc = ggfit_verdict_of(j->m, p, &j->pr, j->devs, j->n, j->host, j->fo, &j->v, err);
    if (rc)
        return rc;
    t->fits = j->v.status == GGFIT_VERDICT_FITS;
    t->devices_fit = true;
    for (uint32_t i = 0; i < j->v.n_pools; i++)
        if (j->v.pools[i].kind != GGFIT_POOL_HOST && j->v.pools[i].short_by)
            t->devices_fit = false;
    t->n_ctx = j->pr.n_ctx;
    t->n_gpu_layers = j->pr.n_gpu_layers;
    t->pp_tps = j->sp.pp_tps;
    t->tg_tps = j->sp.tg_tps;
    return GGFIT_OK;
}

static uint32_t default_min_ctx(const ggfit_model *m, uint32_t asked)
{
    uint32_t train = ggfit_model_hparams(m)->n_ctx_train;
    if (asked)
        return train && asked > train ? train : asked;
    return train && train < 4096 ? train : 4096;
}

/* p with -ngl k (whole layers, llama.cpp's split), no expert overrides */
static ggfit_params with_layers(const ggfit_params *base, int32_t k)
{
    ggfit_params p = *base;
    p.n_gpu_layers = k;
    p.set_n_gpu_layers = true;
    return p;
}

/* p with every layer offloaded and the experts of blocks 0..k-1 in RAM */
static ggfit_params with_cpu_moe(const ggfit_params *base, uint32_t k)
{
    ggfit_params p = *base;
    p.n_gpu_layers = GGFIT_NGL_ALL;
    p.set_n_gpu_layers = true;
    p.cpu_moe = false;
    p.n_cpu_moe = k;
    return p;
}

static ggfit_params with_ctx(const ggfit_params *base, uint32_t n_ctx)
{
    ggfit_params p = *base;
    p.n_ctx = n_ctx;
    p.set_n_ctx = true;
    return p;
}

/* ---- --objective speed ----------------------------------------------------- */

typedef struct search {
    judge *j;
    const ggfit_fastest_options *o;
    ggfit_fastest *out;
    ggfit_params best;        /* the fastest found that fits */
    double best_score;
    bool have_best;
} search;

static double score(const ggfit_fastest_options *o, const tried *t)
{
    return o->objective == GGFIT_OBJECTIVE_PP ? t->pp_tps : t->tg_tps;
}

/* p, placed as how says (its placement and variant), judged and kept
 * among the candidates, and as the best when it beats it. */
static ggfit_status consider(search *s, const ggfit_params *p, const ggfit_fastest_candidate *how,
                             char **err)
{
    tried t;
    ggfit_status rc = judge_params(s->j, p, &t, err);
    if (rc)
        return rc;
    if (s->out->n_candidates < GGFIT_MAX_CANDIDATES) {
        ggfit_fastest_candidate *c = &s->out->candidates[s->out->n_candidates++];
        *c = *how;
        c->fits = t.fits;
        c->n_ctx = t.n_ctx;
        c->n_gpu_layers = t.n_gpu_layers;
        c->pp_tps = t.pp_tps;
        c->tg_tps = t.tg_tps;
    }
    if (t.fits && (!s->have_best || score(s->o, &t) > s->best_score)) {
        s->best = *p;
        s->best_score = score(s->o, &t);
        s->have_best = true;
        s->out->best_own = false;
        s->out->best_how = *how;
    }
    return GGFIT_OK;
}

/* The largest k in [lo, hi] whose -ngl k keeps every device's margin
 * (more layers on the GPUs take more of their memory), or -1. */
static ggfit_status most_layers(judge *j, const ggfit_params *base, int32_t lo, int32_t hi,
                                int32_t *out, char **err)
{
    tried t;
    *out = -1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        ggfit_params p = with_layers(base, mid);
        ggfit_status rc = judge_params(j, &p, &t, err);
        if (rc)
            return rc;
        if (t.devices_fit) {
            *out = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return GGFIT_OK;
}

/* The smallest k in [0, n_layer] whose -ncmoe k keeps every device's
 * margin, or -1. */
static ggfit_status fewest_cpu_moe(judge *j, const ggfit_params *base, uint32_t n_layer,
                                   int32_t *out, char **err)
{
    tried t;
    int32_t lo = 0, hi = (int32_t)n_layer;
    *out = -1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        ggfit_params p = with_cpu_moe(base, (uint32_t)mid);
        ggfit_status rc = judge_params(j, &p, &t, err);
        if (rc)
            return rc;
        if (t.devices_fit) {
            *out = mid;
            hi = mid - 1;
        } else {
            lo = mid + 1;
        }
    }
    return GGFIT_OK;
}

/* -ngl all with -ts giving each device c[d] layers where placed[d], the
 * rest of the n layers spread over the others by their free memory. */
static ggfit_params with_split(const judge *j, const ggfit_params *base, const uint32_t *c,
                               const bool *placed, uint32_t n)
{
    ggfit_params p = with_layers(base, GGFIT_NGL_ALL);
    double rest = n, free_rest = 0;
    for (size_t d = 0; d < j->n; d++) {
        if (placed[d])
            rest -= c[d];
        else
            free_rest += (double)j->devs[d].free;
    }
    for (size_t d = 0; d < j->n; d++)
        p.tensor_split[d] = placed[d] ? (float)c[d]
                            : free_rest > 0 ? (float)(rest * (double)j->devs[d].free / free_rest)
                                            : 0.0f;
    p.n_tensor_split = (uint32_t)j->n;
    p.set_tensor_split = true;
    return p;
}

/* Every layer on the GPUs, the fastest (by bandwidth) filled first: the
 * devices run in series, so a layer costs its bytes over the bandwidth of
 * the device that holds it, and llama.cpp's split by free memory gives a
 * slow large card as much as a fast one. *ok false when it does not fit. */
static ggfit_status fastest_first(judge *j, const ggfit_params *base, uint32_t n_layer,
                                  ggfit_params *out, bool *ok, char **err)
{
    uint32_t c[GGFIT_MAX_DEVICES] = { 0 };
    bool placed[GGFIT_MAX_DEVICES] = { false };
    uint32_t n = n_layer + 1, left = n;
    tried t;
    *ok = false;
    for (size_t k = 0; k + 1 < j->n; k++) {
        size_t d = j->n;
        for (size_t e = 0; e < j->n; e++)
            if (!placed[e] && (d == j->n || j->devs[e].bandwidth_gbs > j->devs[d].bandwidth_gbs))
                d = e;
        placed[d] = true;
        int32_t lo = 0, hi = (int32_t)left, best = -1;
        while (lo <= hi) {
            int32_t mid = lo + (hi - lo + 1) / 2;
            c[d] = (uint32_t)mid;
            ggfit_params p = with_split(j, base, c, placed, n);
            ggfit_status rc = judge_params(j, &p, &t, err);
            if (rc)
                return rc;
            /* this device's pool alone: the others may still be over */
            bool fits = true;
            for (uint32_t i = 0; i < j->v.n_pools; i++)
                if (j->v.pools[i].device == (int32_t)d && j->v.pools[i].short_by)
                    fits = false;
            if (fits) {
                best = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        if (best < 0)
            return GGFIT_OK;
        c[d] = (uint32_t)best;
        left -= (uint32_t)best;
    }
    *out = with_split(j, base, c, placed, n);
    ggfit_status rc = judge_params(j, out, &t, err);
    *ok = !rc && t.devices_fit;
    return rc;
}

/* The plans of one variant (flash attention, cache types) at context
 * n_ctx: llama.cpp's fit at that context, the most whole layers on the
 * GPUs, and (MoE) every layer on the GPUs with the fewest blocks' experts
 * in RAM. Placement flags the user set are kept: only the unset vary. */
static ggfit_status variant(search *s, const ggfit_params *v, ggfit_variant tag, char **err)
{
    judge *j = s->j;
    const ggfit_hparams *hp = ggfit_model_hparams(j->m);
    ggfit_fastest_candidate how = { .variant = tag, .ctx_tried = v->n_ctx };
    ggfit_status rc;
    ggfit_fit_options fo = *j->fo;
    fo.check_only = false;
    fo.fit_around = false;
    fo.no_log = true;   /* only the flags are kept */
    ggfit_fit_result fr;
    if ((rc = ggfit_fit(j->m, v, j->devs, j->n, &fo, &fr, err)))
        return rc;
    bool fitted = fr.status != GGFIT_FIT_FAILED;
    ggfit_params fp = fr.params;
    ggfit_fit_result_clear(&fr);
    if (fitted) {
        how.placement = GGFIT_PLACED_BY_FIT;
        if ((rc = consider(s, &fp, &how, err)))
            return rc;
    }
    if (!j->n || v->set_n_gpu_layers || v->set_overrides || v->cpu_moe || v->n_cpu_moe)
        return GGFIT_OK;
    int32_t k;
    if ((rc = most_layers(j, v, 0, (int32_t)hp->n_layer + 1, &k, err)))
        return rc;
    if (k >= 0) {
        ggfit_params p = with_layers(v, k);
        how.placement = GGFIT_PLACED_NGL;
        how.layers = k;
        if ((rc = consider(s, &p, &how, err)))
            return rc;
    }
    if (j->n >= 2 && !v->set_tensor_split && v->split_mode == GGFIT_SPLIT_LAYER) {
        ggfit_params p;
        bool ok;
        if ((rc = fastest_first(j, v, hp->n_layer, &p, &ok, err)))
            return rc;
        if (ok) {
            ggfit_fastest_candidate ts = how;
            ts.placement = GGFIT_PLACED_TS;
            ts.n_split = (uint32_t)j->n;
            memcpy(ts.tensor_split, p.tensor_split, j->n * sizeof p.tensor_split[0]);
            if ((rc = consider(s, &p, &ts, err)))
                return rc;
        }
    }
    if (hp->n_expert && hp->n_expert_used) {
        if ((rc = fewest_cpu_moe(j, v, hp->n_layer, &k, err)))
            return rc;
        if (k >= 0) {
            ggfit_params p = with_cpu_moe(v, (uint32_t)k);
            how.placement = GGFIT_PLACED_NCMOE;
            how.layers = k;
            if ((rc = consider(s, &p, &how, err)))
                return rc;
        }
    }
    return GGFIT_OK;
}

/* The largest context (a multiple of 256, up to hi) at which p's
 * placement still fits the whole machine. */
static ggfit_status grow_ctx(judge *j, const ggfit_params *p, uint32_t lo, uint32_t hi,
                             uint32_t *out, char **err)
{
    tried t;
    *out = lo;
    uint32_t a = lo / 256 + 1, b = hi / 256;
    while (a <= b) {
        uint32_t mid = a + (b - a) / 2;
        ggfit_params q = with_ctx(p, mid * 256);
        ggfit_status rc = judge_params(j, &q, &t, err);
        if (rc)
            return rc;
        if (t.fits) {
            *out = mid * 256;
            a = mid + 1;
        } else {
            b = mid - 1;
        }
    }
    return GGFIT_OK;
}

void ggfit_fastest_options_init(ggfit_fastest_options *o)
{
    memset(o, 0, sizeof *o);
    o->objective = GGFIT_OBJECTIVE_TG;
    ggfit_speed_options_init(&o->speed);
}

/* Whether the plan prints flags to run (ggfit_plan_args is not ""). */
static bool prints_flags(const ggfit_plan *pl)
{
    return pl->has_alternative || (!pl->print_memory && pl->verdict.status == GGFIT_VERDICT_FITS);
}

static ggfit_status own_speed(judge *j, const ggfit_plan *pl, ggfit_plan_speed *out, char **err)
{
    memset(out, 0, sizeof *out);
    if (!prints_flags(pl))
        return GGFIT_OK;
    ggfit_status rc = ggfit__speed_of_params(j->m, ggfit__plan_chosen(pl), j->devs, j->n,
                                             j->host, j->so, &j->pr, &j->sp, err);
    if (!rc)
        ggfit__plan_speed_brief(&j->sp, out);
    return rc;
}

static ggfit_status fastest(ggfit_request *r, const ggfit_model *m,
                            const ggfit_fastest_options *o, ggfit_fastest *out, judge *j,
                            char **err)
{
    ggfit_status rc;
    const ggfit_plan *own = &out->own;
    j->m = m;
    j->devs = own->devices;
    j->n = own->n_devices;
    j->host = &own->host;
    j->fo = &own->fit_options;
    j->so = &o->speed;
    if ((rc = own_speed(j, own, &out->own_speed, err)))
        return rc;
    search s = { j, o, out, { 0 }, 0, false };
    /* llama.cpp's own plan first: another must beat it to be chosen */
    if (prints_flags(own)) {
        s.best = *ggfit__plan_chosen(own);
        s.best_score = o->objective == GGFIT_OBJECTIVE_PP ? out->own_speed.pp_tps
                                                          : out->own_speed.tg_tps;
        s.best_score *= 1.005;   /* ties, within the model's rounding, stay llama.cpp's */
        s.have_best = true;
        out->best_own = true;
    }
    bool own_best = s.have_best;
    const ggfit_params *given = &own->asked;
    uint32_t n_ctx = default_min_ctx(m, given->set_n_ctx ? given->n_ctx : o->n_ctx_min);
    out->n_ctx_min = n_ctx;
    ggfit_params base = with_ctx(given, n_ctx);
    /* the variants: as given; flash attention off when it was left to
     * auto; with o->quant_cache and the cache types unset, a q8_0 cache
     * (a quantized V needs flash attention) */
    if ((rc = variant(&s, &base, GGFIT_VARIANT_GIVEN, err)))
        return rc;
    if (base.flash_attn == GGFIT_FA_AUTO) {
        ggfit_params v = base;
        v.flash_attn = GGFIT_FA_OFF;
        if ((rc = variant(&s, &v, GGFIT_VARIANT_FA_OFF, err)))
            return rc;
    }
    if (o->quant_cache && base.type_k == GGFIT_TYPE_F16 && base.type_v == GGFIT_TYPE_F16 &&
        base.flash_attn != GGFIT_FA_OFF) {
        ggfit_params v = base;
        v.type_k = v.type_v = GGFIT_TYPE_Q8_0;
        if ((rc = variant(&s, &v, GGFIT_VARIANT_Q8_CACHE, err)))
            return rc;
    }
    out->found = s.have_best;
    if (!s.have_best)
        return GGFIT_OK;
    out->faster = !own_best || !out->best_own;
    if (!out->faster) {
        out->best_speed = out->own_speed;
        return GGFIT_OK;
    }
    /* the winner's placement at the largest context it leaves room for */
    uint32_t train = ggfit_model_hparams(m)->n_ctx_train;
    uint32_t hi = given->set_n_ctx ? n_ctx : (train ? train : n_ctx);
    uint32_t grown = n_ctx;
    if (hi > n_ctx && (rc = grow_ctx(j, &s.best, n_ctx, hi, &grown, err)))
        return rc;
    ggfit_params best = with_ctx(&s.best, grown);
    /* as a plan of its own: the flags as given, checked, not fitted */
    ggfit_request sub = *r;
    sub.params = best;
    sub.print_memory = false;
    sub.fit.check_only = true;
    sub.fit.fit_around = false;   /* a -md draft stays: its bytes were in the judging */
    memcpy(out->best.devices, own->devices, sizeof own->devices);
    out->best.n_devices = own->n_devices;
    if ((rc = ggfit__plan_model(&sub, m, "", &out->best, err)))
        return rc;
    out->has_best_plan = true;
    return own_speed(j, &out->best, &out->best_speed, err);
}

ggfit_status ggfit_request_fastest(ggfit_request *r, const ggfit_fastest_options *o,
                                   ggfit_fastest *out, char **err)
{
    if (err)
        *err = NULL;
    if (!r || !o || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_request_fastest: NULL argument");
    memset(out, 0, sizeof *out);
    out->objective = o->objective;
    ggfit_status rc = ggfit_request_plan(r, &out->own, err);
    if (rc)
        return rc;
    out->has_own = true;
    if (o->objective == GGFIT_OBJECTIVE_CONTEXT)
        return GGFIT_OK;   /* llama.cpp's own objective: its plan */
    ggfit_model *m = NULL;
    char mmproj[512] = "";
    judge *j = ggfit__calloc(1, sizeof *j);
    if (!j)
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    else if (!(rc = ggfit__request_model(r, &m, mmproj, sizeof mmproj, err)))
        rc = fastest(r, m, o, out, j, err);
    ggfit_free(j);
    ggfit_model_free(m);
    if (rc)
        ggfit_fastest_free(out);
    return rc;
}

void ggfit_fastest_free(ggfit_fastest *f)
{
    if (!f)
        return;
    if (f->has_own)
        ggfit_plan_free(&f->own);
    if (f->has_best_plan)
        ggfit_plan_free(&f->best);
    f->has_own = f->has_best_plan = false;
}

/* ---- ggfit sweep ------------------------------------------------------------ */

/* Judges p as a sweep point: memory per pool, speeds at depth 0 and with
 * the cache full. */
static ggfit_status sweep_point(judge *j, const ggfit_params *p, ggfit_sweep *s,
                                ggfit_sweep_point *pt, char **err)
{
    tried t;
    ggfit_status rc = judge_params(j, p, &t, err);
    if (rc)
        return rc;
    if (j->sp.host_used && !s->host_used) {   /* the same figure for every point */
        s->host_used = true;
        s->host_bw_gbs = j->sp.host_bw_gbs;
        snprintf(s->host_bw_from, sizeof s->host_bw_from, "%s", j->sp.host_bw_from);
    }
    pt->fits = t.fits;
    pt->n_ctx = t.n_ctx;
    pt->n_gpu_layers = t.n_gpu_layers;
    pt->pp_tps = t.pp_tps;
    pt->tg_tps = t.tg_tps;
    for (uint32_t i = 0; i < j->v.n_pools && i < GGFIT_MAX_POOLS; i++)
        pt->used[i] = j->v.pools[i].used;
    ggfit_speed_options full = *j->so;
    full.depth = t.n_ctx > full.n_gen ? t.n_ctx - full.n_gen : 0;
    if ((rc = ggfit__speed_of_params(j->m, p, j->devs, j->n, j->host, &full, &j->pr, &j->sp, err)))
        return rc;
    pt->tg_tps_full = j->sp.tg_tps;
    return GGFIT_OK;
}

static ggfit_status sweep_ctx(judge *j, const ggfit_params *given, ggfit_sweep *out, char **err)
{
    ggfit_fit_options fo = *j->fo;
    fo.check_only = false;
    fo.fit_around = false;
    fo.no_log = true;   /* only the flags are kept */
    uint32_t train = out->n_ctx_train ? out->n_ctx_train : 4096;
    for (uint32_t c = 512;; c = c * 2 > train && c < train ? train : c * 2) {
        if (c > train || out->n_points == GGFIT_MAX_SWEEP)
            break;
        ggfit_sweep_point *pt = &out->points[out->n_points++];
        ggfit_params p = with_ctx(given, c);
        ggfit_fit_result fr;
        ggfit_status rc = ggfit_fit(j->m, &p, j->devs, j->n, &fo, &fr, err);
        if (rc)
            return rc;
        pt->x = c;
        pt->fitted = fr.status != GGFIT_FIT_FAILED;
        p = fr.params;
        ggfit_fit_result_clear(&fr);
        if ((rc = sweep_point(j, &p, out, pt, err)))
            return rc;
        pt->fits = pt->fits && pt->fitted;
        if (c == train)
            break;
    }
    return GGFIT_OK;
}

static ggfit_status sweep_layers(judge *j, const ggfit_params *given, ggfit_sweep_axis axis,
                                 ggfit_sweep *out, char **err)
{
    uint32_t hi = axis == GGFIT_SWEEP_NGL ? out->n_layer + 1 : out->n_layer;
    uint32_t step = hi / (GGFIT_MAX_SWEEP - 2) + 1;
    ggfit_params base = with_ctx(given, out->n_ctx);
    for (uint32_t k = 0; out->n_points < GGFIT_MAX_SWEEP; k = k + step > hi && k < hi ? hi : k + step) {
        ggfit_sweep_point *pt = &out->points[out->n_points++];
        ggfit_params p = axis == GGFIT_SWEEP_NGL ? with_layers(&base, (int32_t)k)
                                                 : with_cpu_moe(&base, k);
        pt->x = k;
        pt->fitted = true;
        ggfit_status rc = sweep_point(j, &p, out, pt, err);
        if (rc || k >= hi)
            return rc;
    }
    return GGFIT_OK;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

ggfit_status ggfit_request_sweep(ggfit_request *r, ggfit_sweep_axis axis,
                                 const ggfit_speed_options *o, ggfit_sweep *out, char **err)
{
    if (err)
        *err = NULL;
    if (!r || !o || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_request_sweep: NULL argument");
    memset(out, 0, sizeof *out);
    ggfit_plan *pl = ggfit__calloc(1, sizeof *pl);
    judge *j = ggfit__calloc(1, sizeof *j);
    ggfit_model *m = NULL;
    char mmproj[512] = "";
    ggfit_status rc;
    if (!pl || !j) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    /* the plan gives the devices, the host and the flags as the fit takes them */
    if ((rc = ggfit_request_plan(r, pl, err)))
        goto done;
    if ((rc = ggfit__request_model(r, &m, mmproj, sizeof mmproj, err))) {
        ggfit_plan_free(pl);
        goto done;
    }
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    if (axis == GGFIT_SWEEP_NCMOE && !hp->n_expert) {
        ggfit_plan_free(pl);
        rc = ggfit__fail(err, GGFIT_EINVAL, "sweep --over ncmoe: the model has no experts");
        goto done;
    }
    j->m = m;
    j->devs = pl->devices;
    j->n = pl->n_devices;
    j->host = &pl->host;
    j->fo = &pl->fit_options;
    j->so = o;
    out->axis = axis;
    out->llama = pl->llama;
    snprintf(out->model, sizeof out->model, "%s",
             base_name(r->model ? r->model : r->model_url ? r->model_url : r->hf_repo));
    out->n_devices = 0;
    for (size_t d = 0; d < pl->n_devices && d < GGFIT_MAX_DEVICES; d++) {
        const ggfit_device *dv = &pl->devices[d];
        snprintf(out->device_names[d], sizeof out->device_names[d], "%s",
                 dv->description[0] ? dv->description : dv->name);
        out->device_total[d] = dv->total;
        out->n_devices++;
    }
    out->host_free = pl->host.free;
    out->n_layer = hp->n_layer;
    out->n_ctx_train = hp->n_ctx_train;
    out->n_prompt = o->n_prompt;
    out->n_gen = o->n_gen;
    out->n_ctx = default_min_ctx(m, pl->asked.set_n_ctx ? pl->asked.n_ctx : 0);
    out->n_pools = pl->verdict.n_pools;
    for (uint32_t i = 0; i < out->n_pools; i++) {
        const ggfit_pool *p = &pl->verdict.pools[i];
        snprintf(out->pool_names[i], sizeof out->pool_names[i], "%s", p->name);
        out->pool_limits[i] = p->free > p->margin ? p->free - p->margin : 0;
        out->pool_host[i] = p->kind == GGFIT_POOL_HOST;
    }
    rc = axis == GGFIT_SWEEP_CTX ? sweep_ctx(j, &pl->asked, out, err)
                                 : sweep_layers(j, &pl->asked, axis, out, err);
    ggfit_plan_free(pl);
done:
    ggfit_model_free(m);
    ggfit_free(pl);
    ggfit_free(j);
    return rc;
}
