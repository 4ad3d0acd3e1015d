/*
 * nemotron_h.c - src/models/nemotron-h.cpp: Nemotron-H, a hybrid of
 * Mamba2 layers (llm_build_mamba_base::build_mamba2_layer in
 * mamba-base.cpp), attention layers without RoPE and MLP-only layers,
 * dense or MoE; nemotron_h_moe (nemotron-h-moe.cpp) runs the same graph.
 */
#include "llama/graph.h"
#include "versions/version.h"

static int32_t attention_layer(bctx *b, int32_t cur, int il)
{
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    gb_cb(b, cur, "attn_out", il);
    return cur;
}

/* build_ffn_layer, MoE: squared-ReLU experts (no gate) chosen by sigmoid
 * over the router's logits, optionally in a smaller latent space
 * (ffn_latent_down/up), plus a squared-ReLU shared expert on the input. */
static int32_t moe_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t inp_emb = cur, inp_latent = cur, w;
    if ((w = gb_weight(b, "blk.%d.ffn_latent_down.weight", il)) >= 0)
        inp_latent = gg_mul_mat(g, w, cur);
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = -1,
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1,
        .exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il),
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .act = GB_MOE_RELU_SQR,
        .gating = GB_GATING_SIGMOID,
        .norm_w = gb_key(b, "expert_weights_norm", 0) != 0,
        .w_scale = (float)gb_key(b, "expert_weights_scale", 0),
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
        .n_groups = (uint32_t)gb_key(b, "expert_group_count", 0),
        .n_group_used = (uint32_t)gb_key(b, "expert_group_used_count", 0),
        .has_logits_in = true,
    };
    o.logits_in = gg_mul_mat(g, o.gate_inp, cur);
    gb_cb(b, o.logits_in, "ffn_moe_logits", il);
    int32_t moe_out = gb_moe_ffn_ex(b, inp_latent, &o, il);
    gb_cb(b, moe_out, "ffn_moe_out", il);
    if ((w = gb_weight(b, "blk.%d.ffn_latent_up.weight", il)) >= 0)
        moe_out = gg_mul_mat(g, w, moe_out);
    int32_t sh = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up_shexp.weight", il), inp_emb);
    gb_cb(b, sh, "ffn_up", il);
    sh = gg_unary_op(g, GGFIT_OP_UNARY, sh);
    gb_cb(b, sh, "ffn_relu", il);
    sh = gg_unary_op(g, GGFIT_OP_SQR, sh);
    gb_cb(b, sh, "ffn_sqr(relu)", il);
    sh = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down_shexp.weight", il), sh);
    gb_cb(b, sh, "ffn_shexp", il);
    cur = gg_binary(g, GGFIT_OP_ADD, moe_out, sh);
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* build_ffn_layer, dense: build_ffn with a squared ReLU and no gate. */
static int32_t ffn_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t w;
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) >= 0)
        return moe_layer(b, cur, il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, cur, "ffn_up", il);
    if ((w = gb_weight(b, "blk.%d.ffn_up.bias", il)) >= 0) {
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
        gb_cb(b, cur, "ffn_up_b", il);
    }
    cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);
    gb_cb(b, cur, "ffn_relu", il);
    cur = gg_unary_op(g, GGFIT_OP_SQR, cur);
    gb_cb(b, cur, "ffn_sqr(relu)", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
    if ((w = gb_weight(b, "blk.%d.ffn_down.bias", il)) >= 0) {
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
    }
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_nemotron_h::graph */
static void build_nemotron_h(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gg_expand(g, inpL);
    gb_inputs_rs(b);
    gb_inputs_kv(b);   /* positions are made but no layer reads them */
    /* NEMOTRON_H_MOE_MTP: embeddings_nextn_masked is off, so the output
     * rows are picked after the final norm (kept whole as h_nextn), not
     * in the last layer. */
    bool nextn = ggfit__llama_has(b->p->llama_build, LLAMA_CHANGE_NEMOTRON_H_MOE_MTP);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = gb_mamba2_layer(b, cur, il);
        else if (ggfit_model_layer(b->p->m, (uint32_t)il)->n_ff == 0)
            cur = attention_layer(b, cur, il);
        else
            cur = ffn_layer(b, cur, il);
        if (il == n_layer - 1 && !nextn)
            gb_out_rows(b, &cur, &inpSA);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, cur, "nemotron_h_block_out", il);
        inpL = cur;
    }
    if (!nextn) {
        gb_output(b, inpL);
        return;
    }
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "h_nextn", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_get_rows(g, cur, b->inp_out_ids);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* Mamba2 layers have neither KV heads nor an FFN; attention layers have KV heads. */
const ggfit_arch ggfit__model_nemotron_h = {
    .name = "nemotron_h",
    .required_keys = (const char *const[]){ "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size",
            "ssm.time_step_rank", "ssm.group_count", "attention.layer_norm_rms_epsilon", NULL },
    /* 7a20b417f reads it for the MTP head's final norm, required */
    .required_keys_since = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .required_since = LLAMA_CHANGE_NEMOTRON_H_MOE_MTP,
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NEMOTRON_H,
    .build = build_nemotron_h,
    .rs_rollback = true,
    .rs_rollback_since = LLAMA_CHANGE_ROLLBACK_NEMOTRON_H,
};

/* nemotron_h_moe: llama_model_nemotron_h_moe reuses nemotron_h's hparams,
 * tensors and graph; its FFN layers are the MoE ones. */
const ggfit_arch ggfit__model_nemotron_h_moe = {
    .name = "nemotron_h_moe",
    .required_keys = (const char *const[]){ "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size",
            "ssm.time_step_rank", "ssm.group_count", "attention.layer_norm_rms_epsilon", NULL },
    .required_keys_since = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .required_since = LLAMA_CHANGE_NEMOTRON_H_MOE_MTP,
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NEMOTRON_H,
    .build = build_nemotron_h,
    .rs_rollback = true,
    .rs_rollback_since = LLAMA_CHANGE_ROLLBACK_NEMOTRON_H,
};
