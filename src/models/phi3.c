/*
 * phi3.c - src/models/phi3.cpp: fused QKV (or separate Q/K/V), RoPE
 * with the long or short frequency factors of LongRoPE, Q scaled before
 * attention, and a fused gate_up FFN (one up matrix of 2 n_ff rows, SwiGLU
 * over its halves). llama.cpp turns Phi-3's sliding window off, so there is
 * one KV cache.
 */
#include "llama/graph.h"

static int32_t layer(bctx *b, int32_t inpL, int il, bool last, int32_t *rf_leaf)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t residual = inpL;
    int32_t rf = gb_rope_factors_ls(b, il, rf_leaf);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
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
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &residual);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, residual);
    residual = cur;
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = gb_ffn_gate_up(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, residual, cur);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_phi3::graph<false> */
static void build_phi3(bctx *b)
{
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
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1, rf_leaf);
    gb_output(b, inpL);
}

/* llama_model_phi3::load_arch_hparams: llama.cpp ignores Phi-3's
 * sliding_window for the cache. */
static uint32_t window_phi3(const ggfit_arch *a, const ggfit_model *m)
{
    (void)a;
    (void)m;
    return 0;
}

const ggfit_arch ggfit__model_phi3 = {
    .name = "phi3",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_phi3,
    .window = window_phi3,
};
