/*
 * dbrx.c - src/models/dbrx.cpp: DBRX, LayerNorms with a weight and no
 * bias, fused QKV clamped to attention.clamp_kqv, plain RoPE, and
 * softmax-gated SwiGLU experts after attn_output_norm.
 */
#include "llama/graph.h"

/* llama_model_dbrx::graph */
static void build_dbrx(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_layer = b->hp->n_layer;
    bool clamp = gb_key(b, "attention.clamp_kqv", 0) > 0;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_layer_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), -1,
                                    il);
        gb_cb(b, cur, "attn_norm", il);
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, clamp, &q, &k, &v);
        q = gb_rope(b, q, -1, il);
        k = gb_rope(b, k, -1, il);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_layer_norm(b, ffn_inp, gb_required(b, "blk.%d.attn_output_norm.weight", il), -1,
                            il);
        gb_cb(b, cur, "attn_out_norm", il);
        gb_moe o = {
            .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
            .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
            .gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il),
            .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
            .gate_up_exps = -1, .exp_probs_b = -1,
            .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
            .gating = GB_GATING_SOFTMAX,
            .norm_w = true,
            .n_expert = b->hp->n_expert,
            .n_expert_used = b->hp->n_expert_used,
        };
        cur = gb_moe_ffn_ex(b, cur, &o, il);
        gb_cb(b, cur, "ffn_moe_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    int32_t cur = gb_layer_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1, -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

const ggfit_arch ggfit__model_dbrx = {
    .name = "dbrx",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", "attention.clamp_kqv",
            NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_dbrx,
};
