/*
 * mmproj.h - llama-server's multimodal projector (--mmproj) in a plan
 * (common/mmproj.c).
 */
#ifndef GGFIT_COMMON_MMPROJ_H
#define GGFIT_COMMON_MMPROJ_H

#include "ggfit_app.h"

/* Whether a is -mm/--mmproj (the file) or one of the projector's flags
 * (--[no-]mmproj-offload, --image-min-tokens, --image-max-tokens,
 * --[no-]warmup), which common/args.c lands with ggfit__mmproj_set. */
bool ggfit__mmproj_file_flag(const char *a);
bool ggfit__mmproj_flag(const char *a);

/* --for server with --mmproj: the projector measured on out->devices as
 * mtmd_get_memory_usage measures it (params: the server's flags, for -fa),
 * its bytes per device in out->fit_options.extra_used (the fit targets and
 * the verdict's pools) and its CPU bytes in extra_host. Sets
 * out->has_mmproj, mmproj, mmproj_usage (an encoder's compute_estimated,
 * which the plan notes) and mmproj_rpc. */
ggfit_status ggfit__mmproj_plan(const ggfit_request *r, const ggfit_params *params,
                                ggfit_plan *out, char **err);

/* The same for the mmproj that -hf found (hf_mmproj, its name), which
 * llama-server loads with the model: its header read over HTTP. */
ggfit_status ggfit__mmproj_plan_hf(const ggfit_request *r, const char *hf_mmproj,
                                   const ggfit_params *params, ggfit_plan *out, char **err);

#endif
