/*
 * layers.c - what each layer holds, worked out once per projection for the
 * stages after the weights: the sliding window in force (the architecture's
 * period or the file's per-layer pattern, llama_hparams::is_swa_impl) and
 * the cells of the SWA cache (llama_kv_cache_iswa), which layers have KV
 * cells (llama_kv_cache's layer filter) and which recurrent state
 * (llama_memory_recurrent's), the buffer type each layer's cache goes to,
 * and for the graph the buffer type of each layer's weights and the
 * backend that runs it.
 */
#include <stdlib.h>

#include "base/base.h"
#include "llama/build.h"
#include "versions/version.h"
#include "project/layers.h"

/* Whether the architecture takes the sliding-window pattern per layer
 * (is_swa_impl), in the form it reads it (ggfit_swa_key). */
static bool swa_per_layer(const proj *pr)
{
    uint64_t len;
    int form = ggfit__model_swa_key(pr->m, &len);
    switch (pr->arch->swa_key) {
    case GGFIT_SWA_KEY_LAYERS: return form != GGFIT_KEY_ABSENT;
    case GGFIT_SWA_KEY_EITHER: case GGFIT_SWA_KEY_ARRAY: return form == GGFIT_KEY_ARRAY;
    default: return false;
    }
}

/* The period it takes otherwise: the file's scalar where it reads one,
 * else its swa_period. */
static uint32_t swa_period(const proj *pr)
{
    uint64_t len;
    bool scalar = ggfit__model_swa_key(pr->m, &len) == GGFIT_KEY_SCALAR;
    bool reads = pr->arch->swa_key == GGFIT_SWA_KEY_EITHER ||
                 (pr->arch->swa_key == GGFIT_SWA_KEY_PERIOD && pr->arch->swa_period > 0);
    return scalar && reads ? pr->hp->swa_pattern : pr->arch->swa_period;
}

/* Sliding window: the arch's period unless the file gives one, and the
 * cells of the SWA cache (llama_kv_cache_iswa). */
static void resolve_swa(proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    const ggfit_params *p = pr->p;
    uint64_t kv_size = pr->out->n_ctx_seq;
    /* The window in force: the architecture's rule (its window hook),
     * else the file's, else the architecture's default. */
    uint32_t n_swa = pr->arch->window_at ? pr->arch->window_at(pr->arch, pr->m,
                                                               pr->p->llama_build)
                     : pr->arch->window  ? pr->arch->window(pr->arch, pr->m)
                     : hp->n_swa         ? hp->n_swa
                                         : pr->arch->swa_default;
    /* The pattern as the architecture reads it (arch_keys.c checked it):
     * per layer, or a period. */
    bool per_layer = swa_per_layer(pr);
    uint32_t period = swa_period(pr);
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

static bool layer_is_swa(const proj *pr, uint32_t il, uint32_t period)
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

/* Whether layer il has KV cells (the memory's layer filter). */
static bool layer_has_attn(const proj *pr, uint32_t il)
{
    const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
    if (pr->arch->mem == GGFIT_MEM_NONE)
        return false;   /* no memory module: no layer has KV cells */
    if (pr->p->ctx_mtp && pr->arch->mtp_kv_nextn)
        return li->nextn;   /* an MTP context's cache: the NextN blocks' */
    if (li->nextn && !pr->arch->nextn_kv)
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

/* Whether layer il holds recurrent state (llama_memory_recurrent's filter). */
static bool layer_has_state(const proj *pr, uint32_t il)
{
    const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
    if (li->nextn || (pr->p->ctx_mtp && pr->arch->mtp_kv_nextn))
        return false;   /* an MTP context of a hybrid has attention only */
    switch (pr->arch->rec) {
    case GGFIT_REC_NONE: return false;
    case GGFIT_REC_ALL: case GGFIT_REC_BOTH: return true;
    case GGFIT_REC_NO_KV_HEADS: return li->n_head_kv == 0;
    case GGFIT_REC_NEMOTRON_H: return li->n_head_kv == 0 && li->n_ff == 0;
    case GGFIT_REC_INTERVAL: {
        /* attention.recurrent_layers, when given, decides */
        int r = ggfit__model_recurrent(pr->m, il);
        if (r >= 0)
            return r == 1;
        uint32_t n = pr->hp->full_attn_interval ? pr->hp->full_attn_interval
                                                : pr->arch->rec_interval_default;
        return !n || (il + 1) % n != 0;
    }
    }
    return false;
}

ggfit_status ggfit__resolve_layers(proj *pr)
{
    resolve_swa(pr);
    /* The caches and the CPU backend's compute need the CPU's buffer type:
     * it exists from here on, after the weights' (as llama.cpp makes it). */
    ggfit__cpu_buft(pr);
    uint32_t n_layer = pr->hp->n_layer;
    int32_t *arrays = ggfit__malloc((size_t)(4 * (n_layer + 1)) * sizeof *arrays);
    if (!arrays)
        return ggfit__fail(pr->err, GGFIT_ENOMEM, "out of memory");
    pr->layer_buft = arrays;
    pr->kv_buft = arrays + n_layer + 1;
    pr->layer_backend = arrays + 2 * (n_layer + 1);
    pr->layer_flags = (uint8_t *)(arrays + 3 * (n_layer + 1));
    for (uint32_t il = 0; il <= n_layer; il++) {
        int d = ggfit__dev_layer(pr, il);
        pr->layer_buft[il] = d < 0 ? ggfit__cpu_compute_buft(pr) : ggfit__device_buft(pr, d);
        pr->layer_backend[il] = d < 0 ? (int32_t)pr->n_dev : d;
        pr->kv_buft[il] = -1;
        pr->layer_flags[il] = 0;
        if (il == n_layer)
            continue;
        /* llama_kv_cache's dev_layer: the layer's device unless -nkvo */
        int dk = pr->p->no_kv_offload ? -1 : d;
        pr->kv_buft[il] = dk < 0 ? ggfit__cpu_buft(pr) : ggfit__device_buft(pr, dk);
        if (pr->swa && layer_is_swa(pr, il, pr->period))
            pr->layer_flags[il] |= GB_LAYER_SWA;
        if (pr->arch->mem != GGFIT_MEM_RECURRENT && layer_has_attn(pr, il))
            pr->layer_flags[il] |= GB_LAYER_ATTN;
        if (layer_has_state(pr, il))
            pr->layer_flags[il] |= GB_LAYER_STATE;
    }
    return GGFIT_OK;
}
