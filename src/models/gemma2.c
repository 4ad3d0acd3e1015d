/*
 * gemma2.c - src/models/gemma2.cpp: Gemma 2 with interleaved
 * sliding-window attention (every other layer, by default), scaled
 * embeddings, norms after attention and FFN as well as before, a GELU-gated
 * FFN, and tanh soft-capping of the attention and final logits.
 */
#include "llama/graph.h"

/* build_ffn with GELU and a parallel gate (LLM_FFN_GELU, LLM_FFN_PAR). */
static int32_t ffn_geglu(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t up = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, up, "ffn_up", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate.weight", il), cur);
    gb_cb(b, cur, "ffn_gate", il);
    cur = gg_glu_split(g, cur, up);
    gb_cb(b, cur, "ffn_geglu", il);
    return gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    q = gg_rope(g, q, b->inp_pos, -1);   /* the layer's own base and scale */
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    q = gg_scale(g, q);   /* f_attention_scale; kq_scale stays 1 */
    int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
    cur = b->p->swa ? gb_attn_iswa(b, wo, -1, q, k, v, -1, il)
                    : gb_attn(b, wo, -1, q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &inpL);
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
    gb_cb(b, cur, "attn_post_norm", il);
    int32_t sa_out = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
    gb_cb(b, sa_out, "sa_out", il);
    cur = gb_norm(b, sa_out, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = ffn_geglu(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    /* normed as layer -1: its "norm" is not pinned */
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm.weight", il), -1);
    gb_cb(b, cur, "ffn_post_norm", -1);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, sa_out);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_gemma2::graph */
static void build_gemma2(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    b->attn_soft_cap = true;   /* hparams.attn_soft_cap, always on for gemma2 */
    int32_t inpL = gb_inp_embd(b);
    inpL = gg_scale(g, inpL);  /* by sqrt(n_embd) */
    gb_cb(b, inpL, "inp_scaled", -1);
    if (b->p->swa)
        gb_inputs_kv_iswa(b);
    else
        gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    /* final logit soft-capping, always (default cap 30) */
    cur = gg_scale(g, cur);
    cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* tanh */
    cur = gg_scale(g, cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* Every other layer slides over 4096 tokens unless the file says otherwise. */
const ggfit_arch ggfit__model_gemma2 = {
    .name = "gemma2",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 2,
    .swa_default = 4096,
    .build = build_gemma2,
};
