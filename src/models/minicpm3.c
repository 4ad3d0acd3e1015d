/*
 * minicpm3.c - src/models/minicpm3.cpp: MiniCPM3, low-rank Q (q_a, its
 * norm, q_b) and DeepSeek-style compressed keys and values whose heads are
 * rebuilt before the plain KV cache (gb_attn_kv_lora), LongRoPE factors on
 * the roped part, and MiniCPM's scales on embeddings, residual branches and
 * the output.
 */
#include "llama/graph.h"

/* llama_model_minicpm3::graph */
static void build_minicpm3(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_layer = b->hp->n_layer;
    int32_t rf_leaf[GGFIT_MAX_BUFTS];
    for (int i = 0; i < GGFIT_MAX_BUFTS; i++)
        rf_leaf[i] = -1;
    int32_t inpL = gb_inp_embd(b);
    inpL = gg_scale(g, inpL);   /* scale_embd */
    gb_cb(b, inpL, "inp_scaled", -1);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        /* get_rope_factors: no rope_freqs, so LongRoPE's long or short */
        int32_t rf = gb_rope_factors_ls(b, il, rf_leaf);
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_a.weight", il), cur);
        gb_cb(b, q, "q", il);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_a_norm.weight", il), il);
        gb_cb(b, q, "q", il);
        q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_b.weight", il), q);
        gb_cb(b, q, "q", il);
        cur = gb_attn_kv_lora(b, cur, q, rf, false, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        cur = gg_scale(g, cur);   /* scale_res */
        gb_cb(b, cur, "hidden_scaled", il);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_scale(g, cur);
        gb_cb(b, cur, "hidden_scaled_ffn", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_scale(g, cur);   /* scale_lmhead */
    gb_cb(b, cur, "lmhead_scaling", -1);
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

const ggfit_arch ggfit__model_minicpm3 = {
    .name = "minicpm3",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.q_lora_rank", "attention.kv_lora_rank", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_minicpm3,
};
