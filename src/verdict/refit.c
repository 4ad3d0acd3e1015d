/*
 * refit.c - when the host decides: llama.cpp's fit only looks at the GPUs,
 * so it may leave more in system memory than the machine has. Then ggfit
 * looks for the plan llama.cpp would make with less context, as
 * llama.cpp's own fit gives up context first when a GPU is short: the
 * largest context, down to -fitc, whose fit the whole machine holds.
 * A smaller cache leaves room on the GPUs for more layers, and every layer
 * the GPUs take is one the host does not hold.
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
        ggfit_fit_result_free(r);
        return rc;
    }
    *ok = v->status == GGFIT_VERDICT_FITS;
    return GGFIT_OK;
}

ggfit_status ggfit__refit_for_host(const ggfit_model *m, const ggfit_params *p,
                                   const ggfit_device *devs, size_t n,
                                   const ggfit_host_mem *host, const ggfit_fit_options *opt,
                                   const ggfit_fit_result *first, bool *found,
                                   ggfit_fit_result *alt, ggfit_verdict *altv, char **err)
{
    *found = false;
    if (opt->check_only || p->set_n_ctx || first->status == GGFIT_FIT_FAILED)
        return GGFIT_OK;
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
            ggfit_fit_result_free(&r);
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
            ggfit_fit_result_free(alt);
            *alt = r;
            *altv = *v;
            good = mid;
        } else {
            ggfit_fit_result_free(&r);
            bad = mid;
        }
    }
    free(v);
    if (rc) {
        ggfit_fit_result_free(alt);
        *found = false;
    }
    return rc;
}
