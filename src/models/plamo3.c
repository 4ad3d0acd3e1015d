/*
 * plamo3.c - src/models/plamo3.cpp: PLaMo 3, fused QKV with RMS-normed Q
 * and K and RoPE, attention and a SwiGLU feed-forward each between two
 * RMS norms; sliding-window layers (seven in eight unless the file's
 * pattern says otherwise) on an iSWA cache when the file gives a window.
 */
#include "llama/graph.h"

/* llama_model_plamo3::graph, plain or iSWA. */
static void build_plamo3(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    if (b->p->swa)
        gb_inputs_kv_iswa(b);
    else
        gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t residual = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_qkv_fused(b, cur, gb_required(b, "blk.%d.attn_qkv.weight", il), il, li->n_head,
                     li->n_head_kv, &q, &k, &v);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "attn_q_norm", il);
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k, "attn_k_norm", il);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
        if (b->missing)
            return;
        cur = b->p->swa ? gb_attn_iswa(b, wo, -1, q, k, v, -1, il)
                        : gb_attn(b, wo, -1, q, k, v, -1, il);
        gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &residual);
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm", il), il);
        gb_cb(b, cur, "attn_post_norm", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, residual);
        gb_cb(b, cur, "attn_residual", il);
        residual = cur;
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_gate_up(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm", il), il);
        gb_cb(b, cur, "ffn_post_norm", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, residual);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (!b->missing)
        gb_output(b, inpL);
}

/* Seven sliding-window layers in eight, when the file gives a window. */
const ggfit_arch ggfit__model_plamo3 = {
    .name = "plamo3",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 8,
    .swa_needs_window = true,
    .build = build_plamo3,
};
