/*
 * hunyuan_dense.c - Hunyuan dense models, which llama.cpp builds with the
 * graph of src/models/hunyuan-vl.cpp: a llama-like graph (pre-norm
 * attention with RoPE, then a SwiGLU FFN) with RoPE before the per-head K
 * then Q norms, as in Hunyuan-MoE.
 */
#include <stdio.h>

#include "llama/graph.h"

/* Q, K and V of layer il: fused when the file has attn_qkv (build_qkv). */
static void qkv(bctx *b, int32_t cur, int il, int32_t *q, int32_t *k, int32_t *v)
{
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (wqkv >= 0)
        gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, q, k, v);
    else
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, q, k, v);
}

static int32_t attention(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t q, k, v;
    /* get_rope_factors finds none: the loader creates no rope_freqs
     * (and a file with one has a tensor too many to load). */
    qkv(b, cur, il, &q, &k, &v);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, k, "Kcur_norm", il);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_norm", il);
    /* The loader's output bias, which it does not load. */
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = attention(b, cur, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = gb_ffn_gated(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_hunyuan_vl::graph, as hunyuan-dense uses it: its rope type is
 * NEOX (one position a token), so M-RoPE sections would fail ggml's
 * rope_multi check; such a file has no graph here. */
static void build_hunyuan_dense(bctx *b)
{
    char key[160];
    snprintf(key, sizeof key, "%s.rope.dimension_sections", b->hp->arch);
    if (ggfit_gguf_find_key(b->gguf, key) >= 0) {
        b->missing = true;
        return;
    }
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    if (b->missing)
        return;
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_hunyuan_dense = {
    .name = "hunyuan-dense",
    .mem = GGFIT_MEM_KV,
    .one_expert_dense = true,
    .build = build_hunyuan_dense,
};
