/*
 * glm4moe.c - src/models/glm4-moe.cpp: GLM-4.5. Attention with Q/K/V
 * biases (and Q/K norms in the largest model), a post-attention norm before
 * the FFN, a dense FFN in the leading blocks and routed experts (sigmoid
 * gating with a selection bias) plus shared experts elsewhere. The last
 * nextn_predict_layers blocks predict extra tokens: llama.cpp skips their
 * weights and leaves them out of this graph, though they keep KV cells.
 */
#include "llama/graph.h"

static int32_t glm_attn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v, w;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    if ((w = gb_weight(b, "blk.%d.attn_q_norm.weight", il)) >= 0) {
        q = gb_norm(b, q, w, il);
        gb_cb(b, q, "Qcur_normed", il);
    }
    if ((w = gb_weight(b, "blk.%d.attn_k_norm.weight", il)) >= 0) {
        k = gb_norm(b, k, w, il);
        gb_cb(b, k, "Kcur_normed", il);
    }
    /* RoPE and M-RoPE (rope.dimension_sections) build the same shapes. */
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

/* Routed experts plus the shared ones, on the same input. */
static int32_t glm_moe(bctx *b, int32_t cur, int il)
{
    gb_moe o;
    gb_moe_layer(b, il, GB_GATING_SIGMOID, &o);
    int32_t routed = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, routed, "ffn_moe_out", il);
    int32_t shared = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                              gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                              gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, shared, "ffn_shexp_out", il);
    cur = gg_binary(b->g, GGFIT_OP_ADD, routed, shared);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

static int32_t glm_layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = glm_attn(b, cur, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
    gb_cb(b, cur, "post_attn_norm", il);
    if ((uint32_t)il < b->hp->n_layer_dense_lead) {
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    } else {
        cur = glm_moe(b, cur, il);
    }
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_glm4_moe::graph */
static void build_glm4moe(bctx *b)
{
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    if (n_layer < 1) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++)
        inpL = glm_layer(b, inpL, il, il == n_layer - 1);
    gb_output(b, inpL);
}

/* The NextN blocks are left out of the graph but keep their KV cells. */
/* load_arch_hparams reads the rope sections (get_key_or_arr, 4), when the file has them. */
static const ggfit_arr_key arr_keys[] = {
    GGFIT_ARR_ROPE_SECTIONS(false),
    { NULL },
};

const ggfit_arch ggfit__model_glm4moe = {
    .name = "glm4moe",
    .required_keys = (const char *const[]){ "expert_feed_forward_length",
            "attention.layer_norm_rms_epsilon", "expert_count", "expert_used_count",
            "expert_shared_count", NULL },
    .arr_keys = arr_keys,
    .mem = GGFIT_MEM_KV,
    .nextn_kv = true,
    .build = build_glm4moe,
};
