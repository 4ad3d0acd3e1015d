/*
 * plan.h - the planning above the fit, the verdict and the speeds,
 * internal: a request's plan (request_plan.c), which the quants
 * (quants.c), the fastest plan (search.c) and ggfit bench (bench.c) make
 * for each of their candidates.
 */
#ifndef GGFIT_PLAN_PLAN_H
#define GGFIT_PLAN_PLAN_H

#include "ggfit.h"

/* ggfit_request_plan with the model already open and the devices already
 * in out->devices (r->host set by ggfit_request_devices); mmproj as
 * ggfit__request_model gave it ("" for none). */
ggfit_status ggfit__plan_model(ggfit_request *r, const ggfit_model *m, const char *mmproj,
                               ggfit_plan *out, char **err);

/* A plan zeroed as ggfit_request_plan starts one (the parts read only
 * below their counts left as they are). */
void ggfit__plan_zero(ggfit_plan *out);

#endif
