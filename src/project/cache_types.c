/*
 * cache_types.c - the cache types llama_init_from_model refuses before it
 * makes the cache: different K and V types where the model needs them
 * equal, and quantized blocks that do not divide a head.
 */
#include "base/base.h"
#include "llama/build.h"
#include "project/cache_types.h"

/* llama_init_from_model refuses a quantized cache whose blocks do not
 * divide the head (K or V) of a layer below n_layer() (the NextN blocks
 * are not looked at) when flash attention is not off. -fa auto counts as
 * on: it is asked before the probe, and a quantized V turns auto into on
 * anyway, so such a V is refused whatever -fa says (-fa off: in
 * sizes.c). A K cache with -fa off is not checked, and runs while its rows
 * are whole blocks (kv_cache.c refuses the others: ggml aborts on their
 * views). */
ggfit_status ggfit__check_cache_types(const proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    const ggfit_params *p = pr->p;
    bool mla = hp->n_embd_head_k_mla && hp->n_embd_head_v_mla;
    if ((pr->arch->same_kv_types || (pr->arch->mla_same_kv_types && mla)) &&
        p->type_k != p->type_v)
        return ggfit__fail(pr->err, GGFIT_EINVAL,
                           "%s: the model does not support different K (%s) and V (%s) cache "
                           "types; llama.cpp refuses them", ggfit__proj_path(pr),
                           ggfit_type_name(p->type_k), ggfit_type_name(p->type_v));
    if (p->flash_attn == GGFIT_FA_OFF)
        return GGFIT_OK;
    for (int kv = 0; kv < 2; kv++) {
        uint32_t type = kv ? p->type_v : p->type_k;
        if (!ggfit_type_is_quantized(type))
            continue;
        uint32_t blck = ggfit_type_block_size(type);
        for (uint32_t il = 0; il < hp->n_layer - hp->n_nextn; il++) {
            bool swa = (pr->layer_flags[il] & GB_LAYER_SWA) != 0;
            uint32_t head = kv ? (swa ? hp->n_embd_head_v_swa : hp->n_embd_head_v)
                               : (swa ? hp->n_embd_head_k_swa : hp->n_embd_head_k);
            if (blck && head % blck != 0)
                return ggfit__fail(pr->err, GGFIT_EINVAL,
                                   "%s: %c cache type %s with block size %u does not divide "
                                   "n_embd_head_%c=%u (layer %u); llama.cpp refuses it %s",
                                   ggfit__proj_path(pr), kv ? 'V' : 'K', ggfit_type_name(type),
                                   blck, kv ? 'v' : 'k', head, il,
                                   kv ? "with any -fa (a quantized V cache needs flash "
                                        "attention): use -ctv f16, bf16 or f32"
                                      : "unless -fa off");
        }
    }
    return GGFIT_OK;
}
