/*
 * draft.h - llama-server's draft model (-md) in a plan (common/draft.c).
 */
#ifndef GGFIT_COMMON_DRAFT_H
#define GGFIT_COMMON_DRAFT_H

#include "ggfit_app.h"

/* Whether a names one of the flags that land in the draft (common/args.c,
 * ggfit__draft_set): -md, the draft's memory flags (-ngld, -ctkd, -ctvd,
 * -otd, -cmoed, -ncmoed, by any of their names) and the speculative flags
 * that change memory (--spec-type, -devd, --spec-draft-n-max,
 * --spec-ngram-*-size-m, --spec-ngram-mod-n-max, --spec-default): the rows
 * of scope draft that ggfit applies. */
bool ggfit__draft_flag(const char *a);

/* common_params_speculative's defaults in r (ggfit_request_init). */
void ggfit__spec_init(ggfit_request *r);

/* Whether llama-server measures a draft before its fit: -md, or an MTP
 * context (--spec-type draft-mtp). */
bool ggfit__spec_has_draft(const ggfit_request *r);

/* --for server: the target's params as the speculative flags change them
 * (after ggfit_params_server): n_outputs_max one per slot and draft token
 * (server_n_outputs_max, common_speculative_n_max) and load_mtp. */
void ggfit__spec_params(const ggfit_request *r, ggfit_params *p);

/* --for server: what the speculative flags change that is not counted
 * (out->spec_rollback, spec_n_rs_seq). */
void ggfit__spec_notes(const ggfit_request *r, const ggfit_model *m, ggfit_plan *out);

/* The speculative flags given, as a command line repeats them. */
void ggfit__spec_args(const ggfit_request *r, char *out, size_t cap);

/* --for server with -md or --spec-type draft-mtp: the draft's params
 * from the target's (params, after ggfit__spec_params), as
 * common_base_params_to_speculative makes them, its projection (on -devd's
 * devices) and its bytes in out->fit_options.extra_used / extra_host (the
 * fit targets and the verdict's pools; an MTP context's weights are the
 * target's: not added). Sets out->has_draft, draft_mtp, draft_model,
 * draft_params and draft; and what llama-server does after its fit, for
 * the notes (draft_vocab: vocabularies refused by draft-simple;
 * draft_unused: a draft no type runs; draft_rpc, draft_arch). */
ggfit_status ggfit__draft_plan(const ggfit_request *r, const ggfit_model *target,
                               const ggfit_params *params, ggfit_plan *out, char **err);

#endif
