/*
 * cohere2.c - src/models/cohere2.cpp: Command R7B and Command A.
 * One layer norm feeds attention and FFN side by side (a parallel block),
 * both added to the residual; interleaved sliding-window attention (iSWA)
 * with RoPE on the sliding-window layers only; logits scaled at the end.
 */
#include "llama/graph.h"

/* build_norm with LLM_NORM: a layer norm (mean and variance), times w. */
static int32_t layer_norm(bctx *b, int32_t cur, int32_t w, int il)
{
    cur = gg_norm(b->g, cur);
    gb_cb(b, cur, "norm", il);
    return gg_binary(b->g, GGFIT_OP_MUL, cur, w);
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t cur = layer_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t ffn_inp = cur;
    int32_t q, k, v;
    int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (wqkv >= 0)
        gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
    else
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    /* The global layers take no positions at all (NoPE). */
    if (b->p->layer_flags[il] & GB_LAYER_SWA) {
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn_iswa(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
    if (last) {
        gb_out_rows(b, &cur, &inpL);
        ffn_inp = gg_get_rows(g, ffn_inp, b->inp_out_ids);
    }
    int32_t attn_out = cur;
    cur = gb_ffn(b, ffn_inp, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, attn_out);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_cohere2::graph */
static void build_cohere2(bctx *b)
{
    gg_graph *g = b->g;
    if (!b->p->swa) {
        b->missing = true;   /* llama.cpp always makes the two caches */
        return;
    }
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv_iswa(b);
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    int32_t cur = layer_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    if (gb_key(b, "logit_scale", 0) != 0)
        cur = gg_scale(g, cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* Three sliding-window layers in four, the fourth global. */
const ggfit_arch ggfit__model_cohere2 = {
    .name = "cohere2",
    .required_keys = (const char *const[]){ "attention.sliding_window", "logit_scale",
            "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .build = build_cohere2,
};
