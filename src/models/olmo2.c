/*
 * olmo2.c - src/models/olmo2.cpp: OLMo 2 and OLMo 3, a block with its norms
 * after attention and FFN instead of before: Q/K RMS norms over all heads
 * before they are split, RoPE on every layer, attention, post-norm,
 * residual, SwiGLU FFN, post-norm, residual. Sliding windows only when the
 * file gives one (OLMo 3).
 */
#include "llama/graph.h"

/* Attention of an OLMo block: Q/K norms over whole rows, then heads. */
static int32_t olmo2_attn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = b->hp->n_embd_head_v, nt = b->p->n_tokens;
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, q, "Qcur", il);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    gb_cb(b, k, "Kcur", il);
    int32_t v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    gb_cb(b, v, "Vcur", il);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, k, "Kcur_normed", il);
    q = gb_reshape_3d(b, q, hd, li->n_head, nt);
    k = gb_reshape_3d(b, k, hd, li->n_head_kv, nt);
    v = gb_reshape_3d(b, v, hd, li->n_head_kv, nt);
    /* SWA layers rope without YaRN: other numbers, the same op. */
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
    return b->p->swa ? gb_attn_iswa(b, wo, -1, q, k, v, -1, il)
                     : gb_attn(b, wo, -1, q, k, v, -1, il);
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    int32_t cur = olmo2_attn(b, inpL, il);
    if (last)
        gb_out_rows(b, &cur, &inpL);
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
    gb_cb(b, cur, "attn_post_norm", il);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_ffn(b, ffn_inp, il);
    gb_cb(b, cur, "ffn_out", il);
    /* normed as layer -1: its "norm" is not pinned */
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm.weight", il), -1);
    gb_cb(b, cur, "ffn_post_norm", -1);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_olmo2::graph */
static void build_olmo2(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    if (b->p->swa)
        gb_inputs_kv_iswa(b);
    else
        gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    gb_output(b, inpL);
}

/* Three sliding-window layers in four, when the file gives a window. */
const ggfit_arch ggfit__model_olmo2 = {
    .name = "olmo2",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .swa_needs_window = true,
    .build = build_olmo2,
};
