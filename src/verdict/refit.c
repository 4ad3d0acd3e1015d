/*
 * refit.c - when llama.cpp's decision does not hold on the whole machine.
 *
 * The host: llama.cpp's fit only looks at the GPUs, so it may leave more
 * in system memory than the machine has. Then ggfit looks for the plan
 * llama.cpp would make with less context, as llama.cpp's own fit gives up
 * context first when a GPU is short: the largest context, down to -fitc,
 * whose fit the whole machine holds. A smaller cache leaves room on the
 * GPUs for more layers, and every layer the GPUs take is one the host
 * does not hold.
 *
 * A device: llama.cpp's fit is itself approximate (it reduces the context
 * by what it measured a token to cost at the trained context, and places
 * layers by per-layer estimates), so on some models its decision leaves a
 * device tens of MiB inside its margin: llama.cpp runs it, and ggfit must
 * not refuse it. The nearest plan that keeps every margin is then the
 * largest context whose fit does (when the context is not set), else
 * llama.cpp's own fit with each short device's target raised by what it
 * was short of, until every margin holds.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "verdict/verdict.h"

/* Fits with the context fixed at n_ctx and judges the result: *ok when the
 * whole machine holds it. */
static ggfit_status try_ctx(const ggfit_model *m, const ggfit_params *p, uint32_t n_ctx,
                            const ggfit_device *devs, size_t n, const ggfit_host_mem *host,
                            const ggfit_fit_options *opt, ggfit_fit_result *r, ggfit_verdict *v,
                            bool *ok, char **err)
{
    ggfit_params q = *p;
    q.n_ctx = n_ctx;
    q.set_n_ctx = true;
    memset(r, 0, sizeof *r);
    ggfit_status rc = ggfit_fit(m, &q, devs, n, opt, r, err);
    *ok = false;
    if (rc)
        return rc;
    if (r->status == GGFIT_FIT_FAILED)
        return GGFIT_OK;
    if ((rc = ggfit_verdict_of(m, &r->params, &r->projection, devs, n, host, opt, v, err))) {
        ggfit_fit_result_clear(r);
        return rc;
    }
    *ok = v->status == GGFIT_VERDICT_FITS;
    return GGFIT_OK;
}

/* The largest context, a multiple of 256 down to -fitc, whose fit the
 * whole machine holds. */
static ggfit_status refit_ctx(const ggfit_model *m, const ggfit_params *p,
                              const ggfit_device *devs, size_t n, const ggfit_host_mem *host,
                              const ggfit_fit_options *opt, const ggfit_fit_result *first,
                              bool *found, ggfit_fit_result *alt, ggfit_verdict *altv,
                              char **err)
{
    const uint32_t step = 256;
    uint32_t lo = opt->n_ctx_min ? opt->n_ctx_min : step;
    uint32_t hi = first->projection.n_ctx;
    if (hi <= lo)
        return GGFIT_OK;
    ggfit_fit_result r;
    ggfit_verdict *v = ggfit__malloc(sizeof *v);
    if (!v)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    bool ok;
    ggfit_status rc = try_ctx(m, p, lo, devs, n, host, opt, &r, v, &ok, err);
    if (rc || !ok) {
        if (!rc)
            ggfit_fit_result_clear(&r);
        free(v);
        return rc;
    }
    *alt = r;
    *altv = *v;
    *found = true;
    /* The largest multiple of step in (lo, hi) that still fits. */
    uint32_t good = lo / step, bad = (hi + step - 1) / step;
    while (bad - good > 1) {
        uint32_t mid = good + (bad - good) / 2;
        if ((rc = try_ctx(m, p, mid * step, devs, n, host, opt, &r, v, &ok, err)))
            break;
        if (ok) {
            ggfit_fit_result_clear(alt);
            *alt = r;
            *altv = *v;
            good = mid;
        } else {
            ggfit_fit_result_clear(&r);
            bad = mid;
        }
    }
    free(v);
    if (rc) {
        ggfit_fit_result_clear(alt);
        *found = false;
    }
    return rc;
}

/* llama.cpp's fit with the short devices' targets raised by their
 * shortfall (a MiB more, as llama.cpp's fit counts in MiB), judged with
 * the real margins; a few rounds, as each raise moves the estimate. */
static ggfit_status refit_margins(const ggfit_model *m, const ggfit_params *p,
                                  const ggfit_device *devs, size_t n,
                                  const ggfit_host_mem *host, const ggfit_fit_options *opt,
                                  const ggfit_verdict *firstv, bool *found,
                                  ggfit_fit_result *alt, ggfit_verdict *altv, char **err)
{
    ggfit_fit_options o = *opt;
    for (size_t d = 0; d < n && d < GGFIT_MAX_DEVICES; d++)   /* each device's own */
        o.margin[d] = ggfit__fit_margin(opt, d);
    o.n_margins = n < GGFIT_MAX_DEVICES ? (uint32_t)n : GGFIT_MAX_DEVICES;
    const ggfit_verdict *v = firstv;
    ggfit_status rc = GGFIT_OK;
    for (int round = 0; round < 4 && !rc && !*found; round++) {
        bool raised = false;
        for (uint32_t i = 0; i < v->n_pools; i++) {
            const ggfit_pool *pl = &v->pools[i];
            if (pl->kind != GGFIT_POOL_DEVICE || !pl->short_by || pl->device < 0 ||
                pl->device >= (int32_t)o.n_margins)
                continue;
            o.margin[pl->device] += (pl->short_by + GGFIT_MiB - 1) / GGFIT_MiB * GGFIT_MiB +
                                    GGFIT_MiB;
            raised = true;
        }
        if (!raised)
            break;
        if (round)
            ggfit_fit_result_clear(alt);
        memset(alt, 0, sizeof *alt);
        if ((rc = ggfit_fit(m, p, devs, n, &o, alt, err)))
            break;
        if (alt->status == GGFIT_FIT_FAILED)
            break;
        if ((rc = ggfit_verdict_of(m, &alt->params, &alt->projection, devs, n, host, opt, altv,
                                   err)))
            break;
        *found = altv->status == GGFIT_VERDICT_FITS;
        v = altv;
    }
    if (!*found)
        ggfit_fit_result_clear(alt);
    return rc;
}

ggfit_status ggfit__refit(const ggfit_model *m, const ggfit_params *p, const ggfit_device *devs,
                          size_t n, const ggfit_host_mem *host, const ggfit_fit_options *opt,
                          const ggfit_fit_result *first, const ggfit_verdict *firstv,
                          bool *found, ggfit_fit_result *alt, ggfit_verdict *altv, char **err)
{
    *found = false;
    if (opt->check_only || first->status == GGFIT_FIT_FAILED ||
        firstv->status == GGFIT_VERDICT_FITS)
        return GGFIT_OK;
    ggfit_status rc = GGFIT_OK;
    if (!p->set_n_ctx)
        rc = refit_ctx(m, p, devs, n, host, opt, first, found, alt, altv, err);
    if (!rc && !*found && firstv->status == GGFIT_VERDICT_NO_FIT)
        rc = refit_margins(m, p, devs, n, host, opt, firstv, found, alt, altv, err);
    return rc;
}
