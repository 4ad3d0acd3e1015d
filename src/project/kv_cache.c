/*
 * kv_cache.c - the KV cache (llama_kv_cache, llama_kv_cache_iswa): which
 * layers have cells, the sliding window's cells, K and V rows per layer
 * (transposed V rows padded to the widest layer's), MLA's K-only cache, the
 * cache types llama_init_from_model refuses.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "project/project.h"

bool ggfit__layer_is_swa(const proj *pr, uint32_t il, uint32_t period)
{
    const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
    if (li->nextn && !pr->arch->swa_nextn_pattern)
        return false;
    if (pr->swa_layers)
        return ggfit__model_swa_layer(pr->m, il, pr->swa_n);
    if (period == 0)
        return true;
    return pr->arch->swa_dense_first ? il % period != 0 : il % period < period - 1;
}

/* llama_init_from_model refuses a quantized cache whose blocks do not
 * divide the head (K or V) of a layer below n_layer() (the NextN blocks
 * are not looked at) when flash attention is not off. -fa auto counts as
 * on: it is asked before the probe, and a quantized V turns auto into on
 * anyway, so such a V is refused whatever -fa says (-fa off: in
 * ggfit__resolve_sizes). A K cache with -fa off is not checked, and runs
 * while its rows are whole blocks (ggfit__project_kv refuses the others:
 * ggml aborts on their views). */
ggfit_status ggfit__check_cache_blocks(proj *pr)
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
            bool swa = pr->swa && ggfit__layer_is_swa(pr, il, pr->period);
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

bool ggfit__layer_has_attn(const proj *pr, uint32_t il)
{
    const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
    if (pr->arch->mem == GGFIT_MEM_NONE)
        return false;   /* no memory module: no layer has KV cells */
    if (pr->p->ctx_mtp && pr->arch->mtp_kv_nextn)
        return li->nextn;   /* an MTP context's cache: the NextN blocks' */
    if (li->nextn && (pr->arch->mem != GGFIT_MEM_KV || !pr->arch->nextn_kv))
        return false;
    uint32_t from = pr->arch->kv_from ? pr->arch->kv_from(pr->m) : pr->arch->kv_from_start;
    if (from && il >= from)
        return false;   /* it reads an earlier layer's cache */
    switch (pr->arch->rec) {
    case GGFIT_REC_NONE: case GGFIT_REC_BOTH: return true;
    case GGFIT_REC_ALL: return false;
    case GGFIT_REC_NO_KV_HEADS: case GGFIT_REC_NEMOTRON_H: return li->n_head_kv > 0;
    case GGFIT_REC_INTERVAL: {
        int r = ggfit__model_recurrent(pr->m, il);   /* attention.recurrent_layers */
        if (r >= 0)
            return r == 0;
        uint32_t n = pr->hp->full_attn_interval ? pr->hp->full_attn_interval
                                                : pr->arch->rec_interval_default;
        return n && (il + 1) % n == 0;
    }
    }
    return true;
}

int ggfit__context_buft(proj *pr, uint32_t il)
{
    int d = pr->p->no_kv_offload ? -1 : ggfit__dev_layer(pr, il);
    return d < 0 ? ggfit__cpu_buft(pr) : ggfit__device_buft(pr, d);
}

void ggfit__add_context(proj *pr, int b, uint64_t bytes)
{
    pr->out->bufts[b].mem.context += GGFIT_PAD(bytes, pr->buft_align[b]);
}

/* Sliding window: the arch's period unless the file gives one, and the
 * cells of the SWA cache (llama_kv_cache_iswa). */
void ggfit__resolve_swa(proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    const ggfit_params *p = pr->p;
    uint64_t kv_size = pr->out->n_ctx_seq;
    /* The window in force: the architecture's rule (its window hook),
     * else the file's, else the architecture's default. */
    uint32_t n_swa = pr->arch->window ? pr->arch->window(pr->arch, pr->m)
                     : hp->n_swa      ? hp->n_swa
                                      : pr->arch->swa_default;
    /* The pattern as the architecture reads it (project/arch_keys.c): per
     * layer, or a period. */
    bool per_layer = ggfit__swa_per_layer(pr);
    uint32_t period = ggfit__swa_period(pr);
    bool swa = (n_swa > 0 || pr->arch->swa_always) && (per_layer || pr->arch->swa_period > 0) &&
               !(pr->arch->swa_needs_window && hp->n_swa == 0);
    uint64_t size_swa = kv_size;
    if (swa && !p->swa_full) {
        /* A unified cache holds every sequence's window; llama_kv_cache_dsv4
         * (compress_ratio) keeps one stream per sequence whatever -kvu says,
         * so its raw cache (and the graph's view of it) counts one. */
        bool unified = p->kv_unified && !pr->arch->compress_ratio;
        uint64_t want = (uint64_t)n_swa * (unified ? p->n_seq : 1) + pr->out->n_ubatch;
        size_swa = GGFIT_PAD(want < kv_size ? want : kv_size, 256);
    }
    pr->swa = swa;
    pr->period = period;
    pr->swa_layers = per_layer;
    pr->swa_n = hp->n_layer - (pr->arch->swa_key_main ? hp->n_nextn : 0);
    pr->size_swa = size_swa;
}

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
        int b = ggfit__context_buft(pr, il);
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
    bool swa = pr->swa;
    uint32_t period = pr->period;
    uint64_t size_swa = pr->size_swa;

    uint32_t nv_max = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
        bool s = swa && ggfit__layer_is_swa(pr, il, period);
        uint32_t nv = (s ? hp->n_embd_head_v_swa : hp->n_embd_head_v) * li->n_head_kv;
        if (nv > nv_max)
            nv_max = nv;
    }

    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
        if (pr->arch->mem == GGFIT_MEM_RECURRENT || !ggfit__layer_has_attn(pr, il))
            continue;
        bool s = swa && ggfit__layer_is_swa(pr, il, period);
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
        int b = ggfit__context_buft(pr, il);
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
            ggfit__add_context(pr, ggfit__context_buft(pr, il), rk * (uint64_t)kv_size * n_stream);
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
            ggfit__add_context(pr, ggfit__context_buft(pr, il), rv * (uint64_t)kv_size * n_stream);
    }

    return GGFIT_OK;
}
