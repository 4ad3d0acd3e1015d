/*
 * flags.c - a plan as llama.cpp's command line: the flags llama-fit-params
 * prints, after the --rpc servers the devices came from.
 */
#include <string.h>

#include "base/base.h"
#include "llama/patterns.h"

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
        if (!dup)
            ggfit__sb_printf(sb, "%s%s", k++ ? "," : "--rpc ", devs[d].endpoint);
    }
    if (k)
        ggfit__sb_printf(sb, " ");
}

char *ggfit_fit_args(const ggfit_fit_result *r, const ggfit_device *devs, size_t n)
{
    ggfit_sb sb = {0};
    const ggfit_params *p = &r->params;
    rpc_args(&sb, devs, n);
    ggfit__sb_printf(&sb, "-c %u -ngl %d", p->n_ctx, p->n_gpu_layers);
    size_t nd = n;
    while (nd > 1 && p->tensor_split[nd - 1] == 0.0f)
        nd--;
    if (nd > 1)
        for (size_t d = 0; d < nd; d++)
            ggfit__sb_printf(&sb, "%s%u", d ? "," : " -ts ", (uint32_t)p->tensor_split[d]);
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->n_overrides; i++, k++)
        ggfit__sb_printf(&sb, "%s%s=%s", k ? "," : " -ot \"", p->overrides[i].pattern,
                         p->overrides[i].buffer);
    /* -cmoe and -ncmoe are overrides too, as llama.cpp expands them. */
    if (p->cpu_moe)
        ggfit__sb_printf(&sb, "%s" GGFIT_FFN_EXPS_REGEX "=CPU", k++ ? "," : " -ot \"");
    for (uint32_t il = 0; il < p->n_cpu_moe; il++)
        ggfit__sb_printf(&sb, "%sblk\\.%u" GGFIT_FFN_EXPS_REGEX "=CPU", k++ ? "," : " -ot \"",
                         il);
    if (k)
        ggfit__sb_printf(&sb, "\"");
    return ggfit__sb_take(&sb);
}
