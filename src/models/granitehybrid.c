/*
 * granitehybrid.c - src/models/granite-hybrid.cpp: Granite 4.0
 * hybrids, Mamba2 layers (the layers without KV heads) and attention layers
 * (RoPE when rope.scaling.finetuned, the default), each followed by a dense
 * or MoE (optionally with a shared expert) SwiGLU feed-forward, with
 * Granite's residual and logit scales.
 */
#include "llama/graph.h"

/* build_attention_layer */
static int32_t attention_layer(bctx *b, int32_t cur, bool rope, int il)
{
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    if (rope) {
        int32_t rf = gb_rope_factors(b, il);
        q = gb_rope(b, q, rf, il);
        k = gb_rope(b, k, rf, il);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    gb_cb(b, cur, "attn_out", il);
    return cur;
}

/* build_layer_ffn */
static int32_t layer_ffn(bctx *b, int32_t cur, int32_t inpSA, bool res_scale, int il)
{
    gg_graph *g = b->g;
    if (res_scale)
        cur = gg_scale(g, cur);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        cur = gb_ffn_bias(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    } else {   /* softmax gating, normalised weights, no scale */
        int32_t moe_out = gb_moe_ffn(b, cur, il, true);
        gb_cb(b, moe_out, "ffn_moe_out", il);
        if (gb_key(b, "expert_shared_feed_forward_length", 0) > 0) {
            int32_t shexp = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                                     gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                                     gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
            gb_cb(b, shexp, "ffn_shexp", il);
            cur = gg_binary(g, GGFIT_OP_ADD, moe_out, shexp);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            cur = moe_out;
        }
    }
    if (res_scale)
        cur = gg_scale(g, cur);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_granite_hybrid::graph */
static void build_granitehybrid(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    bool rope = gb_key(b, "rope.scaling.finetuned", 1) != 0;
    bool res_scale = gb_key(b, "residual_scale", 0) != 0;
    bool logit_scale = gb_key(b, "logit_scale", 0) != 0;
    if (b->hp->n_embd_head_k != b->hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp asserts equal head sizes */
        return;
    }
    /* build_inp_embd scales by f_embedding_scale when the file has one
     * (Granite 4.0-H: 12): a node of its own, which moves every later
     * placement (seen on Granite-4.0-H-Tiny's real layout, data/real). */
    int32_t inpL = gb_key(b, "embedding_scale", 0) != 0 ? gb_inp_embd_scaled(b) : gb_inp_embd(b);
    gb_inputs_rs(b);
    gb_inputs_kv(b);   /* its positions stand for build_inp_pos's */
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = gb_mamba2_layer(b, cur, il);
        else
            cur = attention_layer(b, cur, rope, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        inpL = layer_ffn(b, cur, inpSA, res_scale, il);
    }
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    if (logit_scale)
        cur = gg_scale(g, cur);   /* t_logits is the scaled tensor */
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* The Mamba2 layers are those without KV heads. */
const ggfit_arch ggfit__model_granitehybrid = {
    .name = "granitehybrid",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "ssm.conv_kernel",
            "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL },
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
    .build = build_granitehybrid,
};
