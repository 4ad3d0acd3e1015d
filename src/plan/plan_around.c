/*
 * plan_around.c - --fit-around in a plan: where llama.cpp's fit aborts on
 * a set flag, the fit around the set flags (common/fit_around.c) judged on
 * the whole machine, with the refit where only the host is short, and
 * what was kept and what was fitted, in words.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "plan/plan.h"
#include "verdict/verdict.h"

/* --fit-around: the fit with the set flags kept (ggfit_fit with
 * fit_around), judged on the whole machine; a smaller context when only
 * the host is short, as for llama.cpp's own fit (verdict/refit.c). */
ggfit_status ggfit__plan_fit_around(const ggfit_model *m, const ggfit_params *p, ggfit_plan *out,
                                    char **err)
{
    ggfit_fit_result *a = ggfit__calloc(1, sizeof *a);
    ggfit_verdict *v = ggfit__calloc(1, sizeof *v);
    ggfit_status rc = a && v ? GGFIT_OK : ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    /* the fit options are out->fit_options (a draft's bytes added) */
    out->fit_around = true;
    if (!rc)
        rc = ggfit_fit(m, p, out->devices, out->n_devices, &out->fit_options, a, err);
    bool have = !rc;
    if (!rc && a->status == GGFIT_FIT_FAILED)
        out->around = GGFIT_AROUND_FAILED;
    else if (!rc)
        rc = ggfit_verdict_of(m, &a->params, &a->projection, out->devices, out->n_devices,
                              &out->host, &out->fit_options, v, err);
    if (!rc && a->status != GGFIT_FIT_FAILED && v->status != GGFIT_VERDICT_FITS) {
        bool found = false;
        ggfit_fit_result *b = ggfit__calloc(1, sizeof *b);
        ggfit_verdict *bv = ggfit__calloc(1, sizeof *bv);
        if (!b || !bv)
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        else
            rc = ggfit__refit(m, p, out->devices, out->n_devices, &out->host,
                              &out->fit_options, a, v, &found, b, bv, err);
        if (!rc && found) {
            ggfit_fit_result_clear(a);
            *a = *b;
            *v = *bv;
        }
        free(b);
        free(bv);
    }
    if (!rc && a->status != GGFIT_FIT_FAILED && v->status != GGFIT_VERDICT_FITS)
        out->around = GGFIT_AROUND_SHORT;
    /* kept in the plan as the alternative; has_alternative where it fits */
    if (have) {
        out->alternative = *a;
        out->alternative_verdict = *v;
        out->has_alternative = !rc && out->around == GGFIT_AROUND_FITS;
    }
    free(a);
    free(v);
    return rc;
}

void ggfit__plan_not_around(ggfit_plan *out)
{
    out->fit_around = true;
    out->around = GGFIT_AROUND_NOT_FITTED;
}
