/*
 * bench.c - `ggfit bench` from a request: the plan ggfit makes for it (or
 * the flags as given), projected for its placement, then the speed model
 * (speed.c) on that placement. Kept apart from speed.c, which the plans
 * themselves call (request.c), so that the model does not call back up
 * into the request.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "speed/speed.h"

ggfit_status ggfit_bench(ggfit_request *r, const ggfit_speed_options *o, ggfit_speed *out,
                         char **err)
{
    ggfit_plan plan;
    if (!r || !o || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "bench: missing argument");
    if (!r->model)
        return ggfit__fail(err, GGFIT_EINVAL, "bench: -m FILE is needed");
    ggfit_status rc = ggfit_request_plan(r, &plan, err);
    if (rc)
        return rc;
    const ggfit_params *p = plan.print_memory     ? &plan.asked
                            : plan.has_alternative ? &plan.alternative.params
                                                   : &plan.fit.params;
    ggfit_model *m = NULL;
    ggfit_projection *pr = ggfit__calloc(1, sizeof *pr);
    int32_t *placement = NULL;
    if (!pr) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    rc = ggfit_is_url(r->model) ? ggfit_model_open_url(r->model, NULL, NULL, &m, err)
                                : ggfit_model_open(r->model, &m, err);
    if (rc)
        goto done;
    placement = ggfit__calloc(ggfit_model_n_tensors(m) + 1, sizeof *placement);
    if (!placement) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    rc = ggfit_project(m, p, plan.devices, plan.n_devices, pr, placement, err);
    if (!rc)
        rc = ggfit_speed_of(m, p, pr, placement, plan.devices, plan.n_devices, o, out, err);
done:
    ggfit_free(placement);
    ggfit_free(pr);
    ggfit_model_free(m);
    ggfit_plan_free(&plan);
    return rc;
}
