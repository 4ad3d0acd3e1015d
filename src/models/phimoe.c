/*
 * phimoe.c - src/models/phimoe.cpp: Phi-3.5-MoE, which runs Phi-3's graph
 * (llama_model_phi3::graph<false>, phi3.cpp) on its own tensors: RMS norms
 * with biases, Q/K/V (fused or not) with LongRoPE's long or short factors,
 * Q scaled before attention, an output bias on attention and on the
 * logits, and softmax-routed SwiGLU experts whose weights are normalized.
 */
#include "llama/graph.h"

/* build_norm, RMS with a weight and a bias. */
static int32_t norm_wb(bctx *b, int32_t cur, const char *w, const char *bias, int il)
{
    gg_graph *g = b->g;
    int32_t mw = gb_required(b, w, il), mb = gb_required(b, bias, il);
    cur = gg_rms_norm(g, cur);
    gb_cb(b, cur, "norm", il);
    cur = gg_binary(g, GGFIT_OP_MUL, cur, mw);
    gb_cb(b, cur, "norm_w", il);
    return gg_binary(g, GGFIT_OP_ADD, cur, mb);
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last, int32_t *rf_leaf)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t residual = inpL;
    int32_t rf = gb_rope_factors_ls(b, il, rf_leaf);
    int32_t cur = norm_wb(b, inpL, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias", il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (wqkv >= 0)
        gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
    else
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    q = gb_rope(b, q, rf, il);
    k = gb_rope(b, k, rf, il);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    q = gg_scale(g, q);   /* 1/sqrt(n_embd_head); kq_scale stays 1 */
    gb_cb(b, q, "Qcur", il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_required(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &residual);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, residual);
    residual = cur;
    cur = norm_wb(b, cur, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias", il);
    gb_cb(b, cur, "ffn_norm", il);
    gb_moe o;
    gb_moe_layer(b, il, GB_GATING_SOFTMAX, &o);
    o.gating = GB_GATING_SOFTMAX;   /* fixed, whatever the file says */
    o.norm_w = true;
    o.exp_probs_b = -1;
    o.w_scale = 0;                  /* phimoe reads no expert_weights_scale */
    cur = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, cur, "ffn_moe_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, residual, cur);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_phi3::graph<false> on llama_model_phimoe's tensors */
static void build_phimoe(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t rf_leaf[GGFIT_MAX_BUFTS];
    for (int i = 0; i < GGFIT_MAX_BUFTS; i++)
        rf_leaf[i] = -1;
    if (b->hp->n_embd_head_k != b->hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp asserts they are equal */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1, rf_leaf);
    int32_t cur = norm_wb(b, inpL, "output_norm.weight", "output_norm.bias", -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_required(b, "output.weight", 0), cur);
    gb_cb(b, cur, "result_output_no_bias", -1);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, gb_required(b, "output.bias", 0));
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* llama_model_phimoe::load_arch_hparams reads no sliding window. */
static uint32_t window_none(const ggfit_arch *a, const ggfit_model *m)
{
    (void)a;
    (void)m;
    return 0;
}

const ggfit_arch ggfit__model_phimoe = {
    .name = "phimoe",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_phimoe,
    .window = window_none,
};
