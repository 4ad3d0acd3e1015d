/*
 * kimi_linear.c - src/models/kimi-linear.cpp: Kimi Linear, a hybrid of KDA
 * layers (Kimi Delta Attention: separate Q, K and V projections, each
 * through its own short causal convolution, per-channel decay gates from a
 * low-rank f_a/f_b pair, the fused gated delta net over a recurrent state,
 * an RMS norm gated by sigmoid(g_b(g_a(x)))) and MLA layers without RoPE
 * (the K-only latent cache of DeepSeek-V2, Q from one projection). Layers
 * with head_count_kv 0 are the KDA ones. The first leading_dense_block_count
 * blocks have a dense FFN, the others routed experts (the file's gating,
 * weights always normalised) plus a shared expert.
 */
#include "llama/graph.h"

/* The KDA layer of llama_model_kimi_linear::graph: the low-rank decay gate
 * A * softplus(f_b(f_a(x)) + dt_bias) and output gate g_b(g_a(x)). */
static const gb_kda kda = {
    .f_b = true,
    .gate = GB_KDA_SOFTPLUS,
    .g_a = "blk.%d.ssm_g_a.weight",
    .g_b = "blk.%d.ssm_g_b.weight",
    .names = {
        [GB_KDA_N_CONV_STATES] = "conv_states_all",
        [GB_KDA_N_F_B] = "g1 f_b(f_a(cur))",
        [GB_KDA_N_G1] = "kda_g1",
        [GB_KDA_N_BETA_RAW] = "kda_beta",
        [GB_KDA_N_SCAN_CONT] = "attn_output",
        [GB_KDA_N_NEW_STATE] = "new_state",
        [GB_KDA_N_G2_RAW] = "g2 g_b(g_a(cur_2d))",
        [GB_KDA_N_NORMED] = "kda_normed",
    },
};

static int32_t ffn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    if ((uint32_t)il < b->hp->n_layer_dense_lead) {
        cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                       gb_required(b, "blk.%d.ffn_gate.weight", il),
                       gb_required(b, "blk.%d.ffn_down.weight", il), il);
        gb_cb(b, cur, "ffn_out", il);
        return cur;
    }
    gb_moe o;
    gb_moe_layer(b, il, 0, &o);   /* expert_gating_func is required */
    o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
    o.norm_w = true;
    int32_t moe = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe, "ffn_moe_out", il);
    int32_t sh = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                          gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                          gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, sh, "ffn_shexp", il);
    cur = gg_binary(g, GGFIT_OP_ADD, moe, sh);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

/* llama_model_kimi_linear::graph (the MLA cache: build_inp_mem_hybrid_k;
 * no positions, nothing is roped) */
static void build_kimi_linear(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_kimi_inputs(b, "model.embed_tokens");
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_kimi_mixer(b, inpL, il, &kda, true);
        if (b->missing)
            return;
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = ffn(b, cur, il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (b->missing)
        return;
    gb_output(b, inpL);
}

/* KDA layers are those with head_count_kv 0 (load_arch_hparams). */
const ggfit_arch ggfit__model_kimi_linear = {
    .mla_same_kv_types = true,
    .name = "kimi-linear",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.key_length_mla", "attention.value_length_mla", "attention.kv_lora_rank",
            "ssm.conv_kernel", "kda.head_dim", "expert_feed_forward_length", "expert_shared_count",
            "expert_gating_func", NULL },
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
    .state_size = gb_kda_state_size,
    .build = build_kimi_linear,
};
