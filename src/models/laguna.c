/*
 * laguna.c - src/models/laguna.cpp: Laguna, per-layer head counts, RMS Q/K
 * norms before RoPE, a softplus gate (attn_gate, one value per head or per
 * element, from the normed input) on the attention output before its
 * projection, a plain or (with a window in the file) iSWA cache with a
 * dense layer first in each four, leading dense FFNs then routed experts
 * (sigmoid unless the file says otherwise, exp_probs_b) plus a shared
 * expert.
 */
#include "llama/graph.h"

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t nh = li->n_head, hd = b->hp->n_embd_head_v;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t attn_inp = cur;
    int32_t q, k, v;
    gb_build_qkv_clamp(b, cur, il, nh, li->n_head_kv, false, &q, &k, &v);
    int32_t wg = gb_required(b, "blk.%d.attn_gate.weight", il);
    int32_t gate = gg_mul_mat(g, wg, attn_inp);
    gb_cb(b, gate, "attn_gate_proj", il);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    gb_cb(b, k, "Kcur_normed", il);
    /* SWA layers rope with other numbers: the same op */
    q = gb_rope(b, q, -1, il);
    k = gb_rope(b, k, -1, il);
    gb_cb(b, q, "Qcur_rope", il);
    gb_cb(b, k, "Kcur_rope", il);
    cur = b->p->swa ? gb_attn_iswa(b, -1, -1, q, k, v, -1, il)
                    : gb_attn(b, -1, -1, q, k, v, -1, il);   /* wo after the gate */
    gb_cb(b, cur, "attn_out", il);
    gate = gg_unary_op(g, GGFIT_OP_UNARY, gate);   /* softplus */
    gb_cb(b, gate, "attn_gate_softplus", il);
    int64_t nt = gb_ne(b, cur, 1);
    if (gb_ne(b, wg, 1) == nh) {   /* one gate value per head */
        cur = gb_reshape_3d(b, cur, hd, nh, nt);
        gate = gb_reshape_3d(b, gate, 1, nh, nt);
        cur = gg_binary(g, GGFIT_OP_MUL, cur, gate);
        cur = gb_reshape_2d(b, cur, hd * nh, nt);
    } else {
        cur = gg_binary(g, GGFIT_OP_MUL, cur, gate);
    }
    gb_cb(b, cur, "attn_gated", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
    gb_cb(b, cur, "attn_o_proj", il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    if ((uint32_t)il >= (uint32_t)gb_key(b, "leading_dense_block_count", 0)) {
        gb_moe o;
        gb_moe_layer(b, il, GB_GATING_SIGMOID, &o);
        o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
        int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
        gb_cb(b, moe_out, "ffn_moe_out", il);
        int32_t sh = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                              gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                              gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
        gb_cb(b, sh, "ffn_shexp", il);
        cur = gg_binary(g, GGFIT_OP_ADD, moe_out, sh);
        gb_cb(b, cur, "ffn_out", il);
    } else {
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    }
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_laguna::graph */
static void build_laguna(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    if (b->p->swa)
        gb_inputs_kv_iswa(b);
    else
        gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    gb_output(b, inpL);
}

/* With a window in the file: a dense layer, then three sliding-window
 * ones. */
const ggfit_arch ggfit__model_laguna = {
    .name = "laguna",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "leading_dense_block_count", "expert_feed_forward_length", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .swa_dense_first = true,
    .swa_needs_window = true,
    .build = build_laguna,
};
