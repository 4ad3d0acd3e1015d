/*
 * grok.c - src/models/grok.cpp: Grok, scaled embeddings, Llama's attention
 * (plain RoPE, the KQ logits soft-capped by tanh without flash attention),
 * attn_output_norm, then softmax-gated GELU experts plus, when the file has
 * one, a dense GELU FFN averaged with them, a post-FFN norm, and scaled
 * (optionally soft-capped) logits.
 */
#include "llama/graph.h"

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
    q = gb_rope(b, q, -1, il);
    k = gb_rope(b, k, -1, il);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.attn_output_norm.weight", il), il);
    gb_cb(b, cur, "attn_out_norm", il);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_weight(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1, .exp_probs_b = -1,
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .act = GB_MOE_GELU,
        .gating = GB_GATING_SOFTMAX,
        .norm_w = true,
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
    };
    int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe_out, "ffn_moe_out", il);
    int32_t up = gb_weight(b, "blk.%d.ffn_up.weight", il);
    if (up >= 0) {
        /* build_ffn, LLM_FFN_GELU, LLM_FFN_PAR */
        int32_t gate = gb_weight(b, "blk.%d.ffn_gate.weight", il);
        int32_t tmp = gg_mul_mat(g, up, cur);
        gb_cb(b, tmp, "ffn_up", il);
        if (gate >= 0) {
            cur = gg_mul_mat(g, gate, cur);
            gb_cb(b, cur, "ffn_gate", il);
            cur = gg_glu_split(g, cur, tmp);
            gb_cb(b, cur, "ffn_geglu", il);
        } else {
            cur = gg_unary_op(g, GGFIT_OP_UNARY, tmp);
            gb_cb(b, cur, "ffn_gelu", il);
        }
        cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_scale(g, gg_binary(g, GGFIT_OP_ADD, cur, moe_out));
        gb_cb(b, cur, "ffn_out", il);
    } else {
        cur = moe_out;
    }
    int32_t post = gb_weight(b, "blk.%d.layer_output_norm.weight", il);
    if (post < 0)
        post = gb_required(b, "blk.%d.post_ffw_norm.weight", il);
    cur = gb_norm(b, cur, post, il);
    gb_cb(b, cur, "ffn_post_norm", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_grok::graph */
static void build_grok(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    /* f_embedding_scale: 78.38 unless the file says otherwise */
    int32_t inpL = gb_key(b, "embedding_scale", 78.38367176906169) != 0 ? gb_inp_embd_scaled(b)
                                                                        : gb_inp_embd(b);
    gb_inputs_kv(b);
    /* build_attn_mha's Grok branch: tanh of the scaled KQ, scaled back, as
     * Gemma 2's soft-capping (flash attention is always off). */
    b->attn_soft_cap = true;
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    cur = gg_scale(g, cur);   /* f_logit_scale */
    if (gb_key(b, "final_logit_softcapping", 0) != 0) {
        cur = gg_scale(g, cur);
        cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* tanh */
        cur = gg_scale(g, cur);
    }
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

const ggfit_arch ggfit__model_grok = {
    .name = "grok",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .no_flash_attn = true,   /* llama_init_from_model forces it off */
    .build = build_grok,
};
