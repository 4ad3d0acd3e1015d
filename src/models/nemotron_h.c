/*
 * nemotron_h.c - src/models/nemotron-h.cpp: Nemotron-H, a hybrid of
 * Mamba2 layers (llm_build_mamba_base::build_mamba2_layer in
 * mamba-base.cpp), attention layers without RoPE and MLP-only layers.
 */
#include "llama/graph.h"

static int32_t attention_layer(bctx *b, int32_t cur, int il)
{
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    gb_cb(b, cur, "attn_out", il);
    return cur;
}

/* build_ffn_layer, dense: build_ffn with a squared ReLU and no gate. */
static int32_t ffn_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t w;
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) >= 0) {
        b->missing = true;   /* the MoE variant has no graph here */
        return cur;
    }
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, cur, "ffn_up", il);
    if ((w = gb_weight(b, "blk.%d.ffn_up.bias", il)) >= 0) {
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
        gb_cb(b, cur, "ffn_up_b", il);
    }
    cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);
    gb_cb(b, cur, "ffn_relu", il);
    cur = gg_unary_op(g, GGFIT_OP_SQR, cur);
    gb_cb(b, cur, "ffn_sqr(relu)", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
    if ((w = gb_weight(b, "blk.%d.ffn_down.bias", il)) >= 0) {
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
    }
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_nemotron_h::graph */
static void build_nemotron_h(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gg_expand(g, inpL);
    gb_inputs_rs(b);
    gb_inputs_kv(b);   /* positions are made but no layer reads them */
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = gb_mamba2_layer(b, cur, il);
        else if (ggfit_model_layer(b->p->m, (uint32_t)il)->n_ff == 0)
            cur = attention_layer(b, cur, il);
        else
            cur = ffn_layer(b, cur, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, cur, "nemotron_h_block_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

/* Mamba2 layers have neither KV heads nor an FFN; attention layers have KV heads. */
const ggfit_arch ggfit__model_nemotron_h = {
    .name = "nemotron_h",
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NEMOTRON_H,
    .build = build_nemotron_h,
};
