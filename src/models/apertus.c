/*
 * apertus.c - src/models/apertus.cpp: Apertus. Pre-norm attention
 * with RMS Q/K norms before RoPE (with rope_freqs, or LongRoPE's long or
 * short factors), an optional output bias, and an FFN without a gate:
 * up, xIELU (one unary op, the shape of its input), down.
 */
#include "llama/graph.h"

/* llama_model_apertus::graph */
static void build_apertus(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int32_t rf_leaf[GGFIT_MAX_BUFTS];
    for (int i = 0; i < GGFIT_MAX_BUFTS; i++)
        rf_leaf[i] = -1;
    if (hp->n_embd_head_k != hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp asserts equal head sizes */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        /* llama_model::get_rope_factors */
        int32_t rf = gb_rope_factors(b, il);
        if (rf < 0)
            rf = gb_rope_factors_ls(b, il, rf_leaf);
        int32_t q, k, v, w;
        if ((w = gb_weight(b, "blk.%d.attn_qkv.weight", il)) >= 0)
            gb_qkv_fused(b, cur, w, il, li->n_head, li->n_head_kv, &q, &k, &v);
        else
            gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "Qcur_normed", il);
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k, "Kcur_normed", il);
        q = gb_rope(b, q, rf, il);
        k = gb_rope(b, k, rf, il);
        gb_cb(b, q, "Qcur_pos", il);
        gb_cb(b, k, "Kcur_pos", il);
        gb_cb(b, v, "Vcur_pos", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                      gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
        gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
        gb_cb(b, cur, "ffn_up", il);
        cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* ggml_xielu */
        gb_cb(b, cur, "ffn_xielu", il);
        cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

/* load_arch_hparams: the xIELU activation's four parameters, one per block
 * or one for all, required. */
static const ggfit_arr_key arr_keys[] = {
    { "!xielu.alpha_n", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, true },
    { "!xielu.alpha_p", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, true },
    { "!xielu.beta", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, true },
    { "!xielu.eps", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, true },
    { NULL },
};

const ggfit_arch ggfit__model_apertus = {
    .name = "apertus",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .arr_keys = arr_keys,
    .build = build_apertus,
};
