/*
 * qwen2moe.c - src/models/qwen2moe.cpp: Qwen2-MoE, Qwen2's attention (Q/K/V
 * biases, RoPE), then softmax-gated experts plus a shared expert behind a
 * sigmoid gate.
 */
#include "llama/graph.h"

/* Qwen2-MoE's FFN: the experts (weights not normalised), then the shared
 * expert scaled by sigmoid(ffn_gate_inp_shexp . x), written as
 * silu(x) / x as llama.cpp does. */
static int32_t ffn_moe(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1, .exp_probs_b = -1, .gate_inp_b = -1,
        .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .gating = GB_GATING_SOFTMAX, .norm_w = false,
        .w_scale = 0,   /* qwen2moe does not read expert_weights_scale */
        .n_expert = b->hp->n_expert, .n_expert_used = b->hp->n_expert_used,
    };
    int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe_out, "ffn_moe_out", il);
    int32_t gate_inp = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate_inp_shexp.weight", il),
                                  cur);
    gb_cb(b, gate_inp, "ffn_shexp_gate_inp", il);
    int32_t gate = gg_binary(g, GGFIT_OP_DIV, gg_unary_op(g, GGFIT_OP_UNARY, gate_inp),
                             gate_inp);
    gb_cb(b, gate, "ffn_shexp_gate", il);
    int32_t shexp = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, shexp, "ffn_shexp", il);
    shexp = gg_binary(g, GGFIT_OP_MUL, shexp, gate);
    gb_cb(b, shexp, "ffn_shexp_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, moe_out, shexp);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

/* One block: attention, then the experts, each with a residual. */
static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);   /* biases when present */
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    /* Qwen2-MoE loads no attn_output.bias */
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = ffn_moe(b, cur, il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_qwen2moe::graph */
static void build_qwen2moe(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

const ggfit_arch ggfit__model_qwen2moe = {
    .name = "qwen2moe",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_qwen2moe,
};
