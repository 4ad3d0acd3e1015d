/*
 * falcon_h1.c - src/models/falcon-h1.cpp: Falcon-H1, every layer a
 * RoPE attention and a Mamba2 mixer side by side on the same normed input
 * (the norm is computed twice), their sum added to the residual, then a
 * SwiGLU feed-forward with optional biases. Its norm is blk.N.ffn_norm,
 * without .weight, as llama.cpp loads it.
 */
#include "llama/graph.h"

/* llama_model_falcon_h1::graph */
static void build_falcon_h1(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_rs(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t attn_norm = gb_required(b, "blk.%d.attn_norm.weight", il);
        int32_t cur = gb_norm(b, inpL, attn_norm, il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v, w;
        if ((w = gb_weight(b, "blk.%d.attn_qkv.weight", il)) >= 0)   /* build_qkv, fused */
            gb_qkv_fused(b, cur, w, il, li->n_head, li->n_head_kv, &q, &k, &v);
        else
            gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        q = gb_rope(b, q, -1, il);
        k = gb_rope(b, k, -1, il);
        /* build_attn gets no output bias */
        int32_t attn_out = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1,
                                   q, k, v, -1, il);
        gb_cb(b, attn_out, "attn_out", il);

        cur = gb_norm(b, inpL, attn_norm, il);
        gb_cb(b, cur, "ssm_in", il);
        int32_t ssm_out = gb_mamba2_layer(b, cur, il);
        if (b->missing)
            return;
        cur = gg_binary(g, GGFIT_OP_ADD, attn_out, ssm_out);
        inpSA = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        /* the rows of cur taken on the last layer feed nothing */
        if (il == n_layer - 1)
            inpSA = gg_get_rows(g, inpSA, b->inp_out_ids);
        gb_cb(b, inpSA, "ffn_inp", il);

        cur = gb_norm(b, inpSA, gb_required(b, "blk.%d.ffn_norm", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_bias(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

/* Every layer has both attention (KV cells) and a Mamba2 state. */
const ggfit_arch ggfit__model_falcon_h1 = {
    .name = "falcon-h1",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "ssm.conv_kernel",
            "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL },
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_BOTH,
    .build = build_falcon_h1,
};
