/*
 * gemma.c - src/models/gemma.cpp: the first Gemma, embeddings scaled by
 * sqrt(n_embd), the llama block with Q scaled before the attention and a
 * GEGLU FFN, the tied output.
 */
#include "llama/graph.h"

/* llama_model_gemma::graph */
static void build_gemma(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    inpL = gg_scale(g, inpL);
    gb_cb(b, inpL, "inp_scaled", -1);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, k, "Kcur", il);
        q = gg_scale(g, q);
        gb_cb(b, q, "Qcur_scaled", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpL);
        int32_t sa_out = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, sa_out, "sa_out", il);
        cur = gb_norm(b, sa_out, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_act(b, cur, il, GB_FFN_GELU);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, sa_out);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_gemma = {
    .name = "gemma",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_gemma,
};
