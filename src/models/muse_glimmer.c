/*
 * muse_glimmer.c - src/models/muse-glimmer.cpp: Muse Glimmer's text model.
 * The embeddings RMS-normed without weight; each layer a pre-norm, RMS Q/K
 * norms, RoPE on the sliding-window layers only (NoPE on the global ones),
 * iSWA attention gated by sigmoid(attn_gate x) before its projection,
 * post-attention and post-FFN RMS norms (ggml_rms_norm and a product, not
 * build_norm), a SwiGLU FFN; logits scaled, then soft-capped when the file
 * says so.
 */
#include "llama/graph.h"
#include "versions/version.h"

/* The post norms: ggml_rms_norm then the weight, with no "norm" callback
 * (so never pinned to the layer's device). */
static int32_t post_norm(bctx *b, int32_t cur, const char *fmt, int il)
{
    cur = gg_rms_norm(b->g, cur);
    return gg_binary(b->g, GGFIT_OP_MUL, cur, gb_required(b, fmt, il));
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
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
    if (b->p->layer_flags[il] & GB_LAYER_SWA) {
        q = gb_rope(b, q, -1, il);   /* the layer's own base and scale */
        gb_cb(b, q, "Qcur_rope", il);
        k = gb_rope(b, k, -1, il);
        gb_cb(b, k, "Kcur_rope", il);
    }
    cur = gb_attn_iswa(b, -1, -1, q, k, v, -1, il);   /* wo after the gate */
    gb_cb(b, cur, "attn_out", il);
    gate = gg_unary_op(g, GGFIT_OP_UNARY, gate);     /* sigmoid */
    gb_cb(b, gate, "attn_gate_sig", il);
    cur = gg_binary(g, GGFIT_OP_MUL, cur, gate);
    gb_cb(b, cur, "attn_gated", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
    gb_cb(b, cur, "attn_o_proj", il);
    cur = post_norm(b, cur, "blk.%d.post_attention_norm.weight", il);
    gb_cb(b, cur, "attn_post_norm", il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = gb_ffn_gated(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = post_norm(b, cur, "blk.%d.post_ffw_norm.weight", il);
    gb_cb(b, cur, "ffn_post_norm", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_muse_glimmer::graph */
static void build_muse_glimmer(bctx *b)
{
    gg_graph *g = b->g;
    if (!b->p->swa) {
        b->missing = true;   /* llama.cpp always makes the two caches */
        return;
    }
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    inpL = gb_norm(b, inpL, -1, -1);
    gb_cb(b, inpL, "embd_norm", -1);
    gb_inputs_kv_iswa(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    /* output is required: no tied copy */
    cur = gg_mul_mat(g, gb_required(b, "output.weight", 0), cur);
    cur = gg_scale(g, cur);   /* f_logit_scale */
    if (gb_key(b, "final_logit_softcapping", 0) != 0) {
        cur = gg_scale(g, cur);
        cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* tanh */
        cur = gg_scale(g, cur);
    }
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_arch_hparams requires the window and the logit scale; the pattern
 * is a period (get_key_or_arr's scalar form, not required) or else the
 * per-layer form, which is required. */
static const char *const required_keys[] = {
    "attention.layer_norm_rms_epsilon",
    "attention.sliding_window",
    "attention.sliding_window_pattern",
    "logit_scale",
    NULL,
};

/* Three sliding-window layers in four unless the file says otherwise; the
 * iSWA cache whatever the window (swa_type is always STANDARD). */
const ggfit_arch ggfit__model_muse_glimmer = {
    .name = "muse-glimmer",
    .added = LLAMA_CHANGE_MUSE_GLIMMER,
    .required_keys = required_keys,
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .swa_key = GGFIT_SWA_KEY_EITHER,
    .swa_always = true,
    .build = build_muse_glimmer,
};
