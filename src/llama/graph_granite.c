/*
 * graph_granite.c - the block of Granite's graph (src/models/granite.cpp,
 * build_attention_layer and build_layer_ffn) and its end, which
 * granite-swa.cpp repeats with an iSWA cache, attention sinks and its own
 * experts; MiniCPM builds Granite's graph too.
 */
#include "llama/graph.h"

int32_t gb_granite_layer(bctx *b, int32_t inpL, int il, bool last, const gb_granite *o)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    /* build_attention_layer */
    int32_t q, k, v;
    if (o->swa)
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
    else
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    if (o->rope) {
        /* rope_freqs when loaded, else LongRoPE's long or short factors */
        int32_t rf = gb_rope_factors(b, il);
        if (rf < 0)
            rf = gb_rope_factors_ls(b, il, o->rf_leaf);
        q = gb_rope(b, q, rf, il);
        k = gb_rope(b, k, rf, il);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
    int32_t wo_b = gb_weight(b, "blk.%d.attn_output.bias", il);
    if (o->swa)
        cur = gb_attn_iswa(b, wo, wo_b, q, k, v,
                           gb_required(b, "blk.%d.attn_sinks.weight", il), il);
    else
        cur = gb_attn(b, wo, wo_b, q, k, v, -1, il);
    gb_cb(b, cur, "attn_out", il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    /* build_layer_ffn */
    if (o->res_scale)
        cur = gg_scale(g, cur);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        cur = gb_ffn_bias(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    } else {
        cur = o->ffn_moe(b, cur, il);
    }
    if (o->res_scale)
        cur = gg_scale(g, cur);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

void gb_granite_output(bctx *b, int32_t inpL)
{
    gg_graph *g = b->g;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    cur = gg_scale(g, cur);   /* 1 / f_logit_scale */
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}
