/*
 * flash_attn.c - -fa auto (llama_context::resolve_fused_ops): the probe
 * graph of one token per sequence with flash attention, through the
 * scheduler (graph_reserve.c), where an attention node can leave its
 * layer's device.
 */
#include "base/base.h"
#include "ggml/backend.h"
#include "project/flash_attn.h"

/* -fa auto: llama.cpp builds the graph of one token per sequence with
 * flash attention and keeps it only if every FA node runs on its layer's
 * device (llama_context::resolve_fused_ops); ggfit runs the same probe on
 * its own graph. An FA node has no weight: the scheduler gives it the
 * device of the nearest assigned node before it, the store into its layer's
 * cache, unless that is the CPU; then a device's node after it can take it.
 * So it can leave its layer only when attention is pinned to the CPU (-nkvo)
 * or some layer runs on the CPU next to offloaded ones; other
 * configurations skip the probe, which costs as much as a projection. A
 * quantized V cache turns auto into on, with no probe. The cache was made
 * for flash attention either way, so its V stays untransposed
 * (gb_params.v_trans). */
/* With no layer offloaded and no override, every weight and cache is in
 * system memory; on devices that never take an op from the CPU (RPC) no
 * node then has a reason to leave it: rule 1 of the scheduler puts all
 * that has memory on the CPU, its sweeps carry the CPU to every other node
 * (the graph builders never mark an op unsupported), so each FA node runs
 * where its layer does and the probe would keep flash attention. It is
 * skipped there, which spares a fit that starts from -ngl 0 a second graph. */
static bool probe_keeps_fa(const proj *pr)
{
    if (pr->act != 0 || pr->n_rules != 0)
        return false;
    for (uint32_t d = 0; d < pr->n_dev; d++)
        if (ggfit__backend(pr->devs[d]->kind)->offload != GGFIT_OFFLOAD_NEVER)
            return false;
    return true;
}

ggfit_status ggfit__resolve_flash_attn(proj *pr, const int32_t *placement)
{
    /* Without a memory module an FA node reads Q, K and V straight from the
     * layer's products, which run on the CPU when an override puts the
     * layer's weights there (one token is too few to offload them). */
    bool weights_moved = pr->arch->mem == GGFIT_MEM_NONE && pr->n_rules > 0;
    if (pr->p->flash_attn != GGFIT_FA_AUTO || ggfit_type_is_quantized(pr->p->type_v) ||
        pr->n_dev == 0 ||
        (!pr->p->no_kv_offload && pr->act > pr->hp->n_layer && !weights_moved) ||
        probe_keeps_fa(pr))
        return GGFIT_OK;
    ggfit_status rc = ggfit__graph_reserve(pr, placement, true);
    if (rc == GGFIT_EUNSUPPORTED)
        return GGFIT_OK;
    if (rc)
        return rc;
    if (pr->fa_mismatch)
        pr->out->flash_attn = false;
    return GGFIT_OK;
}
