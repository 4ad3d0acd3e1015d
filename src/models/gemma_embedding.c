/*
 * gemma_embedding.c - src/models/gemma-embedding.cpp: EmbeddingGemma, a
 * Gemma 3 shaped encoder without a memory module (create_memory gives it
 * nullptr) and never causal: symmetric sliding-window attention on all but
 * every sixth layer, over the ubatch's own tokens (two n_tokens x n_tokens
 * masks), RMS-normed Q and K, a GeGLU FFN, and the graph ends at the normed
 * token embeddings. Its output matrix is still loaded (the tied copy of
 * token_embd), as are the dense_2/dense_3 projections of the output layer.
 */
#include <string.h>

#include "llama/graph.h"

/* llama_model_gemma_embedding::graph */
static void build_gemma_embedding(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const gb_params *p = b->p;
    int n_layer = (int)hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    inpL = gg_scale(g, inpL);
    gb_cb(b, inpL, "inp_scaled", -1);
    b->inp_pos = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_tokens), NULL);
    gb_inputs_no_cache(b);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(p->m, (uint32_t)il);
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
        if (wqkv >= 0)
            gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
        else
            gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "Qcur_normed", il);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k, "Kcur_normed", il);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        q = gg_scale(g, q);
        cur = gb_attn_no_cache(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v,
                               il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpL);
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
        gb_cb(b, cur, "attn_post_norm", il);
        int32_t sa_out = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, sa_out, "sa_out", il);
        cur = gb_norm(b, sa_out, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_gated(b, cur, il);   /* GeGLU: the same GLU op as SwiGLU */
        gb_cb(b, cur, "ffn_out", il);
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm.weight", il), -1);
        gb_cb(b, cur, "ffn_post_norm", -1);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, sa_out);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_tensors: the sentence-transformers projections dense_2 and dense_3
 * are output-layer tensors. */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    if (!strncmp(t->info->name, "dense_2.", 8) || !strncmp(t->info->name, "dense_3.", 8))
        return ggfit_model_hparams(m)->n_layer;
    return -2;
}

/* set_swa_pattern(6): every sixth layer, the last of each six, is dense. */
const ggfit_arch ggfit__model_gemma_embedding = {
    .name = "gemma-embedding",
    .required_keys = (const char *const[]){ "attention.sliding_window",
            "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .non_causal = true,
    .swa_period = 6,
    .build = build_gemma_embedding,
    .tensor_layer = tensor_layer,
};
