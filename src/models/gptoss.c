/*
 * gptoss.c - src/models/openai-moe.cpp: gpt-oss, iSWA attention with
 * sinks and biases, and an MoE with biases everywhere, softmax over the
 * chosen experts' logits and the clamped SwiGLU (swiglu_oai).
 */
#include "llama/graph.h"

/* llm_graph_context::build_moe_ffn as openai-moe calls it: biases on the
 * router and on every expert, the top experts of the logits weighted by a
 * softmax over those experts only, and the clamped SwiGLU. It reads none of
 * the gating keys gb_moe_layer does. */
static int32_t moe_ffn(bctx *b, int32_t cur, int il)
{
    gb_moe o = {
        .gate_up_exps = -1,
        .exp_probs_b = -1,
        .act = GB_MOE_SWIGLU_OAI,
        .gating = GB_GATING_SOFTMAX_WEIGHT,
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
    };
    o.gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il);
    o.gate_inp_b = gb_weight(b, "blk.%d.ffn_gate_inp.bias", il);
    o.up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il);
    o.up_exps_b = gb_weight(b, "blk.%d.ffn_up_exps.bias", il);
    o.gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il);
    o.gate_exps_b = gb_weight(b, "blk.%d.ffn_gate_exps.bias", il);
    o.down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il);
    o.down_exps_b = gb_weight(b, "blk.%d.ffn_down_exps.bias", il);
    return gb_moe_ffn_ex(b, cur, &o, il);
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
static void build_gptoss(bctx *b)
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

/* Sliding-window and full attention alternate. */
const ggfit_arch ggfit__model_gptoss = {
    .name = "gpt-oss",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", "attention.sliding_window", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 2,
    .build = build_gptoss,
};
