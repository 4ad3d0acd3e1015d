/*
 * mellum.c - src/models/mellum.cpp: Mellum, Qwen3-MoE's block (RMS Q/K
 * norms before RoPE, softmax-gated experts) on a plain KV cache, or on an
 * iSWA one when the file gives a sliding window (three SWA layers in four
 * unless it gives a pattern).
 */
#include "llama/graph.h"

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, k, "Kcur_normed", il);
    /* SWA layers rope without YaRN: other numbers, the same op. */
    q = gb_rope(b, q, -1, il);
    k = gb_rope(b, k, -1, il);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
    int32_t wo_b = gb_weight(b, "blk.%d.attn_output.bias", il);
    cur = b->p->swa ? gb_attn_iswa(b, wo, wo_b, q, k, v, -1, il)
                    : gb_attn(b, wo, wo_b, q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    /* build_moe_ffn: softmax gating, normalised weights, whatever the
     * file says about gating. */
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1, .exp_probs_b = -1,
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .gating = GB_GATING_SOFTMAX,
        .norm_w = true,
        /* load_arch_hparams reads no expert_weights_scale */
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
    };
    cur = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, cur, "ffn_moe_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_mellum::graph<iswa> */
static void build_mellum(bctx *b)
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
const ggfit_arch ggfit__model_mellum = {
    .name = "mellum",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .swa_key = GGFIT_SWA_KEY_EITHER,
    .swa_needs_window = true,
    .build = build_mellum,
};
