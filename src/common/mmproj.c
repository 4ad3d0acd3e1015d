/*
 * mmproj.c - llama-server's multimodal projector (--mmproj), as the server
 * fits it (tools/server/server-context.cpp load_model): before the model's
 * fit it calls mtmd_get_memory_usage(mmproj, mparams) with
 * use_gpu = --mmproj-offload, the model's -fa, --image-min-tokens,
 * --image-max-tokens and --warmup (without it no compute buffer is
 * reserved), and adds each device's bytes (weights + warmup
 * compute buffer, mtmd/clip.c) to fit_params_target at that device's index
 * in ggml's device list. On a GPU machine the GPUs come first, so the
 * projector's GPU bytes go to its device's target and its CPU bytes (the
 * graph's inputs, or everything with --no-mmproj-offload) to no target.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/args.h"
#include "common/mmproj.h"
#include "mtmd/clip.h"
#include "remote/remote.h"

/* The row of a, if it lands in the projector's fields. */
static bool projector_row(const char *a, ggfit__flag *f)
{
    bool negated;
    int row = ggfit__flag_find(a, &negated);
    return row >= 0 && ggfit__flag_row((size_t)row, f) && f->lands >= GGFIT__AT_MMPROJ_FIRST &&
           f->lands <= GGFIT__AT_MMPROJ_LAST;
}

bool ggfit__mmproj_file_flag(const char *a)
{
    ggfit__flag f;
    return projector_row(a, &f) && f.lands == GGFIT__AT_MMPROJ;
}

bool ggfit__mmproj_flag(const char *a)
{
    ggfit__flag f;
    return projector_row(a, &f) && f.lands != GGFIT__AT_MMPROJ;
}

ggfit_status ggfit__mmproj_set(ggfit_request *r, ggfit__flag_at at, const char *a, bool on,
                              const char *v, char **err)
{
    switch (at) {
    case GGFIT__AT_MMPROJ:
        r->mmproj = v;
        break;
    case GGFIT__AT_MMPROJ_OFFLOAD:
        r->mmproj_params.use_gpu = on;
        break;
    case GGFIT__AT_WARMUP:   /* mparams.warmup */
        r->mmproj_params.warmup = on;
        break;
    case GGFIT__AT_IMAGE_MIN_TOKENS:
    case GGFIT__AT_IMAGE_MAX_TOKENS: {
        /* common/arg.cpp: std::stoi */
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (!*end && end != v && (errno == ERANGE || n < INT32_MIN || n > INT32_MAX))
            return ggfit__fail(err, GGFIT_EINVAL, "%s: %.*s%s is too large (at most %d)", a,
                               GGFIT__CLIP(v), INT32_MAX);
        if (*end || end == v)
            return ggfit__fail(err, GGFIT_EINVAL, "%s: expected a number of tokens, got "
                               "'%.*s%s'", a, GGFIT__CLIP(v));
        if (at == GGFIT__AT_IMAGE_MIN_TOKENS)
            r->mmproj_params.image_min_tokens = (int32_t)n;
        else
            r->mmproj_params.image_max_tokens = (int32_t)n;
        break;
    }
    default:
        break;
    }
    return GGFIT_OK;
}

/* The measure of mm (closed here) and its bytes in the plan. */
static ggfit_status plan_with(const ggfit_request *r, ggfit_mmproj *mm, const char *name,
                              const ggfit_params *params, ggfit_plan *out, char **err)
{
    ggfit_mmproj_params p = r->mmproj_params;
    p.flash_attn = params->flash_attn;   /* mparams.flash_attn_type: the model's -fa */
    p.llama_build = params->llama_build;
    ggfit_status rc = ggfit_mmproj_measure(mm, &p, out->devices, out->n_devices,
                                           &out->mmproj_usage, err);
    ggfit_mmproj_free(mm);
    if (rc)
        return rc;
    /* an encoder without a graph is noted from u (compute_estimated) */
    const ggfit_mmproj_usage *u = &out->mmproj_usage;
    bool rpc = false, on_device = false;
    for (size_t j = 0; j < out->n_devices; j++) {
        rpc |= out->devices[j].kind == GGFIT_BACKEND_RPC;
        on_device |= u->device[j] != 0;
    }
    out->mmproj_rpc = rpc && on_device;
    out->has_mmproj = true;
    snprintf(out->mmproj, sizeof out->mmproj, "%s", name);
    out->mmproj_params = p;
    for (size_t d = 0; d < out->n_devices && d < GGFIT_MAX_DEVICES; d++)
        out->fit_options.extra_used[d] += u->device[d];
    out->fit_options.extra_host += u->cpu;
    return GGFIT_OK;
}

ggfit_status ggfit__mmproj_plan(const ggfit_request *r, const ggfit_params *params,
                                ggfit_plan *out, char **err)
{
    ggfit_mmproj *mm = NULL;
    ggfit_status rc = ggfit_mmproj_open(r->mmproj, &mm, err);
    return rc ? rc : plan_with(r, mm, r->mmproj, params, out, err);
}

ggfit_status ggfit__mmproj_plan_hf(const ggfit_request *r, const char *hf_mmproj,
                                   const ggfit_params *params, ggfit_plan *out, char **err)
{
    ggfit_gguf *g = NULL;
    ggfit_mmproj *mm = NULL;
    ggfit_status rc = ggfit__request_mmproj(r, &g, err);
    if (!rc)
        rc = ggfit__mmproj_from_gguf(g, hf_mmproj, &mm, err);
    if (!rc)
        rc = plan_with(r, mm, hf_mmproj, params, out, err);
    out->mmproj_auto = !rc;
    return rc;
}
