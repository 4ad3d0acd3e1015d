/*
 * build_dots1.c - four llama-like graphs with Q/K norms (src/models/
 * minimax-m2.cpp, dots1.cpp, hunyuan-moe.cpp, hunyuan-vl.cpp, whose graph
 * hunyuan-dense.cpp reuses): pre-norm attention with RoPE, then experts or
 * a SwiGLU FFN. Where they differ:
 *  - minimax-m2: Q and K are normed whole (n_head * head rows), before the
 *    heads are split; every layer is experts with the file's gating, a
 *    required selection bias, the weights always normalised and never
 *    scaled (llama.cpp does not read expert_weights_scale);
 *  - dots1: Q and K normed per head before RoPE, as qwen3; the leading dense
 *    blocks are SwiGLU, the rest experts (the file's gating and weight keys,
 *    an optional selection bias) plus a shared expert added after them;
 *  - hunyuan-moe: RoPE before the per-head K then Q norms;
 *    the shared expert runs before the softmax-gated experts (weights
 *    normalised, not scaled);
 *  - hunyuan-dense: hunyuan-moe's attention with a SwiGLU FFN.
 */
#include <stdio.h>

#include "llama/graph.h"

enum variant { MINIMAX_M2, DOTS1, HUNYUAN_MOE, HUNYUAN_DENSE };

/* Q, K and V of layer il: fused when the file has attn_qkv (build_qkv),
 * except in minimax-m2, which multiplies by attn_q, _k and _v itself. */
static void qkv(bctx *b, int32_t cur, int il, int32_t *q, int32_t *k, int32_t *v)
{
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (wqkv >= 0)
        gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, q, k, v);
    else
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, q, k, v);
}

/* minimax-m2's attention input: three products, norms over whole rows,
 * then the heads. */
static void qkv_minimax(bctx *b, int32_t cur, int il, int32_t *q, int32_t *k, int32_t *v)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = b->hp->n_embd_head_k, nt = b->p->n_tokens;
    *q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, *q, "Qcur", il);
    *k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    gb_cb(b, *k, "Kcur", il);
    *v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    gb_cb(b, *v, "Vcur", il);
    *q = gb_norm(b, *q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, *q, "Qcur_normed", il);
    *k = gb_norm(b, *k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, *k, "Kcur_normed", il);
    *q = gb_reshape_3d(b, *q, hd, li->n_head, nt);
    *k = gb_reshape_3d(b, *k, hd, li->n_head_kv, nt);
    *v = gb_reshape_3d(b, *v, hd, li->n_head_kv, nt);
}

static int32_t attention(bctx *b, enum variant vr, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t q, k, v;
    if (vr == MINIMAX_M2) {
        qkv_minimax(b, cur, il, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
    } else if (vr == DOTS1) {
        qkv(b, cur, il, &q, &k, &v);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "Qcur_normed", il);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k, "Kcur_normed", il);
        k = gg_rope(g, k, b->inp_pos, -1);
    } else {
        /* get_rope_factors finds none: the loader creates no rope_freqs
         * (and a file with one has a tensor too many to load). */
        qkv(b, cur, il, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    if (vr == HUNYUAN_MOE || vr == HUNYUAN_DENSE) {
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k, "Kcur_norm", il);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "Qcur_norm", il);
    }
    /* minimax-m2 passes no output bias; the others pass the loader's, which
     * none of them loads. */
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

static int32_t shared_expert(bctx *b, int32_t cur, int il)
{
    int32_t t = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                         gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                         gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, t, "ffn_shexp", il);
    return t;
}

static int32_t experts(bctx *b, int32_t cur, const gb_moe *o, int il)
{
    int32_t t = gb_moe_ffn_ex(b, cur, o, il);
    gb_cb(b, t, "ffn_moe_out", il);
    return t;
}

static int32_t ffn(bctx *b, enum variant vr, int32_t cur, int il)
{
    gg_graph *g = b->g;
    gb_moe o;
    switch (vr) {
    case MINIMAX_M2:
        gb_moe_layer(b, il, 0, &o);   /* gating from the file, or no graph */
        o.gate_up_exps = -1;
        o.up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il);
        o.gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il);
        o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
        o.norm_w = true;
        o.w_scale = 0;
        return experts(b, cur, &o, il);
    case DOTS1: {
        if ((uint32_t)il < (uint32_t)gb_key(b, "leading_dense_block_count", 0))
            return gb_ffn_gated(b, cur, il);
        gb_moe_layer(b, il, 0, &o);
        int32_t moe_out = experts(b, cur, &o, il);
        return gg_binary(g, GGFIT_OP_ADD, moe_out, shared_expert(b, cur, il));
    }
    case HUNYUAN_MOE: {
        int32_t mlp = shared_expert(b, cur, il);
        o = (gb_moe){
            .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
            .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
            .gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il),
            .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
            .gate_up_exps = -1, .exp_probs_b = -1,
            .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
            .gating = GB_GATING_SOFTMAX, .norm_w = true, .w_scale = 0,
            .n_expert = b->hp->n_expert, .n_expert_used = b->hp->n_expert_used,
            .n_groups = (uint32_t)gb_key(b, "expert_group_count", 0),
            .n_group_used = (uint32_t)gb_key(b, "expert_group_used_count", 0),
        };
        return gg_binary(g, GGFIT_OP_ADD, experts(b, cur, &o, il), mlp);
    }
    case HUNYUAN_DENSE:
        return gb_ffn_gated(b, cur, il);
    }
    return cur;
}

static int32_t layer(bctx *b, enum variant vr, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = attention(b, vr, cur, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = ffn(b, vr, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

static void build(bctx *b, enum variant vr)
{
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, vr, inpL, il, il == n_layer - 1);
    if (b->missing)
        return;
    gb_output(b, inpL);
}

/* llama_model_minimax_m2::graph */
void gb_build_minimax_m2(bctx *b)
{
    build(b, MINIMAX_M2);
}

/* llama_model_dots1::graph */
void gb_build_dots1(bctx *b)
{
    build(b, DOTS1);
}

/* llama_model_hunyuan_moe::graph */
void gb_build_hunyuan_moe(bctx *b)
{
    build(b, HUNYUAN_MOE);
}

/* llama_model_hunyuan_vl::graph, as hunyuan-dense uses it: its rope type is
 * NEOX (one position a token), so M-RoPE sections would fail ggml's
 * rope_multi check; such a file has no graph here. */
void gb_build_hunyuan_dense(bctx *b)
{
    char key[160];
    snprintf(key, sizeof key, "%s.rope.dimension_sections", b->hp->arch);
    if (ggfit_gguf_find_key(b->gguf, key) >= 0) {
        b->missing = true;
        return;
    }
    build(b, HUNYUAN_DENSE);
}
