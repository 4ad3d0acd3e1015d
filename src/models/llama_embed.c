/*
 * llama_embed.c - src/models/llama-embed.cpp: Llama's graph built as an
 * embedding model (llama_model_llama::graph<true>): attention over the
 * ubatch without the KV cache (which is still made), and no output matrix
 * after the final norm (the tied copy is loaded all the same).
 */
#include "llama/graph.h"

/* llama_model_llama::graph<true> */
static void build_llama_embed(bctx *b)
{
    gg_graph *g = b->g;
    const gb_params *p = b->p;
    int64_t n_layer = b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    b->inp_pos = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_tokens), NULL);
    gb_inputs_no_cache(b);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t rf = gb_rope_factors(b, il);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gb_rope(b, q, rf, il);
        k = gb_rope(b, k, rf, il);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn_no_cache(b, gb_required(b, "blk.%d.attn_output.weight", il),
                               gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, il);
        gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
            cur = gb_ffn_bias(b, cur, il);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            cur = gb_moe_ffn(b, cur, il, true);
            gb_cb(b, cur, "ffn_moe_out", il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* create_memory gives it a KV cache like any decoder. */
const ggfit_arch ggfit__model_llama_embed = {
    .name = "llama-embed",
    .mem = GGFIT_MEM_KV,
    .build = build_llama_embed,
};
