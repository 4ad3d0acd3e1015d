/*
 * draft.c - llama-server's draft model for speculative decoding (-md), as
 * the server fits it (tools/server/server-context.cpp load_model): before
 * the target's fit it measures the draft with common_get_device_memory_data
 * on common_base_params_to_speculative's params (common/speculative.cpp)
 * and adds the draft's model + context + compute bytes of each device to
 * that device's fit target (fit_params_target); the draft's host buffers
 * are not added. There is no separate draft context: the draft is measured
 * at the target's -c (0: the draft's own trained context).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/draft.h"

/* The draft's flags (common/arg.cpp, every name) and the target flag that
 * sets the same field of ggfit_params. */
static const struct { const char *names[4]; const char *as; } draft_flags[] = {
    { { "-ngld", "--spec-draft-ngl", "--gpu-layers-draft", "--n-gpu-layers-draft" }, "-ngl" },
    { { "-ctkd", "--spec-draft-type-k", "--cache-type-k-draft", NULL }, "-ctk" },
    { { "-ctvd", "--spec-draft-type-v", "--cache-type-v-draft", NULL }, "-ctv" },
    { { "-otd", "--spec-draft-override-tensor", "--override-tensor-draft", NULL }, "-ot" },
    { { "-cmoed", "--spec-draft-cpu-moe", "--cpu-moe-draft", NULL }, "-cmoe" },
    { { "-ncmoed", "--spec-draft-n-cpu-moe", "--spec-draft-ncmoe", "--n-cpu-moe-draft" },
      "-ncmoe" },
};

static int draft_row(const char *a)
{
    for (size_t k = 0; k < sizeof draft_flags / sizeof draft_flags[0]; k++)
        for (size_t j = 0; j < 4 && draft_flags[k].names[j]; j++)
            if (!strcmp(a, draft_flags[k].names[j]))
                return (int)k;
    return -1;
}

static bool is_md(const char *a)
{
    return !strcmp(a, "-md") || !strcmp(a, "--model-draft") || !strcmp(a, "--spec-draft-model");
}

bool ggfit__draft_flag(const char *a)
{
    return is_md(a) || draft_row(a) >= 0;
}

bool ggfit__draft_parse_arg(ggfit_request *r, int argc, char **argv, int *i, ggfit_status *rc,
                            char **err)
{
    const char *a = argv[*i];
    *rc = GGFIT_OK;
    if (is_md(a)) {
        if (*i + 1 >= argc) {
            *rc = ggfit__fail(err, GGFIT_EINVAL, "%s needs a value", a);
            return true;
        }
        r->draft_model = argv[++*i];
        (*i)++;
        return true;
    }
    int k = draft_row(a);
    if (k < 0)
        return false;
    /* parsed as the target's flag, into the draft's params */
    char *sub[3] = { (char *)(uintptr_t)draft_flags[k].as, NULL, NULL };
    int sub_argc = 1;
    if (strcmp(draft_flags[k].as, "-cmoe")) {
        if (*i + 1 >= argc) {
            *rc = ggfit__fail(err, GGFIT_EINVAL, "%s needs a value", a);
            return true;
        }
        sub[sub_argc++] = argv[*i + 1];
    }
    int j = 0;
    bool used = false;
    char *inner = NULL;
    *rc = ggfit_params_parse_arg(&r->draft, sub_argc, sub, &j, &used, &inner);
    if (*rc) {
        /* the message names the target's flag: name the draft's */
        const char *msg = inner ? inner : "bad value";
        size_t n = strlen(draft_flags[k].as);
        if (!strncmp(msg, draft_flags[k].as, n))
            msg += n;
        *rc = ggfit__fail(err, *rc, "%s%s", a, msg);
        ggfit_free(inner);
        return true;
    }
    *i += sub_argc;
    return true;
}

ggfit_status ggfit__draft_plan(const ggfit_request *r, const ggfit_model *target,
                               const ggfit_params *params, ggfit_plan *out, char **err)
{
    ggfit_model *dm = NULL;
    ggfit_status rc = ggfit_model_open(r->draft_model, &dm, err);
    if (rc)
        return rc;
    /* common_base_params_to_speculative: the target's params, with the
     * draft's devices (-devd: not taken, the same devices), -ngld (default
     * -1, llama.cpp's default placement), -otd (with -cmoed/-ncmoed, which
     * common/arg.cpp turns into the draft's overrides), -ctkd/-ctvd (F16
     * by default, not the target's -ctk/-ctv) and n_outputs_max =
     * n_parallel; the context as given (the fit has not run yet). */
    ggfit_params d = *params;
    d.n_gpu_layers = r->draft.n_gpu_layers;
    d.set_n_gpu_layers = r->draft.set_n_gpu_layers;
    d.type_k = r->draft.type_k;
    d.type_v = r->draft.type_v;
    memcpy(d.overrides, r->draft.overrides, sizeof d.overrides);
    d.n_overrides = r->draft.n_overrides;
    d.set_overrides = r->draft.set_overrides;
    d.cpu_moe = r->draft.cpu_moe;
    d.n_cpu_moe = r->draft.n_cpu_moe;
    d.n_outputs_max = d.n_seq;
    rc = ggfit_project(dm, &d, out->devices, out->n_devices, &out->draft, NULL, err);
    /* common/speculative.cpp common_speculative_are_compatible, after the
     * fit and the load: vocabularies more than 128 tokens apart
     * (SPEC_VOCAB_MAX_SIZE_DIFFERENCE) are refused (the vocab type and
     * BOS/EOS checks are not made here) */
    uint32_t nv_t = ggfit_model_hparams(target)->n_vocab, nv_d = ggfit_model_hparams(dm)->n_vocab;
    uint32_t diff = nv_t > nv_d ? nv_t - nv_d : nv_d - nv_t;
    size_t k = strlen(out->notes);
    if (!rc && diff > 128 && k < sizeof out->notes)
        snprintf(out->notes + k, sizeof out->notes - k, "-md: the draft's vocabulary (%u tokens) "
                 "is %u tokens from the target's (%u): llama-server refuses the draft after "
                 "its fit (more than 128 apart)\n", nv_d, diff, nv_t);
    bool rpc = false;
    for (size_t j = 0; j < out->n_devices; j++)
        rpc |= out->devices[j].kind == GGFIT_BACKEND_RPC;
    k = strlen(out->notes);
    if (!rc && rpc && k < sizeof out->notes)
        snprintf(out->notes + k, sizeof out->notes - k, "-md: planned as on a GPU machine, the "
                 "draft's bytes on each device added to that device's fit target; a CPU build "
                 "of llama-server with RPC devices lists the CPU first and adds them one device "
                 "on (the last device's are lost)\n");
    ggfit_model_free(dm);
    if (rc)
        return rc;
    out->has_draft = true;
    out->draft_model = r->draft_model;
    out->draft_params = d;
    /* the draft's devices' bytes, at their index among the devices (on a
     * GPU machine, the index in ggml's device list the server adds them
     * at); the Host row is not added to the fit, only to the verdict */
    for (uint32_t j = 0; j < out->draft.n_devices; j++) {
        const ggfit_mem *mm = &out->draft.devices[j];
        out->fit_options.extra_used[out->draft.device_of[j]] +=
            mm->model + mm->context + mm->compute;
    }
    out->fit_options.extra_host += out->draft.host.model + out->draft.host.context +
                                   out->draft.host.compute + out->draft.cpu_extra.model +
                                   out->draft.cpu_extra.context + out->draft.cpu_extra.compute;
    return GGFIT_OK;
}
