/*
 * falcon.c - src/models/falcon.cpp: Falcon, LayerNorm, fused QKV with
 * NeoX RoPE, and the attention and a GELU FFN in parallel on the same
 * norm (Falcon-40B: a second norm, attn_norm_2, for the attention).
 */
#include "llama/graph.h"

/* llama_model_falcon::graph */
static void build_falcon(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t attn_norm = gb_layer_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il),
                                          gb_required(b, "blk.%d.attn_norm.bias", il), il);
        gb_cb(b, attn_norm, "attn_norm", il);
        int32_t cur = attn_norm;
        int32_t n2 = gb_weight(b, "blk.%d.attn_norm_2.weight", il);
        if (n2 >= 0) {
            cur = gb_layer_norm(b, inpL, n2, gb_weight(b, "blk.%d.attn_norm_2.bias", il), il);
            gb_cb(b, cur, "attn_norm_2", il);
        }
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        if (il == n_layer - 1) {
            cur = gg_get_rows(g, cur, b->inp_out_ids);
            inpL = gg_get_rows(g, inpL, b->inp_out_ids);
            attn_norm = gg_get_rows(g, attn_norm, b->inp_out_ids);
        }
        int32_t ffn_inp = cur;
        cur = gb_ffn_act(b, attn_norm, il, GB_FFN_GELU);   /* on the attention's norm */
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output_ln(b, inpL);
}

const ggfit_arch ggfit__model_falcon = {
    .name = "falcon",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_falcon,
};
