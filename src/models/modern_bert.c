/*
 * modern_bert.c - src/models/modern-bert.cpp: ModernBERT, an encoder without
 * a memory module: pre-norm LayerNorms without biases, fused QKV, RoPE,
 * a GeGLU (or SwiGLU) FFN over the halves of a 2 n_ff up, and, when the file
 * gives a sliding window, symmetric sliding-window attention on all but
 * every third layer (both masks n_tokens x n_tokens).
 */
#include <string.h>

#include "llama/graph.h"

/* llama_model_modern_bert::graph */
static void build_modern_bert(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const gb_params *p = b->p;
    int n_layer = (int)hp->n_layer;
    if (hp->n_embd_head_v != hp->n_embd_head_k) {
        b->missing = true;   /* llama.cpp asserts it */
        return;
    }
    b->inp_pos = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_tokens), NULL);
    int32_t inpL = gb_inp_embd(b);
    gb_cb(b, inpL, "inp_embd", -1);
    inpL = gb_layer_norm(b, inpL, gb_required(b, "token_embd_norm.weight", 0), -1, 0);
    gb_cb(b, inpL, "inp_norm", 0);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
    gb_inputs_no_cache(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(p->m, (uint32_t)il);
        int32_t cur = inpL, q, k, v;
        int32_t norm = gb_weight(b, "blk.%d.attn_norm.weight", il);
        if (norm >= 0) {
            cur = gb_layer_norm(b, inpL, norm, -1, il);
            gb_cb(b, cur, "attn_norm", il);
        }
        gb_qkv_fused(b, cur, gb_required(b, "blk.%d.attn_qkv.weight", il), il, li->n_head,
                     li->n_head_kv, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn_no_cache(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v,
                               il);
        gb_cb(b, cur, "kqv_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpL);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_layer_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), -1, il);
        gb_cb(b, cur, "ffn_norm", il);
        /* build_ffn with LLM_FFN_GEGLU (or the file's hidden_act), LLM_FFN_SEQ,
         * no gate: the GLU halves the up product */
        cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
        gb_cb(b, cur, "ffn_up", il);
        const gg_tensor *t = &g->t[cur];
        int64_t ne[4] = { t->ne[0] / 2, t->ne[1], t->ne[2], t->ne[3] };
        cur = gg_op_shape(g, GGFIT_OP_GLU, t->type, 4, ne, 1, &cur);
        gb_cb(b, cur, "ffn_geglu", il);
        cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        inpL = cur;
    }
    int32_t cur = gb_layer_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1, -1);
    gb_cb(b, cur, "final_norm_out", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_tensors: the embeddings' norm is done on the first layer. */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    if (!strncmp(t->info->name, "token_embd_norm.", 16))
        return 0;
    return -2;
}

/* Sliding-window layers only when the file gives a window; then every
 * third layer, starting with the first, is dense (set_swa_pattern(3, true)
 * unless the file gives the period). */
const ggfit_arch ggfit__model_modern_bert = {
    .name = "modern-bert",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .no_output = true,
    .swa_period = 3,
    .swa_dense_first = true,
    .swa_needs_window = true,
    .build = build_modern_bert,
    .tensor_layer = tensor_layer,
    .rank_mean = true,      /* build_pooling: the gte reranker's mean and GELU */
};
