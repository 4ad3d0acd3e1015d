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

/* The plan's own arguments (argv without the program's name; a leading
 * "ggfit" skipped) into r, as the CLI's plan command reads them: the
 * library's flags, --json (implied), a pasted llama.cpp line after --
 * whose flags ggfit does not know are kept (r->unknown) with a warning
 * each appended to warnings (a json_t array; NULL: none kept). A flag of
 * the CLI's own (--objective, -q) or a command is an error (batch.c). */
struct json_t;
ggfit_status ggfit__plan_argv(ggfit_request *r, int argc, char **argv, struct json_t *warnings,
                              char **err);

/* A plan zeroed as ggfit_request_plan starts one (the parts read only
 * below their counts left as they are). */
void ggfit__plan_zero(ggfit_plan *out);

/* --fit-around where llama.cpp's fit aborted on a set flag (plan_around.c):
 * the fit around the set flags of p, judged on the whole machine, into
 * out's alternative (has_alternative when it fits there, else out->around
 * says why not). */
ggfit_status ggfit__plan_fit_around(const ggfit_model *m, const ggfit_params *p, ggfit_plan *out,
                                    char **err);
/* --fit-around where nothing is fitted (-fitp on, -fit off): says so in
 * out (GGFIT_AROUND_NOT_FITTED). */
void ggfit__plan_not_around(ggfit_plan *out);

#endif
