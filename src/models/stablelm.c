/*
 * stablelm.c - src/models/stablelm.cpp: StableLM, LayerNorm with biases,
 * Q/K/V (fused or separate) with optional per-head LayerNorms of Q and K,
 * partial RoPE, a SwiGLU FFN; without ffn_norm (StableLM 2 12B) the FFN
 * reads the attention's norm, in parallel.
 */
#include "llama/graph.h"

/* llama_model_stablelm::graph */
static void build_stablelm(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t cur = gb_layer_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il),
                                    gb_required(b, "blk.%d.attn_norm.bias", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t inpSA = cur;
        int32_t q, k, v, w;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        if ((w = gb_weight(b, "blk.%d.attn_q_norm.weight", il)) >= 0) {
            q = gb_layer_norm(b, q, w, -1, il);
            gb_cb(b, q, "Qcur", il);
        }
        if ((w = gb_weight(b, "blk.%d.attn_k_norm.weight", il)) >= 0) {
            k = gb_layer_norm(b, k, w, -1, il);
            gb_cb(b, k, "Kcur", il);
        }
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        if (il == n_layer - 1) {
            cur = gg_get_rows(g, cur, b->inp_out_ids);
            inpL = gg_get_rows(g, inpL, b->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, b->inp_out_ids);
        }
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        if ((w = gb_weight(b, "blk.%d.ffn_norm.weight", il)) >= 0) {
            cur = gb_layer_norm(b, ffn_inp, w, gb_weight(b, "blk.%d.ffn_norm.bias", il), il);
            gb_cb(b, cur, "ffn_norm", il);
        } else {
            cur = inpSA;
        }
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output_ln(b, inpL);
}

const ggfit_arch ggfit__model_stablelm = {
    .name = "stablelm",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_stablelm,
};
