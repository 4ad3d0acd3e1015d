/*
 * context.c - what llama_context does with the flags: the sizes it
 * resolves (n_ctx, batches, sequences and streams), the compute graph it
 * reserves (graph_reserve: the prompt ubatch's graph through the
 * scheduler and ggml-alloc, llama/graph.c and src/models/ building it) and
 * the -fa auto probe (resolve_fused_ops).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ggml/backend.h"
#include "ggml/sched.h"
#include "llama/build.h"
#include "llama/debug.h"
#include "llama/graph_cache.h"
#include "llama/project.h"

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

/* llama_model_has_encoder: T5, T5ENCODER, EAGLE3, DFLASH. */
static bool has_encoder(const proj *pr)
{
    static const char *const names[] = { "t5", "t5encoder", "eagle3", "dflash" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(pr->arch->name, names[i]))
            return true;
    return false;
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
ggfit_status ggfit__resolve_sizes(proj *pr)
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

/* Hands the graph to a model of llama.cpp's scheduler, as llama.cpp's
 * sched_reserve does, and replays ggml-alloc on what it returns: the bytes
 * per backend are the compute buffers. Returns GGFIT_EUNSUPPORTED when the
 * configuration is outside what the models cover (the caller estimates). */
static ggfit_status schedule_and_allocate(proj *pr, const gg_graph *g, const int32_t *layer_backend,
                                 bool probe, gentry *c)
{
    ggfit_sched_prep *prep = c ? &c->prep : NULL;
    ggfit_projection *o = pr->out;
    int n_backends = (int)pr->n_dev + 1;
    if (n_backends > GGFIT_SCHED_MAX_BACKENDS || o->n_bufts > GGFIT_SCHED_MAX_BUFTS)
        return GGFIT_EUNSUPPORTED;
    ggfit_sched_buft bufts[GGFIT_SCHED_MAX_BUFTS];
    ggfit_sched_backend backends[GGFIT_SCHED_MAX_BACKENDS];
    for (uint32_t b = 0; b < o->n_bufts; b++)
        bufts[b] = (ggfit_sched_buft){ .name = o->bufts[b].name, .is_host = o->bufts[b].is_host,
                                       .alignment = pr->buft_align[b],
                                       .max_size = UINT64_MAX };
    uint32_t cpu_usable = 0;
    for (uint32_t b = 0; b < o->n_bufts; b++)
        if (o->bufts[b].device < 0)   /* host buffers, AMX and CPU_REPACK */
            cpu_usable |= 1u << b;
    for (uint32_t d = 0; d < pr->n_dev; d++) {
        int buft = ggfit__device_buft(pr, (int)d);
        backends[d] = (ggfit_sched_backend){ .name = pr->devs[d]->name, .buft = buft,
                                             .bufts = 1u << buft,
                                             .offload = ggfit__backend(pr->devs[d]->kind)->offload,
                                             .offload_min_batch = 32 };
    }
    /* The CPU backend computes in the first device's host buffer type when it
     * has one (CUDA_Host), else in plain CPU memory. */
    int cpu_compute = ggfit__cpu_compute_buft(pr);
    bufts[cpu_compute].alignment = 32;
    backends[pr->n_dev] = (ggfit_sched_backend){ .name = "CPU", .buft = cpu_compute,
                                                 .bufts = cpu_usable | (1u << cpu_compute),
                                                 .is_cpu = true,
                                                 .offload = GGFIT_OFFLOAD_NEVER };
    /* Pipeline parallelism: several GPUs that run asynchronously with
     * events, every layer offloaded, no overrides. */
    bool async = pr->n_dev > 1;
    for (uint32_t d = 0; d < pr->n_dev; d++)
        async &= ggfit__backend(pr->devs[d]->kind)->async;
    bool pipeline = async && pr->act > pr->hp->n_layer && pr->p->split_mode == GGFIT_SPLIT_LAYER &&
                    !pr->p->no_kv_offload && pr->n_rules == 0;

    ggfit_sched_in in = { .t = g->t, .n_tensors = g->n, .leafs = g->leafs, .nodes = g->nodes,
                          .n_leafs = g->n_leafs, .n_nodes = g->n_nodes, .backends = backends,
                          .n_backends = n_backends, .bufts = bufts, .n_bufts = (int)o->n_bufts,
                          .n_copies = pipeline ? GGFIT_SCHED_MAX_COPIES : 1, .cur_copy = 0,
                          .op_offload = true, .backends_only = probe,
                          .for_galloc = !g->names,
                          .work = pr->cache ? pr->cache->work : NULL };
    uint64_t sizes[GGFIT_SCHED_MAX_BACKENDS];
    ggfit_sched_out so;
    char *serr = NULL;
    /* A cached graph's structural work is done once (prep empty until
     * then); without it the split does it all, and reports what fails. */
    if (prep && !prep->tf && ggfit__sched_prepare(&in, prep, &serr) != GGFIT_OK) {
        ggfit_free(serr);
        serr = NULL;
    }
    in.prep = prep && prep->tf ? prep : NULL;
    /* A kept graph's projections may resume the scheduler's last split. */
    ggfit_status rc = ggfit__gcache_split(pr->cache, probe || g->names ? NULL : c, &in, &so, &serr);
    if (!rc && g->names && !probe)
        ggfit__dump_scheduled(&in, &so);
    if (rc) {
        ggfit_free(serr);
        return rc == GGFIT_ENOMEM ? rc : GGFIT_EUNSUPPORTED;
    }
    if (probe) {
        /* llama.cpp keeps flash attention only if every FA node runs on
         * its layer's device (llama_context::resolve_fused_ops). */
        pr->fa_mismatch = false;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const gg_tensor *t = &g->t[g->nodes[i]];
            if (t->op != GGFIT_OP_FLASH_ATTN_EXT || t->src[1] < 0)
                continue;
            /* The node's layer (llama.cpp reads it from the node's name),
             * which may read another layer's cache (kv_from_start). */
            int32_t k = t->src[1], root = g->t[k].view_src >= 0 ? g->t[k].view_src : k;
            int32_t il = t->il >= 0 ? t->il : g->t[root].il;
            if (il >= 0 && so.backend_of[g->nodes[i]] != layer_backend[il])
                pr->fa_mismatch = true;
        }
        ggfit__sched_free(&so);
        return GGFIT_OK;
    }
    struct ggfit__gcache *cache = pr->cache;
    rc = ggfit__galloc_reserve_trusted(so.t, so.n_leafs, so.n_nodes, so.n_backends, so.galloc,
                                       sizes, cache ? &cache->work[GGFIT_SCHED_WORK] : NULL,
                                       &serr);
    ggfit_free(serr);
    if (!rc) {
        for (int b = 0; b < n_backends; b++)
            o->bufts[backends[b].buft].mem.compute += sizes[b];
    }
    ggfit__sched_free(&so);
    if (rc)
        return rc == GGFIT_ENOMEM ? rc : GGFIT_EUNSUPPORTED;
    o->compute_estimated = false;
    return GGFIT_OK;
}



ggfit_status ggfit__graph_compute(proj *pr, const int32_t *placement, bool probe)
{
    const ggfit_hparams *hp = pr->hp;
    ggfit_projection *o = pr->out;
    uint32_t n_layer = hp->n_layer;
    int32_t *arrays = ggfit__malloc((size_t)(4 * (n_layer + 1)) * sizeof *arrays);
    if (!arrays)
        return ggfit__fail(pr->err, GGFIT_ENOMEM, "out of memory");
    uint8_t *layer_flags = (uint8_t *)(arrays + 3 * (n_layer + 1));
    int32_t *layer_buft = arrays, *kv_buft = arrays + n_layer + 1,
            *layer_backend = arrays + 2 * (n_layer + 1);
    for (uint32_t il = 0; il <= n_layer; il++) {
        int d = ggfit__dev_layer(pr, il);
        layer_buft[il] = d < 0 ? ggfit__cpu_compute_buft(pr) : ggfit__device_buft(pr, d);
        kv_buft[il] = il < n_layer ? ggfit__context_buft(pr, il) : -1;
        layer_backend[il] = d < 0 ? (int32_t)pr->n_dev : d;
        layer_flags[il] = 0;
        if (il < n_layer) {
            if (pr->swa && ggfit__layer_is_swa(pr, il, pr->period))
                layer_flags[il] |= GB_LAYER_SWA;
            if (pr->arch->mem != GGFIT_MEM_RECURRENT && ggfit__layer_has_attn(pr, il))
                layer_flags[il] |= GB_LAYER_ATTN;
            if (ggfit__layer_has_state(pr, il))
                layer_flags[il] |= GB_LAYER_STATE;
        }
    }
    /* The reserved ubatch: min(n_ctx, n_ubatch) tokens, a multiple of the
     * sequences (llama_context::graph_reserve). */
    uint32_t n_seqs = o->n_seq, n_tokens = o->n_ubatch < o->n_ctx ? o->n_ubatch : o->n_ctx;
    /* The outputs stay as asked (n_outputs_max is n_batch, never less)
     * when the tokens are rounded up to a multiple of the sequences. */
    uint32_t n_outputs = n_tokens;
    /* sched_reserve: n_outputs_pp = min(n_tokens, cparams.n_outputs_max),
     * n_outputs_max being -b unless the flags set it (llama-server: one
     * per slot) and the model has no encoder (llama_model_has_encoder). */
    if (pr->p->n_outputs_max && pr->p->n_outputs_max < n_outputs && !has_encoder(pr))
        n_outputs = pr->p->n_outputs_max;
    n_tokens = (n_tokens + n_seqs - 1) / n_seqs * n_seqs;
    if (probe)   /* the FA probe: one token per sequence, FA on */
        n_tokens = n_outputs = n_seqs;
    gb_params gp = {
        .m = pr->m, .arch = pr->arch, .n_tokens = n_tokens, .n_outputs = n_outputs,
        .n_seqs = n_seqs, .n_stream = o->n_stream, .n_kv = o->n_ctx_seq,
        .n_kv_swa = (uint32_t)pr->size_swa, .swa = pr->swa, .swa_period = pr->period,
        .flash_attn = probe || o->flash_attn, .v_trans = pr->p->flash_attn == GGFIT_FA_OFF,
        .type_k = pr->p->type_k, .type_v = pr->p->type_v,
        .placement = placement, .tied_output_buft = pr->tied_buft, .kv_buft = kv_buft,
        .layer_buft = layer_buft, .layer_backend = layer_backend, .layer_flags = layer_flags,
        /* The graph callback pins "norm" (full offload) and, with -nkvo, the
         * attention output to the CPU (ggml_backend_sched_set_tensor_backend).
         * The FA probe splits the graph as built, so the pins hold there; the
         * measured reserve (ggml_backend_sched_reserve_size) resets the
         * scheduler first, which forgets every pin. */
        .pin_norms = probe && (pr->act > n_layer || n_tokens < 32),
        .no_kv_offload = probe && pr->p->no_kv_offload, .cpu_backend = (int32_t)pr->n_dev,
        .pooling = o->embeddings ? o->pooling : -1,
        .mtp = pr->p->ctx_mtp,
        .n_rs_seq = pr->arch->rs_rollback ? pr->p->n_rs_seq : 0,
    };
    gg_graph local, *g = &local;
    gg_init(g);
    bool names = getenv("GGFIT_DEBUG_GRAPH") != NULL;
    ggfit_status rc = GGFIT_OK;
    struct ggfit__gcache *cache = names || !(ggfit__cache_pieces(pr->cache) & GGFIT_CACHE_GRAPHS)
                                      ? NULL : pr->cache;
    gkey key;
    ggfit__gkey_make(&key, &gp);
    gentry *c = ggfit__gcache_find(cache, &key);
    if (c) {
        /* Same graph as an earlier projection: only where weights and
         * caches live, and the layers' devices, have changed. */
        g = &c->g;
        ggfit__gcache_retarget(g, &c->moving, pr->m, placement, kv_buft, layer_backend,
                               pr->tied_buft);
        int moved = ggfit__gcache_retarget_dups(g, &c->moving, pr->m, placement, layer_buft);
        if (moved > 0) {
            ggfit__sched_prep_free(&c->prep);   /* the lists change */
            ggfit__gentry_changed(c);
            c->moving.valid = false;            /* and the tensors */
            if (!gg_reexpand(g))
                moved = -1;
        }
        if (moved < 0) {
            c->valid = false;
            rc = GGFIT_ENOMEM;
        }
    } else {
        if (cache) {
            /* Built in a slot's memory, pages already touched. */
            c = ggfit__gcache_victim(cache, &key);
            c->valid = false;
            ggfit__sched_prep_free(&c->prep);
            ggfit__gentry_changed(c);
            c->moving.valid = false;
            gg_reset(&c->g);
            g = &c->g;
        }
        g->names = names;
        /* A graph has up to about ten tensors per weight (8 in the MoE
         * graphs with expert biases); a hint, bounded (11 MB) whatever a
         * header claims, so a failure here is not one. */
        uint64_t hint = ggfit_model_n_tensors(pr->m) * 10 + 1024;
        (void)gg_reserve(g, (uint32_t)(hint < (1u << 16) ? hint : (1u << 16)));
        rc = ggfit__build_graph(g, &gp);
        if (rc == GGFIT_OK && names && !probe)
            ggfit__dump_graph(g);
        if (rc == GGFIT_OK && c) {
            c->key = key;
            c->valid = true;
            c->used = ++cache->clock;
            (void)ggfit__gcache_moving_make(g, &c->moving);   /* for the resume */
        }
    }
    if (rc == GGFIT_OK)
        rc = schedule_and_allocate(pr, g, layer_backend, probe, c && c->valid ? c : NULL);
    gg_free(&local);
    ggfit_free(arrays);
    if (rc == GGFIT_ENOMEM)
        return ggfit__fail(pr->err, rc, "out of memory");
    return rc;
}

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
    ggfit_status rc = ggfit__graph_compute(pr, placement, true);
    if (rc == GGFIT_EUNSUPPORTED)
        return GGFIT_OK;
    if (rc)
        return rc;
    if (pr->fa_mismatch)
        pr->out->flash_attn = false;
    return GGFIT_OK;
}

