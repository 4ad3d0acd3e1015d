/*
 * llama4.c - src/models/llama4.cpp: Llama 4 (Scout, Maverick).
 * Chunked attention (an iSWA cache) on three layers of four, the fourth
 * without RoPE and with the attention temperature on Q instead; L2 (RMS
 * without weight) Q/K norms on the RoPE layers unless the model has 128
 * experts; dense SwiGLU FFNs interleaved with MoE ones (every
 * interleave_moe_layer_step-th layer) whose top experts are chosen on the
 * raw logits, weighed by their sigmoid on the input, plus a shared expert.
 */
#include <stdio.h>

#include "llama/graph.h"

/* Routed experts (weights applied before the FFN) plus the shared one, on
 * the same normed input. */
static int32_t moe(bctx *b, int32_t cur, int il)
{
    gb_moe o = {
        .gate_up_exps = -1,
        .exp_probs_b = -1,
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .act = GB_MOE_SILU,
        .gating = GB_GATING_SIGMOID,
        .weight_before_ffn = true,
        .select_logits = true,
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
    };
    o.gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il);
    o.up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il);
    o.gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il);
    o.down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il);
    int32_t routed = gb_moe_ffn_ex(b, cur, &o, il);
    int32_t shared = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                              gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                              gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, shared, "ffn_moe_shexp", il);
    cur = gg_binary(b->g, GGFIT_OP_ADD, routed, shared);
    gb_cb(b, cur, "ffn_moe_out_merged", il);
    return cur;
}

/* Attention of layer il: RoPE (then the L2 norms) on all but every
 * no_rope_step-th layer, which scales Q by the temperature instead. */
static int32_t attention(bctx *b, int32_t cur, int il, uint32_t no_rope_step)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    bool use_rope = no_rope_step > 0 && ((uint32_t)il + 1) % no_rope_step != 0;
    int32_t rf = use_rope ? gb_rope_factors(b, il) : -1;
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    if (use_rope) {
        q = gb_rope(b, q, rf, il);
        k = gb_rope(b, k, rf, il);
    } else {
        q = gg_binary(g, GGFIT_OP_MUL, q, b->inp_attn_scale);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    /* llama_model_llama4::load_arch_hparams: only the 128-expert model
     * (Maverick) goes without. */
    if (use_rope && b->hp->n_expert != 128) {
        q = gb_norm(b, q, -1, il);
        k = gb_norm(b, k, -1, il);
        gb_cb(b, q, "Qcur_normed", il);
        gb_cb(b, k, "Kcur_normed", il);
    }
    int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
    cur = b->p->swa ? gb_attn_iswa(b, wo, -1, q, k, v, -1, il)
                    : gb_attn(b, wo, -1, q, k, v, -1, il);
    gb_cb(b, cur, "attn_out", il);
    return cur;
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last, uint32_t no_rope_step)
{
    gg_graph *g = b->g;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = attention(b, cur, il, no_rope_step);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    int32_t normed = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        gb_cb(b, normed, "ffn_norm", il);
        cur = gb_ffn(b, normed, il);
        gb_cb(b, cur, "ffn_out", il);
    } else {
        gb_cb(b, cur, "ffn_norm", il);   /* llama.cpp names the attention output */
        cur = moe(b, normed, il);
    }
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_llama4::graph: chunked attention (iSWA) unless the file
 * turns the window off (sliding_window 0), and then only the last layer
 * goes without RoPE. */
static void build_llama4(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    if (b->hp->n_expert == 0 || b->hp->n_embd_head_k != b->hp->n_embd_head_v ||
        b->hp->n_embd_head_k != b->hp->n_rot) {
        b->missing = true;   /* llama.cpp refuses these */
        return;
    }
    uint32_t no_rope_step = b->p->swa ? 4 : (uint32_t)n_layer;
    b->attn_temp = true;
    int32_t inpL = gb_inp_embd(b);
    if (b->p->swa)
        gb_inputs_kv_iswa(b);
    else
        gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1, no_rope_step);
    gb_output(b, inpL);
}

/* llama_model_llama4::load_arch_hparams: chunked attention over 8192 tokens
 * unless the file sets sliding_window to 0, which turns it off. */
static uint32_t window_llama4(const ggfit_arch *a, const ggfit_model *m)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    char key[96];
    snprintf(key, sizeof key, "%s.attention.sliding_window", hp->arch);
    if (hp->n_swa == 0 && ggfit_gguf_find_key(ggfit_model_gguf(m), key) >= 0)
        return 0;
    return a->swa_default;
}

/* Three chunked-attention layers in four. */
const ggfit_arch ggfit__model_llama4 = {
    .name = "llama4",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", "interleave_moe_layer_step", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .swa_default = 8192,
    .build = build_llama4,
    .window = window_llama4,
};
