/*
 * nearest.c - flags as constraints, not aborts. llama.cpp's fit stops when
 * the user set -ngl, -ts, -ot, -cmoe or -ncmoe ("n_gpu_layers already set
 * by user to 99, abort") and loads the flags as given; when those do not
 * fit, the user learns nothing more. Here the flags as given are kept and
 * the nearest changes that make them fit are found, one flag first, then
 * two, each one projected and judged on the whole machine:
 *
 *   fewer GPU layers  the largest -ngl below the one given
 *   less context      the largest -c (a multiple of 256) below the one used
 *   a smaller cache   -ctk q8_0 -ctv q8_0 (with -fa on where it was off)
 *   experts in RAM    the smallest -ncmoe N (MoE models)
 *   two at once       the q8_0 cache with the largest context that fits
 *
 * and, where the given flags send experts to system RAM (-cmoe, -ot
 * ...exps...=CPU) and the host is what runs short, those flags replaced:
 * the smallest -ncmoe N in their place, which keeps the rest of the
 * experts on the GPUs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/params.h"
#include "verdict/verdict.h"

typedef struct search {
    const ggfit_model *m;
    const ggfit_device *devs;
    size_t n;
    const ggfit_host_mem *host;
    const ggfit_fit_options *opt;
    ggfit_projection pr;
    ggfit_verdict v;
    ggfit_params scratch;     /* add's, for changes past the caller's room */
    ggfit_params replaced;    /* the flags without the given expert placement */
    char **err;
} search;

/* Whether p fits the whole machine (or, with devices_only, whether every
 * device keeps its margin: what moving layers or experts changes
 * monotonically); *left: bytes left on the tightest device or pool. */
static ggfit_status fits_on(search *s, const ggfit_params *p, bool devices_only, bool *ok,
                            uint64_t *left);

static ggfit_status fits(search *s, const ggfit_params *p, bool *ok, uint64_t *left)
{
    return fits_on(s, p, false, ok, left);
}

static ggfit_status fits_on(search *s, const ggfit_params *p, bool devices_only, bool *ok,
                            uint64_t *left)
{
    ggfit_status rc = ggfit_project(s->m, p, s->devs, s->n, &s->pr, NULL, s->err);
    *ok = false;
    if (rc == GGFIT_EINVAL || rc == GGFIT_ELIMIT || rc == GGFIT_EUNSUPPORTED) {
        /* a combination llama.cpp refuses (a quantized V cache without
         * flash attention, ...): not a change to propose */
        if (s->err) {
            ggfit_free(*s->err);
            *s->err = NULL;
        }
        return GGFIT_OK;
    }
    if (rc || (rc = ggfit__verdict_quick(s->m, p, &s->pr, s->devs, s->n, s->host, s->opt, &s->v,
                                         s->err)))
        return rc;
    *ok = s->v.status == GGFIT_VERDICT_FITS;
    if (devices_only) {
        *ok = true;
        for (uint32_t i = 0; i < s->v.n_pools; i++)
            if (s->v.pools[i].kind == GGFIT_POOL_DEVICE && s->v.pools[i].short_by)
                *ok = false;
    }
    uint64_t least = UINT64_MAX;
    for (uint32_t i = 0; i < s->v.n_pools; i++) {
        int64_t l = s->v.pools[i].free_after - (int64_t)s->v.pools[i].margin;
        if (s->v.pools[i].total && l >= 0 && (uint64_t)l < least)
            least = (uint64_t)l;
    }
    *left = least == UINT64_MAX ? 0 : least;
    return GGFIT_OK;
}

static ggfit_params *add(search *s, ggfit_change *out, size_t max, size_t *n,
                         const ggfit_params *p, uint32_t k, uint64_t left, const char *fmt, ...)
    GGFIT_PRINTF(8, 9);

/* Appends a change (the flags p with it made); its params, for the caller
 * to finish, or the search's scratch copy when out is full. (Not a static
 * thread-local: 86 KB of TLS that the dynamic loader zeroes in every
 * process at start, 22 fresh pages before main.) */
static ggfit_params *add(search *s, ggfit_change *out, size_t max, size_t *n,
                         const ggfit_params *p, uint32_t k, uint64_t left, const char *fmt, ...)
{
    if (*n >= max)
        return &s->scratch;
    ggfit_change *c = &out[(*n)++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->flags, sizeof c->flags, fmt, ap);
    va_end(ap);
    ggfit__params_copy(&c->params, p);
    c->drop[0] = '\0';
    c->n_changes = k;
    c->worst_left = left;
    return &c->params;
}

/* The largest value v in [lo, hi] (in steps) with set(p, v) fitting, when
 * fitting only gets easier as v falls; 0 and *found false when even lo
 * does not fit. */
typedef void (*setter)(ggfit_params *p, uint32_t v);

static ggfit_status verify(search *s, const ggfit_params *base, setter set, uint32_t v,
                           bool *found, uint64_t *left)
{
    ggfit_params q;
    ggfit__params_copy(&q, base);
    set(&q, v);
    return fits(s, &q, found, left);
}

/* devices_only: search on the devices' margins (what the value moves
 * monotonically), then judge the whole machine at the value found. */
static ggfit_status largest(search *s, const ggfit_params *base, setter set, uint32_t lo,
                            uint32_t hi, uint32_t step, bool devices_only, uint32_t *best,
                            bool *found, uint64_t *left)
{
    ggfit_params q;
    ggfit__params_copy(&q, base);
    bool ok;
    uint64_t l;
    ggfit_status rc;
    *found = false;
    if (hi < lo)
        return GGFIT_OK;
    set(&q, lo);
    if ((rc = fits_on(s, &q, devices_only, &ok, &l)) || !ok)
        return rc;
    *found = true;
    *best = lo;
    *left = l;
    uint32_t good = lo / step, bad = hi / step + 1;
    while (bad - good > 1) {
        uint32_t mid = good + (bad - good) / 2;
        ggfit__params_copy(&q, base);
        set(&q, mid * step);
        if ((rc = fits_on(s, &q, devices_only, &ok, &l)))
            return rc;
        if (ok) {
            good = mid;
            *best = mid * step;
            *left = l;
        } else {
            bad = mid;
        }
    }
    return devices_only ? verify(s, base, set, *best, found, left) : GGFIT_OK;
}

/* The smallest value in [lo, hi] with set(p, v) fitting, when fitting
 * only gets easier as v grows. */
static ggfit_status smallest(search *s, const ggfit_params *base, setter set, uint32_t lo,
                             uint32_t hi, bool devices_only, uint32_t *best, bool *found,
                             uint64_t *left)
{
    ggfit_params q;
    ggfit__params_copy(&q, base);
    bool ok;
    uint64_t l;
    ggfit_status rc;
    *found = false;
    if (hi < lo)
        return GGFIT_OK;
    set(&q, hi);
    if ((rc = fits_on(s, &q, devices_only, &ok, &l)) || !ok)
        return rc;
    *found = true;
    *best = hi;
    *left = l;
    uint32_t bad = lo - 1, good = hi;   /* lo >= 1 */
    while (good - bad > 1) {
        uint32_t mid = bad + (good - bad) / 2;
        ggfit__params_copy(&q, base);
        set(&q, mid);
        if ((rc = fits_on(s, &q, devices_only, &ok, &l)))
            return rc;
        if (ok) {
            good = mid;
            *best = mid;
            *left = l;
        } else {
            bad = mid;
        }
    }
    return devices_only ? verify(s, base, set, *best, found, left) : GGFIT_OK;
}

static void set_ngl(ggfit_params *p, uint32_t v)
{
    p->n_gpu_layers = (int32_t)v;
    p->set_n_gpu_layers = true;
}

static void set_ctx(ggfit_params *p, uint32_t v)
{
    p->n_ctx = v;
    p->set_n_ctx = true;
}

static void set_ncmoe(ggfit_params *p, uint32_t v)
{
    p->n_cpu_moe = v;
    p->set_overrides = true;
}

/* p without the flags that send experts to system RAM (-cmoe and -ot rules
 * of expert tensors to the CPU; an -ncmoe beside them goes too), into q;
 * what was dropped, in the flags' own words, into drop. False when p has
 * neither -cmoe nor such a rule (-ncmoe alone is the one-flag change). */
static bool without_expert_offload(const ggfit_params *p, ggfit_params *q, char *drop, size_t n)
{
    size_t k = 0;
    drop[0] = '\0';
    ggfit__params_copy(q, p);
    if (p->cpu_moe)
        k += (size_t)snprintf(drop + k, n - k, "-cmoe%s", p->n_cpu_moe ? " -ncmoe" : "");
    q->cpu_moe = false;
    q->n_cpu_moe = 0;
    q->n_overrides = 0;
    for (uint32_t i = 0; i < p->n_overrides; i++) {
        const ggfit_override *o = &p->overrides[i];
        if (strcmp(o->buffer, "CPU") || !strstr(o->pattern, "exps")) {
            q->overrides[q->n_overrides++] = *o;
        } else if (k < n) {
            k += (size_t)snprintf(drop + k, n - k, "%s-ot %s=%s", k ? " " : "", o->pattern,
                                  o->buffer);
        }
    }
    q->set_overrides = q->n_overrides > 0;
    return drop[0] != '\0';
}

static void quantize_cache(ggfit_params *p)
{
    p->type_k = p->type_v = GGFIT_TYPE_Q8_0;
    if (p->flash_attn == GGFIT_FA_OFF)
        p->flash_attn = GGFIT_FA_ON;
}

ggfit_status ggfit__nearest(const ggfit_model *m, const ggfit_params *p,
                            const ggfit_projection *pr, const ggfit_device *devs, size_t n_devs,
                            const ggfit_host_mem *host, const ggfit_fit_options *opt,
                            ggfit_change *out, size_t max, size_t *n, char **err)
{
    *n = 0;
    search *s = ggfit__calloc(1, sizeof *s);
    if (!s)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    s->m = m;
    s->devs = devs;
    s->n = n_devs;
    s->host = host;
    s->opt = opt;
    s->err = err;
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    uint32_t ngl = pr->n_gpu_layers > 0 ? (uint32_t)pr->n_gpu_layers : 0;
    uint32_t ctx = pr->n_ctx;
    uint32_t best;
    uint64_t left;
    bool found;
    ggfit_status rc = GGFIT_OK;

    /* one flag */
    if (n_devs && ngl > 0 &&
        !(rc = largest(s, p, set_ngl, 0, ngl - 1, 1, true, &best, &found, &left)) && found)
        set_ngl(add(s, out, max, n, p, 1, left, "-ngl %u", best), best);
    if (!rc && ctx > 256 &&
        !(rc = largest(s, p, set_ctx, 256, ctx - 1, 256, false, &best, &found, &left)) && found)
        set_ctx(add(s, out, max, n, p, 1, left, "-c %u", best), best);
    bool f16 = p->type_k == GGFIT_TYPE_F16 && p->type_v == GGFIT_TYPE_F16;
    ggfit_params q;
    ggfit__params_copy(&q, p);
    quantize_cache(&q);
    bool ok = false;
    if (!rc && f16 && !(rc = fits(s, &q, &ok, &left)) && ok)
        add(s, out, max, n, &q, 1, left, "%s-ctk q8_0 -ctv q8_0",
            p->flash_attn == GGFIT_FA_OFF ? "-fa on " : "");
    if (!rc && n_devs && hp->n_expert > 0 && !p->cpu_moe && p->n_cpu_moe < hp->n_layer &&
        !(rc = smallest(s, p, set_ncmoe, p->n_cpu_moe + 1, hp->n_layer, true, &best, &found,
                         &left)) &&
        found)
        set_ncmoe(add(s, out, max, n, p, 1, left, "-ncmoe %u", best), best);
    /* the given expert placement replaced by the smallest -ncmoe that fits:
     * when the host is short of the experts (-cmoe on a machine whose RAM
     * does not hold them all), some of them on the GPUs */
    char drop[sizeof out->drop];
    ggfit_params *r = &s->replaced;
    if (!rc && n_devs && hp->n_expert > 0 && without_expert_offload(p, r, drop, sizeof drop) &&
        !(rc = smallest(s, r, set_ncmoe, 1, hp->n_layer, true, &best, &found, &left)) &&
        found) {
        size_t at = *n;
        set_ncmoe(add(s, out, max, n, r, 1, left, "-ncmoe %u", best), best);
        if (at < *n)
            snprintf(out[at].drop, sizeof out[at].drop, "%s", drop);
    }
    /* two flags: the smaller cache and the context it allows */
    if (!rc && *n == 0 && f16 && ctx > 256 &&
        !(rc = largest(s, &q, set_ctx, 256, ctx - 1, 256, false, &best, &found, &left)) && found)
        set_ctx(add(s, out, max, n, &q, 2, left, "%s-ctk q8_0 -ctv q8_0 -c %u",
                    p->flash_attn == GGFIT_FA_OFF ? "-fa on " : "", best), best);
    free(s);
    return rc;
}
