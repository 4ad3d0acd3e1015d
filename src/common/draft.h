/*
 * draft.h - llama-server's draft model (-md) in a plan (common/draft.c).
 */
#ifndef GGFIT_COMMON_DRAFT_H
#define GGFIT_COMMON_DRAFT_H

#include "ggfit.h"

/* Takes argv[*i] when it is -md or one of the draft's memory flags
 * (-ngld, -ctkd, -ctvd, -otd, -cmoed, -ncmoed, by any of their names):
 * sets r->draft_model or r->draft, advances *i past the flag and its
 * value and returns true (*rc the parse's status). false: not one. */
bool ggfit__draft_parse_arg(ggfit_request *r, int argc, char **argv, int *i, ggfit_status *rc,
                            char **err);

/* Whether a is the name of one of the flags above. */
bool ggfit__draft_flag(const char *a);

/* --for server with -md: the draft's params from the target's (params,
 * after ggfit_params_server), as common_base_params_to_speculative makes
 * them, its projection on out->devices, and its bytes in
 * out->fit_options.extra_used / extra_host (when llama-server fits:
 * r->fit.check_only off and not print_memory, the fit targets; the
 * verdict's pools always). Sets out->has_draft, draft_model, draft_params
 * and draft; a note when the vocabularies' sizes differ by more than
 * llama.cpp allows (then llama-server refuses the draft after the fit). */
ggfit_status ggfit__draft_plan(const ggfit_request *r, const ggfit_model *target,
                               const ggfit_params *params, ggfit_plan *out, char **err);

#endif
