/*
 * gemma3.c - src/models/gemma3.cpp: Gemma 3 with interleaved
 * sliding-window attention (iSWA): scaled embeddings, Q/K norms, norms
 * after attention and FFN as well as before, a GELU-gated FFN.
 */
#include <stdio.h>

#include "llama/graph.h"

/* llm_graph_context::build_ffn with GELU and a parallel gate: up is made
 * first, the gate's product comes first in the GEGLU. */
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

/* The final logit soft-capping (gemma3.final_logit_softcapping), 0 when the
 * file has none. */
static double final_softcap(bctx *b)
{
    char key[96];
    snprintf(key, sizeof key, "%s.final_logit_softcapping", b->hp->arch);
    int64_t i = ggfit_gguf_find_key(b->gguf, key);
    ggfit_value v;
    if (i < 0 || !ggfit_gguf_value(b->gguf, (uint64_t)i, &v))
        return 0;
    return v.type == GGFIT_GGUF_FLOAT32 || v.type == GGFIT_GGUF_FLOAT64 ? v.f : 0;
}

/* Attention with Q/K norms, Q scaled before it; one cache or two. */
static int32_t attention(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v;
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
    q = gg_scale(g, q);   /* f_attention_scale; kq_scale stays 1 */
    int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
    return b->p->swa ? gb_attn_iswa(b, wo, -1, q, k, v, -1, il)
                     : gb_attn(b, wo, -1, q, k, v, -1, il);
}

/* One block: attention and FFN, each wrapped in a pre- and a post-norm. */
static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = attention(b, cur, il);
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
    /* llama.cpp norms the FFN output as layer -1: its "norm" is not pinned. */
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm.weight", il), -1);
    gb_cb(b, cur, "ffn_post_norm", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, sa_out);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_gemma3::graph */
static void build_gemma3(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    inpL = gg_scale(g, inpL);   /* by sqrt(n_embd) */
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
    if (final_softcap(b) != 0) {
        cur = gg_scale(g, cur);
        cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* tanh */
        cur = gg_scale(g, cur);
    }
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* Five sliding-window layers in six, when the file gives a window. */
const ggfit_arch ggfit__model_gemma3 = {
    .name = "gemma3",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 6,
    .swa_needs_window = true,
    .build = build_gemma3,
};
