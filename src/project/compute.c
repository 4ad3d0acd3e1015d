/*
 * compute.c - the compute buffers: llama.cpp's graph reserved through the
 * scheduler and ggml-alloc (graph_reserve.c), and for architectures and
 * configurations without a rebuilt graph an estimate: per-stage sizes
 * fitted to llama.cpp's dense graphs, per device that runs layers, the
 * output layer's logits where they are computed.
 */
#include "base/base.h"
#include "project/compute.h"

/* Stage estimates from llama.cpp's measured dense-graph behaviour (see
 * LLAMA_MEMORY.md section 5); the graph replay replaces these. */
static void compute_estimate(proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    ggfit_projection *o = pr->out;
    uint64_t U = o->n_ubatch, E = hp->n_embd, V = hp->n_vocab;
    uint64_t F = hp->n_ff_max, H = hp->n_head_max;
    if (hp->n_expert && hp->n_ff_exp) {
        uint64_t moe = (uint64_t)hp->n_ff_exp * hp->n_expert_used + E * hp->n_expert_used / 3 +
                       hp->n_expert / 3;
        if (moe > F)
            F = moe;
    }
    /* Without a memory module the keys are the ubatch's own tokens. */
    uint64_t n_kv = pr->arch->mem == GGFIT_MEM_NONE ? U : o->n_ctx_seq;
    uint64_t mask = n_kv * U * (o->flash_attn ? 2 : 4);
    uint64_t small = 28 * U;
    uint64_t layer = 3 * F * U * 4 + 3 * E * U * 4 + mask + small;
    if (!o->flash_attn) {
        uint64_t attn = H * n_kv * U * 4 * o->n_stream + mask + 9 * E * U * 2;
        if (attn > layer)
            layer = attn;
    }
    uint64_t logits = V * U * 4 + E * U * 4;
    int out_dev = ggfit__dev_layer(pr, hp->n_layer);
    bool cpu_layers = pr->act < hp->n_layer + 1;
    for (uint32_t d = 0; d < pr->n_dev; d++) {
        bool has_layers = false;
        for (uint32_t il = 0; il <= hp->n_layer && !has_layers; il++)
            has_layers = ggfit__dev_layer(pr, il) == (int)d;
        if (!has_layers)
            continue;
        uint64_t c = layer;
        if (out_dev == (int)d && logits > c)
            c = logits;
        o->bufts[ggfit__device_buft(pr, (int)d)].mem.compute += c;
    }
    uint64_t host = 2 * E * U * 4 + mask + small;
    if (cpu_layers || pr->n_dev == 0) {
        uint64_t run = layer + E * U * 4;
        if (out_dev < 0 && logits + E * U * 4 > run)
            run = logits + E * U * 4;
        host = run + small;
    }
    int hb = ggfit__cpu_compute_buft(pr);
    o->bufts[hb].mem.compute += host;
    o->compute_estimated = true;
}

ggfit_status ggfit__project_compute(proj *pr, const int32_t *placement)
{
    ggfit_status rc = ggfit__graph_reserve(pr, placement, false);
    if (rc != GGFIT_EUNSUPPORTED)
        return rc;
    compute_estimate(pr);
    return GGFIT_OK;
}
