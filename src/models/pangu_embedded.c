/*
 * pangu_embedded.c - src/models/pangu-embed.cpp: openPangu-Embedded,
 * Llama's block with a required attention output bias; RoPE without
 * frequency factors (the file's rope_freqs are loaded, never read).
 */
#include "llama/graph.h"

/* llama_model_pangu_embed::graph */
static void build_pangu_embedded(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_layer = b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gb_rope(b, q, -1, il);
        k = gb_rope(b, k, -1, il);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                      gb_required(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_gated(b, cur, il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_pangu_embedded = {
    .name = "pangu-embedded",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_pangu_embedded,
};
