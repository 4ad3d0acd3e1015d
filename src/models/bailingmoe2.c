/*
 * bailingmoe2.c - src/models/bailingmoe2.cpp: Ling/Ring 2.0. Fused
 * QKV with RMS Q/K norms before RoPE, a dense SwiGLU in the leading blocks
 * and elsewhere routed experts (the file's gating, by default sigmoid with
 * a selection bias, over expert groups when it has them) plus shared
 * experts. The last nextn_predict_layers blocks predict extra tokens:
 * llama.cpp skips their weights and leaves them out of this graph, though
 * they keep KV cells.
 */
#include "llama/graph.h"

static int32_t ling_attn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v;
    gb_qkv_fused(b, cur, gb_required(b, "blk.%d.attn_qkv.weight", il), il, li->n_head,
                 li->n_head_kv, &q, &k, &v);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, k, "Kcur_normed", il);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

static int32_t ling_layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = ling_attn(b, cur, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t sa_out = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, sa_out, "sa_out", il);
    cur = gb_norm(b, sa_out, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    if ((uint32_t)il < b->hp->n_layer_dense_lead) {
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    } else {
        gb_moe o;
        gb_moe_layer(b, il, GB_GATING_SIGMOID, &o);
        int32_t routed = gb_moe_ffn_ex(b, cur, &o, il);
        gb_cb(b, routed, "ffn_moe_out", il);
        int32_t shared = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                                  gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                                  gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
        gb_cb(b, shared, "ffn_shexp", il);
        cur = gg_binary(g, GGFIT_OP_ADD, routed, shared);
        gb_cb(b, cur, "ffn_out", il);
    }
    cur = gg_binary(g, GGFIT_OP_ADD, cur, sa_out);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_bailingmoe2::graph */
static void build_bailingmoe2(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    if (n_layer < 1 || b->hp->n_embd_head_k != b->hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp asserts both */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = ling_layer(b, inpL, il, il == n_layer - 1);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_required(b, "output.weight", 0), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* The NextN blocks are left out of the graph but keep their KV cells. */
const ggfit_arch ggfit__model_bailingmoe2 = {
    .name = "bailingmoe2",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", "expert_shared_count", "expert_gating_func", NULL },
    .mem = GGFIT_MEM_KV,
    .nextn_kv = true,
    .build = build_bailingmoe2,
};
