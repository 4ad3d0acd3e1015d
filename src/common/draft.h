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

/* llama.cpp's common_params_parse from SPEC_TYPE_DFLASH / SPEC_TYPE_MTP:
 * with --spec-type left at its default and -md given, the type read from
 * the draft's GGUF (dflash: draft-dspark with a Markov head, else
 * draft-dflash; another architecture with a NextN head on its last block:
 * draft-mtp), into r->spec_types. Before ggfit__spec_params. */
void ggfit__spec_from_draft(ggfit_request *r);

/* From FIT_N_STREAMS, where ggfit__draft_plan made the draft the fit's
 * extra model (out->fit_options.extra): the draft projected at the
 * target's fitted context n_ctx (its context follows the target's) into
 * out->draft and draft_params, its bytes into extra_used (and
 * extra_in_used, which the fit leaves out of its targets) and extra_host
 * for the verdict. Nothing without an extra model. */
ggfit_status ggfit__draft_fitted(const ggfit_model *target, uint32_t n_ctx, ggfit_plan *out,
                                 char **err);

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
