/*
 * plamo.c - src/models/plamo.cpp: PLaMo, a parallel block: attention
 * (RoPE) and a SwiGLU feed-forward both read the same normed input, and
 * their outputs are added to the block's input.
 */
#include "llama/graph.h"

/* llama_model_plamo::graph */
static void build_plamo(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t sa_inp = cur;
        int32_t q, k, v;
        int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
        if (wqkv >= 0)
            gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
        else
            gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        if (il == n_layer - 1) {
            gb_out_rows(b, &cur, &sa_inp);
            inpL = gg_get_rows(g, inpL, b->inp_out_ids);
        }
        int32_t sa_out = cur;
        cur = gb_ffn_gated(b, sa_inp, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, sa_out);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (!b->missing)
        gb_output(b, inpL);
}

const ggfit_arch ggfit__model_plamo = {
    .name = "plamo",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_plamo,
};
