/*
 * sizes.c - the sizes llama_context makes of the flags (its constructor,
 * cparams): n_ctx, batches, sequences and streams, the pooling with
 * --embedding, and what it refuses before anything is allocated.
 */
#include <stdio.h>

#include "base/base.h"
#include "project/sizes.h"

/* hparams.causal_attn: "<arch>.attention.causal", true when absent;
 * encoders (BERT) say false. */
static bool causal_attn(const proj *pr)
{
    if (pr->arch->non_causal)
        return false;
    const ggfit_gguf *g = ggfit_model_gguf(pr->m);
    char key[160];
    snprintf(key, sizeof key, "%s.attention.causal", pr->hp->arch);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v) || v.type != GGFIT_GGUF_BOOL)
        return true;
    return v.u != 0;
}

/* The pooling llama_context uses with --embedding (its constructor):
 * --pooling, else the model's <arch>.pooling_type (hparams.pooling_type,
 * none when the file gives none). */
static int32_t pooling_type(const proj *pr)
{
    if (pr->p->pooling != GGFIT_POOLING_UNSPECIFIED)
        return pr->p->pooling;
    const ggfit_gguf *g = ggfit_model_gguf(pr->m);
    char key[160];
    snprintf(key, sizeof key, "%s.pooling_type", pr->hp->arch);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v))
        return GGFIT_POOLING_NONE;
    int64_t x = v.type == GGFIT_GGUF_INT8 || v.type == GGFIT_GGUF_INT16 ||
                v.type == GGFIT_GGUF_INT32 || v.type == GGFIT_GGUF_INT64 ? v.i : (int64_t)v.u;
    return x >= GGFIT_POOLING_NONE && x <= GGFIT_POOLING_RANK ? (int32_t)x : GGFIT_POOLING_NONE;
}

/* The context, batch and streams llama_context makes of the flags
 * (llama_context ctor, cparams), and -fa\'s first word. */
ggfit_status ggfit__resolve_sizes(const proj *pr)
{
    const ggfit_params *p = pr->p;
    ggfit_projection *o = pr->out;
    uint64_t n_ctx = p->n_ctx ? p->n_ctx : pr->hp->n_ctx_train;
    if (n_ctx == 0)
        return ggfit__fail(pr->err, GGFIT_EINVAL,
                           "%s: the model gives no context_length; pass -c", ggfit__proj_path(pr));
    uint32_t n_seq = p->n_seq ? p->n_seq : 1;
    /* llama-server with embeddings (tools/server/server.cpp, llama_server):
     * a prompt must fit in one ubatch, so -b is cut down to -ub. */
    uint64_t n_batch = p->embeddings && p->n_ubatch && p->n_batch > p->n_ubatch ? p->n_ubatch
                                                                                : p->n_batch;
    /* With causal attention the batch is limited by the context; without
     * (an encoder) it is not. */
    n_batch = n_batch < n_ctx || !causal_attn(pr) ? n_batch : n_ctx;
    uint64_t n_ubatch = p->n_ubatch ? p->n_ubatch : n_batch;
    if (n_ubatch > n_batch)
        n_ubatch = n_batch;
    n_ctx = GGFIT_PAD(n_ctx, 256);
    uint64_t n_ctx_seq = n_ctx;
    if (!p->kv_unified) {
        n_ctx_seq = GGFIT_PAD(n_ctx / n_seq, 256);
        n_ctx = n_ctx_seq * n_seq;
    }
    if (n_ctx > UINT32_MAX)
        return ggfit__fail(pr->err, GGFIT_EINVAL, "context %llu is too large",
                           (unsigned long long)n_ctx);
    o->n_ctx = (uint32_t)n_ctx;
    o->n_ctx_seq = (uint32_t)n_ctx_seq;
    o->n_batch = (uint32_t)n_batch;
    o->n_ubatch = (uint32_t)n_ubatch;
    o->n_seq = n_seq;
    o->n_stream = p->kv_unified ? 1 : n_seq;
    /* --embedding: the graph pools; the output buffer that also grows
     * (output_reserve: n_embd floats per sequence beside the logits) is not
     * in llama.cpp's memory breakdown, so not in the projection either. */
    o->embeddings = p->embeddings;
    o->pooling = p->embeddings ? pooling_type(pr) : GGFIT_POOLING_NONE;
    /* -fa auto keeps flash attention on every backend ggfit models. */
    o->flash_attn = p->flash_attn != GGFIT_FA_OFF;
    /* llama_init_from_model: a quantized V turns -fa auto into on, and is
     * refused with flash attention off (-fa off, or an architecture that
     * turns it off: then no -fa helps). */
    if (!o->flash_attn && ggfit_type_is_quantized(p->type_v))
        return ggfit__fail(pr->err, GGFIT_EINVAL,
                           "a quantized V cache (-ctv %s) needs flash attention (%s)",
                           ggfit_type_name(p->type_v),
                           pr->arch->no_flash_attn ? "which llama.cpp turns off for this "
                                                     "architecture: use -ctv f16"
                                                   : "-fa on or auto");
    /* The graph reserve then aborts in build_pooling (llama-graph.cpp). */
    if (p->embeddings && pr->arch->embeddings_abort)
        return ggfit__fail(pr->err, GGFIT_EINVAL, "%s: --embedding: %s", ggfit__proj_path(pr),
                           pr->arch->embeddings_abort);
    return GGFIT_OK;
}
