/*
 * deepseek.c - src/models/deepseek.cpp: DeepSeek V1 (MoE), Llama's
 * attention (fused or separate Q/K/V; no rope_freqs is loaded, so
 * get_rope_factors gives none), then
 * leading_dense_block_count dense SwiGLU blocks and, after them,
 * softmax-gated experts (weights not normalised, times
 * expert_weights_scale) plus always-on shared experts.
 */
#include "llama/graph.h"

/* The experts of layer il and the shared experts, summed. */
static int32_t ffn_moe(bctx *b, int32_t cur, int il)
{
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1, .exp_probs_b = -1, .gate_inp_b = -1,
        .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .gating = GB_GATING_SOFTMAX, .norm_w = false,
        .w_scale = (float)gb_key(b, "expert_weights_scale", 0),
        .n_expert = b->hp->n_expert, .n_expert_used = b->hp->n_expert_used,
    };
    return gb_moe_shared(b, cur, &o, il);
}

/* llama_model_deepseek::graph */
static void build_deepseek(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    uint32_t n_dense = (uint32_t)gb_key(b, "leading_dense_block_count", 0);
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        /* deepseek loads no attn_output.bias */
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        if ((uint32_t)il < n_dense) {
            cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                           gb_required(b, "blk.%d.ffn_gate.weight", il),
                           gb_required(b, "blk.%d.ffn_down.weight", il), il);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            cur = ffn_moe(b, cur, il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_deepseek = {
    .name = "deepseek",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", "expert_shared_count", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_deepseek,
};
