/*
 * flags.c - a plan as llama.cpp's command line: the flags llama-fit-params
 * prints, after the --rpc servers the devices came from.
 */
#include <string.h>

#include "base/base.h"
#include "common/llama_args.h"
#include "llama/patterns.h"

/* A flag by the name the table prints it under (data/flags.tsv, prints). */
#define NAME(at) ggfit__flag_printed(GGFIT__AT_##at, false)

/* "--rpc host:port,... " for the devices that came from ggfit_rpc_query (an
 * endpoint set), each server once, in device order; nothing when there are
 * none. */
static void rpc_args(ggfit_sb *sb, const ggfit_device *devs, size_t n)
{
    size_t k = 0;
    for (size_t d = 0; d < n; d++) {
        if (devs[d].kind != GGFIT_BACKEND_RPC || !devs[d].endpoint[0])
            continue;
        bool dup = false;
        for (size_t e = 0; e < d && !dup; e++)
            dup = devs[e].kind == GGFIT_BACKEND_RPC &&
                  strcmp(devs[e].endpoint, devs[d].endpoint) == 0;
        if (dup)
            continue;
        if (k++)
            ggfit__sb_printf(sb, ",%s", devs[d].endpoint);
        else
            ggfit__sb_printf(sb, "%s %s", NAME(RPC), devs[d].endpoint);
    }
    if (k)
        ggfit__sb_printf(sb, " ");
}

/* Before the k-th override: -ot and its opening quote, or a comma. */
static void next_override(ggfit_sb *sb, uint32_t k)
{
    if (k)
        ggfit__sb_printf(sb, ",");
    else
        ggfit__sb_printf(sb, " %s \"", NAME(OVERRIDE_TENSOR));
}

char *ggfit_fit_args(const ggfit_fit_result *r, const ggfit_device *devs, size_t n)
{
    ggfit_sb sb = {0};
    const ggfit_params *p = &r->params;
    rpc_args(&sb, devs, n);
    ggfit__sb_printf(&sb, "%s %u %s %d", NAME(CTX), p->n_ctx, NAME(NGL), p->n_gpu_layers);
    size_t nd = n;
    while (nd > 1 && p->tensor_split[nd - 1] == 0.0f)
        nd--;
    for (size_t d = 0; nd > 1 && d < nd; d++) {
        if (d)
            ggfit__sb_printf(&sb, ",%u", (uint32_t)p->tensor_split[d]);
        else
            ggfit__sb_printf(&sb, " %s %u", NAME(TENSOR_SPLIT), (uint32_t)p->tensor_split[d]);
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->n_overrides; i++) {
        next_override(&sb, k++);
        ggfit__sb_printf(&sb, "%s=%s", p->overrides[i].pattern, p->overrides[i].buffer);
    }
    /* -cmoe and -ncmoe are overrides too, as llama.cpp expands them. */
    if (p->cpu_moe) {
        next_override(&sb, k++);
        ggfit__sb_printf(&sb, GGFIT_FFN_EXPS_REGEX "=CPU");
    }
    for (uint32_t il = 0; il < p->n_cpu_moe; il++) {
        next_override(&sb, k++);
        ggfit__sb_printf(&sb, "blk\\.%u" GGFIT_FFN_EXPS_REGEX "=CPU", il);
    }
    if (k)
        ggfit__sb_printf(&sb, "\"");
    return ggfit__sb_take(&sb);
}
