/*
 * qwen3tts.c - src/models/qwen3tts.cpp: llama_model_qwen3tts is
 * llama_model_qwen3vl (its hparams, tensors and graph), whose output (the
 * codec head) has 3072 rows whatever the vocabulary. When the embeddings
 * have more rows than the head, the logits are padded to the vocabulary
 * with -inf, a scalar made from output_norm's first value; with the tied
 * embeddings as the head the graph is Qwen3-VL's.
 */
#include "llama/check.h"
#include "llama/graph.h"

/* The end of llama_model_qwen3vl::graph for LLM_ARCH_QWEN3TTS. */
static void output_padded(bctx *b, int32_t inpL)
{
    gg_graph *g = b->g;
    int32_t norm_w = gb_required(b, "output_norm.weight", 0);
    int32_t cur = gb_norm(b, inpL, norm_w, -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    int32_t out = gb_output_weight(b);
    if (b->missing)
        return;
    cur = gg_mul_mat(g, out, cur);
    int64_t i = ggfit_gguf_find_tensor(b->gguf, "token_embd.weight");
    int64_t n_in = ggfit_gguf_tensor(b->gguf, (uint64_t)i)->ne[1], n_out = gb_ne(b, out, 1);
    if (n_in < n_out) {
        b->missing = true;   /* llama.cpp aborts: "invalid case" */
        return;
    }
    if (n_in > n_out) {
        int64_t ne1[1] = { 1 };
        uint64_t nb[1] = { 0 };
        int32_t neg_inf = gg_scale(g, gg_view(g, norm_w, 1, ne1, nb, 0));
        int64_t ne[4] = { n_in - n_out, gb_ne(b, cur, 1), 1, 1 };
        neg_inf = gg_op_shape(g, GGFIT_OP_REPEAT, g->t[neg_inf].type, 4, ne, 1, &neg_inf);
        cur = gg_concat(g, neg_inf, cur, 0);
    }
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* llama_model_qwen3vl::graph */
static void build_qwen3tts(bctx *b)
{
    b->n_pos_per_embd = 4;
    b->n_deepstack = (int64_t)gb_key(b, "n_deepstack_layers", 0);
    if (b->n_deepstack < 0 || b->n_deepstack > (int64_t)b->hp->n_layer) {
        b->missing = true;
        return;
    }
    b->output = output_padded;
    gb_build_llama_like(b, GB_LLAMA_QK_NORM);
}

/* The graph converts n_deepstack_layers to an integer. */
static void check(hp_check *c)
{
    hc_key_int(c, "n_deepstack_layers", 0, UINT32_MAX, 0, NULL,
               "llama.cpp reads it as an unsigned 32-bit count");
}

const ggfit_arch ggfit__model_qwen3tts = {
    .name = "qwen3tts",
    .check = check,
    .mem = GGFIT_MEM_KV,
    .build = build_qwen3tts,
};
