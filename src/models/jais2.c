/*
 * jais2.c - src/models/jais2.cpp: JAIS-2, LayerNorms with biases,
 * separate Q/K/V with biases and RoPE, the output bias of attention, and a
 * squared-ReLU FFN (up, down, no gate) with biases.
 */
#include "llama/graph.h"

/* llama_model_jais2::graph */
static void build_jais2(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_layer = b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t cur = gb_layer_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il),
                                    gb_required(b, "blk.%d.attn_norm.bias", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur_rope", il);
        gb_cb(b, k, "Kcur_rope", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                      gb_required(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpL);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_layer_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il),
                            gb_required(b, "blk.%d.ffn_norm.bias", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_build_ffn(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                           gb_required(b, "blk.%d.ffn_up.bias", il), -1, -1,
                           gb_required(b, "blk.%d.ffn_down.weight", il),
                           gb_required(b, "blk.%d.ffn_down.bias", il), GB_FFN_RELU_SQR, false,
                           il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output_ln(b, inpL);
}

const ggfit_arch ggfit__model_jais2 = {
    .name = "jais2",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_jais2,
};
