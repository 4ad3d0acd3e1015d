/*
 * build_gptoss.c - src/models/openai-moe.cpp: gpt-oss, iSWA attention with
 * sinks and biases, and an MoE with biases everywhere, softmax over the
 * chosen experts' logits and the clamped SwiGLU (swiglu_oai).
 */
#include "build_impl.h"

/* Adds each chosen expert's bias (fmt), when the model has one. */
static int32_t add_bias_id(bctx *b, int32_t cur, const char *fmt, int il, int32_t ids,
                           const char *name)
{
    int32_t bias = gb_weight(b, fmt, il);
    if (bias < 0)
        return cur;
    cur = gg_add_id(b->g, cur, bias, ids);
    gb_cb(b, cur, name, il);
    return cur;
}

/* The router of build_moe_ffn with SOFTMAX_WEIGHT gating: the top experts
 * of the biased logits, weighted by a softmax over those experts only. */
static int32_t moe_route(bctx *b, int32_t cur, int il, int32_t *selected)
{
    gg_graph *g = b->g;
    int64_t n_tokens = gb_ne(b, cur, 1);
    int64_t n_expert = b->hp->n_expert, n_used = b->hp->n_expert_used;
    int32_t logits = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate_inp.weight", il), cur);
    gb_cb(b, logits, "ffn_moe_logits", il);
    int32_t bias = gb_weight(b, "blk.%d.ffn_gate_inp.bias", il);
    if (bias >= 0) {
        logits = gg_binary(g, GGFIT_OP_ADD, logits, bias);
        gb_cb(b, logits, "ffn_moe_logits_biased", il);
    }
    int32_t probs = logits;   /* the softmax comes after the selection */
    gb_cb(b, probs, "ffn_moe_probs", il);
    *selected = gg_argsort_top_k(g, probs, n_used);
    gb_cb(b, g->t[*selected].src[0], "ffn_moe_argsort", il);
    gb_cb(b, *selected, "ffn_moe_topk", il);
    probs = gb_reshape_3d(b, probs, 1, n_expert, n_tokens);
    int32_t weights = gg_get_rows(g, probs, *selected);
    gb_cb(b, weights, "ffn_moe_weights", il);
    weights = gb_reshape_2d(b, weights, n_used, n_tokens);
    weights = gg_soft_max(g, weights, -1, -1);
    weights = gb_reshape_3d(b, weights, 1, n_used, n_tokens);
    gb_cb(b, weights, "ffn_moe_weights_softmax", il);
    gg_expand(g, weights);
    return weights;
}

/* The sum of the n_used weighted experts: views first, then the adds. */
static int32_t moe_sum(bctx *b, int32_t experts, int il)
{
    gg_graph *g = b->g;
    int64_t n_used = b->hp->n_expert_used;
    int64_t n_embd = gb_ne(b, experts, 0), n_tokens = gb_ne(b, experts, 2);
    int32_t parts[256];
    if (n_used < 1 || n_used > 256) {
        b->missing = true;   /* llama.cpp caps experts at 256 */
        return experts;
    }
    uint64_t nb1 = g->t[experts].nb[1], nb2 = g->t[experts].nb[2];
    for (int64_t i = 0; i < n_used; i++) {
        parts[i] = gb_view_2d(b, experts, n_embd, n_tokens, nb2, (uint64_t)i * nb1);
        gg_expand(g, parts[i]);
    }
    int32_t out = parts[0];
    for (int64_t i = 1; i < n_used; i++) {
        out = gg_binary(g, GGFIT_OP_ADD, out, parts[i]);
        gg_expand(g, out);
    }
    if (n_used == 1)
        out = gg_cont(g, out);
    gb_cb(b, out, "ffn_moe_out", il);
    return out;
}

/* llm_graph_context::build_moe_ffn as openai-moe calls it. */
static int32_t moe_ffn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int64_t n_embd = gb_ne(b, cur, 0), n_tokens = gb_ne(b, cur, 1);
    int32_t selected;
    int32_t weights = moe_route(b, cur, il, &selected);
    cur = gb_reshape_3d(b, cur, n_embd, 1, n_tokens);
    int32_t up = gg_mul_mat_id(g, gb_required(b, "blk.%d.ffn_up_exps.weight", il), cur,
                               selected);
    gb_cb(b, up, "ffn_moe_up", il);
    up = add_bias_id(b, up, "blk.%d.ffn_up_exps.bias", il, selected, "ffn_moe_up_biased");
    cur = gg_mul_mat_id(g, gb_required(b, "blk.%d.ffn_gate_exps.weight", il), cur, selected);
    gb_cb(b, cur, "ffn_moe_gate", il);
    cur = add_bias_id(b, cur, "blk.%d.ffn_gate_exps.bias", il, selected, "ffn_moe_gate_biased");
    cur = gg_glu_split(g, cur, up);   /* swiglu_oai */
    gb_cb(b, cur, "ffn_moe_swiglu_oai", il);
    int32_t experts = gg_mul_mat_id(g, gb_required(b, "blk.%d.ffn_down_exps.weight", il), cur,
                                    selected);
    gb_cb(b, experts, "ffn_moe_down", il);
    experts = add_bias_id(b, experts, "blk.%d.ffn_down_exps.bias", il, selected,
                          "ffn_moe_down_biased");
    experts = gg_binary(g, GGFIT_OP_MUL, experts, weights);
    gb_cb(b, experts, "ffn_moe_weighted", il);
    gg_expand(g, experts);
    return moe_sum(b, experts, il);
}

static int32_t layer(bctx *b, int32_t inpL, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn_iswa(b, gb_required(b, "blk.%d.attn_output.weight", il),
                       gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v,
                       gb_required(b, "blk.%d.attn_sinks.weight", il), il);
    gb_cb(b, cur, "attn_out", il);
    /* The output rows are picked after the last layer, not inside it. */
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
    gb_cb(b, cur, "attn_post_norm", il);
    cur = moe_ffn(b, cur, il);
    gb_cb(b, cur, "ffn_moe_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_openai_moe::graph */
void gb_build_gptoss(bctx *b)
{
    gg_graph *g = b->g;
    if (!b->p->swa) {
        b->missing = true;   /* llama.cpp requires the sliding window */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv_iswa(b);
    for (int il = 0; il < (int)b->hp->n_layer; il++)
        inpL = layer(b, inpL, il);
    /* The last hidden state is kept for NextN drafting (res->t_h_nextn),
     * so ggml-alloc never frees it. */
    g->t[inpL].flags |= GGFIT_TF_OUTPUT;
    int32_t cur = gg_get_rows(g, inpL, b->inp_out_ids);
    cur = gb_norm(b, cur, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}
