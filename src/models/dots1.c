/*
 * dots1.c - src/models/dots1.cpp: dots.llm1, a llama-like graph (pre-norm
 * attention with RoPE, then experts or a SwiGLU FFN) with Q and K normed
 * per head before RoPE, as in Qwen3; the leading dense blocks are SwiGLU,
 * the rest experts (the file's gating and weight keys, an optional
 * selection bias) plus a shared expert added after them.
 */
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
    qkv(b, cur, il, &q, &k, &v);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, k, "Kcur_normed", il);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    /* The loader's output bias, which it does not load. */
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

/* SwiGLU in the leading dense blocks, else the experts plus the shared
 * expert. */
static int32_t ffn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    gb_moe o;
    if ((uint32_t)il < (uint32_t)gb_key(b, "leading_dense_block_count", 0))
        return gb_ffn_gated(b, cur, il);
    gb_moe_layer(b, il, 0, &o);
    int32_t moe_out = experts(b, cur, &o, il);
    return gg_binary(g, GGFIT_OP_ADD, moe_out, shared_expert(b, cur, il));
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
    cur = ffn(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_dots1::graph */
static void build_dots1(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    if (b->missing)
        return;
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_dots1 = {
    .name = "dots1",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", "expert_shared_count", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_dots1,
};
