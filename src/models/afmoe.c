/*
 * afmoe.c - src/models/afmoe.cpp: AFMoE (Arcee Trinity), scaled embeddings,
 * a sigmoid gate (attn_gate, from the normed input) on the attention
 * output before its projection, RMS Q/K norms, RoPE on all but every
 * fourth layer, post-attention and post-FFN norms, iSWA attention (three
 * SWA layers in four), leading dense blocks then routed experts (sigmoid
 * unless the file says otherwise, exp_probs_b) plus shared experts.
 */
#include "llama/graph.h"

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    /* hparams.n_no_rope_layer_step keeps its default, 4 */
    bool use_rope = (il + 1) % 4 != 0;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t attn_inp = cur;
    int32_t q, k, v;
    gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
    int32_t gate = gg_mul_mat(g, gb_required(b, "blk.%d.attn_gate.weight", il), attn_inp);
    gb_cb(b, gate, "attn_gate_proj", il);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    gb_cb(b, k, "Kcur_normed", il);
    if (use_rope) {
        q = gb_rope(b, q, -1, il);
        gb_cb(b, q, "Qcur_rope", il);
        k = gb_rope(b, k, -1, il);
        gb_cb(b, k, "Kcur_rope", il);
    }
    cur = gb_attn_iswa(b, -1, -1, q, k, v, -1, il);   /* wo after the gate */
    gb_cb(b, cur, "attn_out", il);
    gate = gg_unary_op(g, GGFIT_OP_UNARY, gate);
    gb_cb(b, gate, "attn_gate_sig", il);
    cur = gg_binary(g, GGFIT_OP_MUL, cur, gate);
    gb_cb(b, cur, "attn_gated", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
    gb_cb(b, cur, "attn_o_proj", il);
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
    gb_cb(b, cur, "attn_post_norm", il);
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
        if (gb_key(b, "expert_shared_count", 0) > 0) {
            int32_t sh = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                                  gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                                  gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
            gb_cb(b, sh, "ffn_shexp", il);
            cur = gg_binary(g, GGFIT_OP_ADD, moe_out, sh);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            cur = moe_out;
        }
    } else {
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    }
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm.weight", il), il);
    gb_cb(b, cur, "ffn_post_norm", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_afmoe::graph */
static void build_afmoe(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    /* build_attn_inp_kv_iswa needs the iSWA cache, which only a file with a
     * sliding window gets: without one (no key, or 0) llama.cpp makes a
     * plain cache, casts its context to the iSWA one and crashes
     * (llama-fit-params: SIGSEGV), so there is no figure to match. */
    if (!b->p->swa) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    inpL = gg_scale(g, inpL);   /* sqrt(n_embd) */
    gb_cb(b, inpL, "inp_embd_scaled", -1);
    gb_inputs_kv_iswa(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    gb_output(b, inpL);
}

/* Three sliding-window layers in four, when the file gives a window. */
const ggfit_arch ggfit__model_afmoe = {
    .name = "afmoe",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", "expert_shared_count", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .swa_needs_window = true,
    .build = build_afmoe,
};
