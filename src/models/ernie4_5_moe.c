/*
 * ernie4_5_moe.c - src/models/ernie4-5-moe.cpp: ERNIE 4.5 MoE, ERNIE 4.5's
 * attention, and from the first layer after the leading dense ones, every
 * interleave_moe_layer_step-th layer softmax-gated experts (weights
 * normalised, an optional selection bias, gate experts optional) plus an
 * optional shared expert. It reads no rope_freqs or expert_weights_scale.
 */
#include "llama/check.h"
#include "llama/graph.h"

/* The expert FFN of layer il, then its shared expert when the
 * model has one. */
static int32_t ffn_moe(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_weight(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1,
        .exp_probs_b = gb_weight(b, "blk.%d.exp_probs_b.bias", il),
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .gating = GB_GATING_SOFTMAX, .norm_w = true, .w_scale = 0,
        .n_expert = b->hp->n_expert, .n_expert_used = b->hp->n_expert_used,
    };
    int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe_out, "ffn_moe_out", il);
    /* llama.cpp loads the shared expert when its length key is non-zero. */
    if (gb_key(b, "expert_shared_feed_forward_length", 0) <= 0)
        return moe_out;
    int32_t shexp = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, shexp, "ffn_shexp", il);
    return gg_binary(g, GGFIT_OP_ADD, moe_out, shexp);
}

/* Whether layer il runs the experts (the graph's rule; the
 * loader gives every layer past the dense ones experts, so a step over 1
 * leaves llama.cpp without dense weights there). */
static bool moe_layer(bctx *b, int il)
{
    uint32_t lead = (uint32_t)gb_key(b, "leading_dense_block_count", 0);
    uint32_t step = (uint32_t)gb_key(b, "interleave_moe_layer_step", 0);   /* > 0: check() */
    return (uint32_t)il >= lead && ((uint32_t)il + 1) % step == 0;
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (wqkv >= 0)
        gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
    else
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);   /* biases when present */
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
    gb_cb(b, cur, "attn_out", il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    if (moe_layer(b, il))
        cur = ffn_moe(b, cur, il);
    else
        cur = gb_ffn_gated(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_ernie4_5_moe::graph */
static void build_ernie4_5_moe(bctx *b)
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

/* load_arch_hparams requires the MoE layers' step, and load_tensors
 * asserts it is not 0 (the graph takes every step-th layer). */
static const char *const required_keys[] = { "interleave_moe_layer_step", NULL };

static void check(hp_check *c)
{
    hc_key_int(c, "interleave_moe_layer_step", 1, UINT32_MAX, 0, NULL,
               "every step-th layer has experts (llama.cpp asserts a step of 1 or more)");
}

const ggfit_arch ggfit__model_ernie4_5_moe = {
    .name = "ernie4_5-moe",
    .mem = GGFIT_MEM_KV,
    .required_keys = required_keys,
    .check = check,
    .build = build_ernie4_5_moe,
};
