/*
 * grovemoe.c - src/models/grovemoe.cpp: GroveMoE, Qwen3's attention (RMS
 * Q/K norms before RoPE), then softmax-weighted experts chosen on the
 * sigmoid of the router logits, and on their output the "chunk" experts
 * (one per experts_per_group experts: the chosen indices divided), scaled
 * by expert_group_scale and added.
 */
#include "llama/check.h"
#include "llama/graph.h"

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t n_group = (int64_t)gb_key(b, "experts_per_group", 0);   /* > 0: check() */
    int64_t n_chunk = hp->n_expert / n_group;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    q = gb_rope(b, q, -1, il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, k, "Kcur_normed", il);
    k = gb_rope(b, k, -1, il);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    int32_t probs = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate_inp.weight", il), cur);
    gb_cb(b, probs, "ffn_moe_logits", il);
    gb_moe o = {
        .gate_inp = -1,
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1, .exp_probs_b = -1,
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .gating = GB_GATING_SOFTMAX,
        .norm_w = true,
        .n_expert = hp->n_expert,
        .n_expert_used = hp->n_expert_used,
        .has_logits_in = true,
        .logits_in = probs,
        .sel_sigmoid = true,
    };
    int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe_out, "ffn_moe_out", il);
    cur = moe_out;
    o.up_exps = gb_required(b, "blk.%d.ffn_up_chexps.weight", il);
    o.gate_exps = gb_required(b, "blk.%d.ffn_gate_chexps.weight", il);
    o.down_exps = gb_required(b, "blk.%d.ffn_down_chexps.weight", il);
    o.n_expert = n_chunk;
    o.n_expert_used = hp->n_expert_used > n_chunk ? n_chunk : hp->n_expert_used;
    o.sel_n_expert = hp->n_expert;
    o.sel_div = n_group;
    moe_out = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe_out, "ffn_adj_moe_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, gg_scale(g, moe_out));   /* expert_group_scale */
    gb_cb(b, cur, "ffn_final_moe_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_grovemoe::graph */
static void build_grovemoe(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    gb_output(b, inpL);
}

/* load_arch_hparams requires experts_per_group; load_tensors asserts it
 * is not 0 (the chunk experts are the experts divided by it). */
static const char *const required_keys[] = {
    "experts_per_group",
    "expert_feed_forward_length",
    "expert_group_scale",
    "attention.layer_norm_rms_epsilon",
    NULL,
};

static void check(hp_check *c)
{
    hc_key_int(c, "experts_per_group", 1, UINT32_MAX, 0, NULL,
               "the chunk experts are the experts divided by it (llama.cpp asserts it)");
}

const ggfit_arch ggfit__model_grovemoe = {
    .name = "grovemoe",
    .mem = GGFIT_MEM_KV,
    .required_keys = required_keys,
    .check = check,
    .build = build_grovemoe,
};
