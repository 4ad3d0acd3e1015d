/*
 * graph_reserve.c - what llama_context's graph_reserve does: the prompt
 * ubatch's graph (llama/graph.c and src/models/ build it), split by a model
 * of llama.cpp's scheduler and allocated by ggml-alloc's; the bytes per
 * backend are the compute buffers. A kept graph (graph_cache.c) is
 * re-targeted rather than built again. The -fa auto probe (flash_attn.c)
 * and the compute buffers (compute.c) both reserve through it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ggml/backend.h"
#include "ggml/sched.h"
#include "llama/build.h"
#include "project/debug.h"
#include "project/graph_cache.h"
#include "project/proj.h"
#include "versions/version.h"

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
    /* What each device's buffer type asks beyond a node's bytes
     * (get_alloc_size: Metal's flash-attention scratch), in a copy of the
     * scheduled graph (which a kept split may lend). */
    const ggfit_gt *gt = so.t;
    ggfit_gt *own = NULL;
    size_t n_gt = so.n_leafs + so.n_nodes;
    for (size_t i = so.n_leafs; i < n_gt; i++) {
        int32_t b = so.t[i].backend;
        uint64_t extra = b >= 0 && (uint32_t)b < pr->n_dev && so.kind[i] == GGFIT_SCHED_ORIG
                             ? ggfit__backend_alloc_extra(pr->devs[b]->kind, g->t, so.origin[i],
                                                          pr->p->llama_build)
                             : 0;
        if (!extra)
            continue;
        if (!own) {
            own = ggfit__malloc(n_gt * sizeof *own);
            if (!own) {
                ggfit__sched_free(&so);
                return GGFIT_ENOMEM;
            }
            memcpy(own, so.t, n_gt * sizeof *own);
            gt = own;
        }
        own[i].size += extra;
    }
    struct ggfit__gcache *cache = pr->cache;
    rc = ggfit__galloc_reserve_trusted(gt, so.n_leafs, so.n_nodes, so.n_backends, so.galloc,
                                       sizes, cache ? &cache->work[GGFIT_SCHED_WORK] : NULL,
                                       &serr);
    free(own);
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

/* Copies n bytes to *at and moves it past them. */
static void key_put(char **at, const void *p, size_t n)
{
    memcpy(*at, p, n);
    *at += n;
}

/* The -fa auto probe's inputs into cache->fa_key, but for the context:
 * the graph's structure (its key less the cache's size), the devices and
 * buffer types the scheduler is handed, and where every weight, cache and
 * layer is. The scheduler assigns by where tensors live and by the ops,
 * never by a cache's size (offload_op counts the probe's tokens), so the
 * same inputs at another context find the same. Returns the key's size, 0
 * when out of memory. Calls the buffer-type lookups the split makes, in
 * its order, so that a hit leaves the same buffer types behind. */
static size_t probe_key(proj *pr, const gkey *key, const int32_t *placement)
{
    const ggfit_projection *o = pr->out;
    uint32_t n_layer = pr->hp->n_layer;
    int32_t dev[GGFIT_MAX_DEVICES][2];
    for (uint32_t d = 0; d < pr->n_dev; d++) {
        dev[d][0] = (int32_t)pr->devs[d]->kind;
        dev[d][1] = ggfit__device_buft(pr, (int)d);
    }
    int32_t head[] = { (int32_t)pr->n_dev, (int32_t)pr->i_gpu_start, (int32_t)pr->act,
                       (int32_t)pr->n_rules, (int32_t)pr->p->split_mode,
                       pr->p->no_kv_offload, pr->tied_buft, ggfit__cpu_compute_buft(pr) };
    size_t name_n = sizeof o->bufts[0].name, layers = (n_layer + 1) * sizeof(int32_t),
           tensors = ggfit_model_n_tensors(pr->m) * sizeof *placement;
    size_t size = sizeof *key + pr->n_dev * sizeof dev[0] + sizeof head +
                  o->n_bufts * (name_n + 3 * sizeof(int32_t)) + tensors + 3 * layers + n_layer;
    char *at = ggfit__buf_get(&pr->cache->fa_key, size);
    if (!at)
        return 0;
    gkey k;
    memcpy(&k, key, sizeof k);   /* its padding too: gkey_make zeroed it */
    k.n_kv = k.n_kv_swa = 0;
    key_put(&at, &k, sizeof k);
    key_put(&at, dev, pr->n_dev * sizeof dev[0]);
    key_put(&at, head, sizeof head);
    for (uint32_t i = 0; i < o->n_bufts; i++) {
        /* the name's bytes, zero-padded: equal names make equal keys */
        memset(at, 0, name_n);
        memcpy(at, o->bufts[i].name, strnlen(o->bufts[i].name, name_n));
        at += name_n;
        int32_t row[3] = { o->bufts[i].device, o->bufts[i].is_host, (int32_t)pr->buft_align[i] };
        key_put(&at, row, sizeof row);
    }
    key_put(&at, placement, tensors);
    key_put(&at, pr->layer_buft, layers);
    key_put(&at, pr->kv_buft, layers);
    key_put(&at, pr->layer_backend, layers);
    key_put(&at, pr->layer_flags, n_layer);
    return size;
}

ggfit_status ggfit__graph_reserve(proj *pr, const int32_t *placement, bool probe)
{
    const ggfit_hparams *hp = pr->hp;
    ggfit_projection *o = pr->out;
    uint32_t n_layer = hp->n_layer;
    const int32_t *layer_buft = pr->layer_buft, *kv_buft = pr->kv_buft,
                  *layer_backend = pr->layer_backend;
    /* The reserved ubatch: min(n_ctx, n_ubatch) tokens, a multiple of the
     * sequences (llama_context::graph_reserve). */
    uint32_t n_seqs = o->n_seq, n_tokens = o->n_ubatch < o->n_ctx ? o->n_ubatch : o->n_ctx;
    /* The outputs stay as asked (n_outputs_max is n_batch, never less)
     * when the tokens are rounded up to a multiple of the sequences. */
    uint32_t n_outputs = n_tokens;
    /* sched_reserve: n_outputs_pp = min(n_tokens, cparams.n_outputs_max),
     * n_outputs_max being -b unless the flags set it (llama-server: one
     * per slot) and the model has no encoder (its row's has_encoder). */
    if (pr->p->n_outputs_max && pr->p->n_outputs_max < n_outputs && !pr->arch->has_encoder)
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
        .layer_buft = layer_buft, .layer_backend = layer_backend, .layer_flags = pr->layer_flags,
        /* The graph callback pins "norm" (full offload) and, with -nkvo, the
         * attention output to the CPU (ggml_backend_sched_set_tensor_backend).
         * The FA probe splits the graph as built, so the pins hold there; the
         * measured reserve (ggml_backend_sched_reserve_size) resets the
         * scheduler first, which forgets every pin. */
        .pin_norms = probe && (pr->act > n_layer || n_tokens < 32),
        .no_kv_offload = probe && pr->p->no_kv_offload, .cpu_backend = (int32_t)pr->n_dev,
        .pooling = o->embeddings ? o->pooling : -1,
        .mtp = pr->p->ctx_mtp,
        .n_rs_seq = ggfit__rs_rollback(pr->arch, pr->p->llama_build) ? pr->p->n_rs_seq : 0,
        .llama_build = ggfit__llama_rules(pr->p->llama_build),
    };
    gg_graph local, *g = &local;
    gg_init(g);
    bool names = getenv("GGFIT_DEBUG_GRAPH") != NULL;
    ggfit_status rc = GGFIT_OK;
    struct ggfit__gcache *cache = names || !(ggfit__cache_pieces(pr->cache) & GGFIT_CACHE_GRAPHS)
                                      ? NULL : pr->cache;
    gkey key;
    ggfit__gkey_make(&key, &gp);
    bool memo = probe && cache && (ggfit__cache_pieces(cache) & GGFIT_CACHE_PROBES);
    if (memo && ggfit__famemo_find(cache, probe_key(pr, &key, placement), &pr->fa_mismatch))
        return GGFIT_OK;
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
    if (rc == GGFIT_OK && memo)
        ggfit__famemo_put(cache, pr->fa_mismatch);
    gg_free(&local);
    if (rc == GGFIT_ENOMEM)
        return ggfit__fail(pr->err, rc, "out of memory");
    return rc;
}
