/*
 * kv_cache.c - the KV cache (llama_kv_cache, llama_kv_cache_iswa): K and V
 * rows per layer with cells (layers.c says which, and which attend over
 * the sliding window's cells), transposed V rows padded to the widest
 * layer's, MLA's K-only cache, the indexer's caches, DeepSeek V4's
 * compressed caches. llama_kv_cache_dsa_iswa (dots3note) is the iSWA
 * K-only cache (the window's cells for the sliding-window layers, kv_size
 * for the others) with the indexer cache beside it (index_k: the full
 * layers, kv_size cells), which the loops below already make.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "llama/build.h"
#include "project/kv_cache.h"

/* K rows of n values of the cache type, or an error naming what. */
static ggfit_status dsv4_row(proj *pr, uint32_t il, uint32_t n, const char *what, uint64_t *rk)
{
    *rk = ggfit_row_bytes(pr->p->type_k, n);
    if (n && !*rk)
        return ggfit__fail(pr->err, GGFIT_EINVAL,
                           "%s: cache type %s needs rows that are whole blocks; layer %u "
                           "has %s rows of %u", ggfit__proj_path(pr),
                           ggfit_type_name(pr->p->type_k), il, what, n);
    return GGFIT_OK;
}

/* One compressor state (llama_dsv4_comp_state): a kv and a score tensor,
 * f32, rows x n per stream. */
static void dsv4_state(proj *pr, int b, uint64_t n, uint64_t rows, uint64_t n_stream)
{
    for (int t = 0; t < 2; t++)
        ggfit__add_context(pr, b, ggfit_row_bytes(GGFIT_TYPE_F32, n) * rows * n_stream);
}

/* llama_kv_cache_dsv4 (DeepSeek V4), one stream per sequence whatever -kvu
 * says: a raw K-only cache of every layer, NextN blocks included
 * (llama_kv_cache_iswa whose layers are all sliding-window, the window
 * counted once); K-only caches of the compressed rows (kv_size / ratio
 * rounded up, padded to 256) of the CSA (ratio 4) and HCA (128) layers
 * and of the CSA layers' indexer keys (one head); and for the trunk's
 * compressed layers the compressors' f32 states (llama_dsv4_comp_state:
 * CSA 8 rows of 2 heads, HCA 128 rows of one, the indexer's 8 rows of 2
 * indexer heads), no rollback snapshots (n_rs_seq 0). */
static ggfit_status project_dsv4(proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    const ggfit_projection *o = pr->out;
    uint64_t n_stream = o->n_seq, kv_size = o->n_ctx_seq;
    uint64_t raw = kv_size;
    if (!pr->p->swa_full) {
        uint64_t want = (uint64_t)hp->n_swa + o->n_ubatch;
        raw = GGFIT_PAD(want < kv_size ? want : kv_size, 256);
    }
    uint64_t csa = GGFIT_PAD((kv_size + 3) / 4, 256), hca = GGFIT_PAD((kv_size + 127) / 128, 256);
    uint32_t n_trunk = hp->n_layer - hp->n_nextn;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        uint32_t nk = hp->n_embd_head_k_swa * ggfit_model_layer(pr->m, il)->n_head_kv;
        uint32_t ratio = pr->arch->compress_ratio(pr->m, il);
        uint32_t ni = ratio == 4 && pr->arch->index_k ? pr->arch->index_k(pr->m, il) : 0;
        uint64_t rk, ri;
        ggfit_status rc = dsv4_row(pr, il, nk, "K", &rk);
        if (!rc)
            rc = dsv4_row(pr, il, ni, "indexer K", &ri);
        if (rc)
            return rc;
        if (ratio != 0 && ratio != 4 && ratio != 128)
            return ggfit__fail(pr->err, GGFIT_EINVAL,
                               "%s: layer %u has compression ratio %u; llama.cpp knows 0, 4 "
                               "and 128 only", ggfit__proj_path(pr), il, ratio);
        int b = pr->kv_buft[il];
        ggfit__add_context(pr, b, rk * raw * n_stream);
        if (ratio == 4) {
            ggfit__add_context(pr, b, rk * csa * n_stream);
            ggfit__add_context(pr, b, ri * csa * n_stream);
        } else if (ratio == 128) {
            ggfit__add_context(pr, b, rk * hca * n_stream);
        }
        if (il >= n_trunk)
            continue;
        if (ratio == 4) {
            dsv4_state(pr, b, 2 * (uint64_t)hp->n_embd_head_k, 8, n_stream);
            dsv4_state(pr, b, 2 * (uint64_t)ni, 8, n_stream);
        } else if (ratio == 128) {
            dsv4_state(pr, b, hp->n_embd_head_k, 128, n_stream);
        }
    }
    return GGFIT_OK;
}

/* The KV cache of every attention layer: K and V rows per cell and
 * stream, the SWA layers with the window's cells (llama_kv_cache ctor). */
ggfit_status ggfit__project_kv(proj *pr)
{
    if (pr->arch->compress_ratio)
        return project_dsv4(pr);
    const ggfit_hparams *hp = pr->hp;
    const ggfit_params *p = pr->p;
    ggfit_projection *o = pr->out;
    uint32_t n_stream = o->n_stream, kv_size = o->n_ctx_seq;
    bool mla = hp->n_embd_head_k_mla && hp->n_embd_head_v_mla;
    uint64_t size_swa = pr->size_swa;

    uint32_t nv_max = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
        bool s = (pr->layer_flags[il] & GB_LAYER_SWA) != 0;
        uint32_t nv = (s ? hp->n_embd_head_v_swa : hp->n_embd_head_v) * li->n_head_kv;
        if (nv > nv_max)
            nv_max = nv;
    }

    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
        if (!(pr->layer_flags[il] & GB_LAYER_ATTN))
            continue;
        bool s = (pr->layer_flags[il] & GB_LAYER_SWA) != 0;
        uint64_t cells = s ? size_swa : kv_size;
        uint32_t nk = (s ? hp->n_embd_head_k_swa : hp->n_embd_head_k) * li->n_head_kv;
        /* The V cache is transposed, its rows padded to the widest layer's,
         * only when flash attention was off as the cache was made (-fa off). */
        uint32_t nv = p->flash_attn != GGFIT_FA_OFF
                          ? (s ? hp->n_embd_head_v_swa : hp->n_embd_head_v) * li->n_head_kv
                          : nv_max;
        uint64_t rk = ggfit_row_bytes(p->type_k, nk), rv = ggfit_row_bytes(p->type_v, nv);
        if ((nk && !rk) || (!mla && nv && !rv))
            return ggfit__fail(pr->err, GGFIT_EINVAL,
                               "%s: cache types %s/%s need rows that are whole blocks; layer %u "
                               "has K rows of %u and V rows of %u",
                               ggfit__proj_path(pr), ggfit_type_name(p->type_k),
                               ggfit_type_name(p->type_v), il, nk, nv);
        int b = pr->kv_buft[il];
        ggfit__add_context(pr, b, rk * cells * n_stream);
        if (!mla)   /* MLA caches the compressed latent as K only */
            ggfit__add_context(pr, b, rv * cells * n_stream);
    }

    /* A second K-only cache (llama_kv_cache_dsa's indexer keys), on the same
     * devices, kv_size cells. */
    bool plain = pr->p->ctx_mtp && pr->arch->mtp_kv_nextn;   /* no second cache */
    for (uint32_t il = 0; pr->arch->index_k && !plain && il < hp->n_layer; il++) {
        uint32_t nk = pr->arch->index_k(pr->m, il);
        uint64_t rk = ggfit_row_bytes(p->type_k, nk);
        if (nk && !rk)
            return ggfit__fail(pr->err, GGFIT_EINVAL,
                               "%s: cache type %s needs rows that are whole blocks; layer %u "
                               "has indexer K rows of %u", ggfit__proj_path(pr),
                               ggfit_type_name(p->type_k), il, nk);
        if (nk)
            ggfit__add_context(pr, pr->kv_buft[il], rk * (uint64_t)kv_size * n_stream);
    }

    /* Its values, when it has them (every such layer has the same width, so
     * a transposed cache pads nothing). */
    for (uint32_t il = 0; pr->arch->index_v && !plain && il < hp->n_layer; il++) {
        uint32_t nv = pr->arch->index_v(pr->m, il);
        uint64_t rv = ggfit_row_bytes(p->type_v, nv);
        if (nv && !rv)
            return ggfit__fail(pr->err, GGFIT_EINVAL,
                               "%s: cache type %s needs rows that are whole blocks; layer %u "
                               "has indexer V rows of %u", ggfit__proj_path(pr),
                               ggfit_type_name(p->type_v), il, nv);
        if (nv)
            ggfit__add_context(pr, pr->kv_buft[il], rv * (uint64_t)kv_size * n_stream);
    }

    return GGFIT_OK;
}
