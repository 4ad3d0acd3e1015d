/*
 * command_r.c - src/models/command-r.cpp: Command R, one LayerNorm
 * without bias feeding attention (RoPE; per-head LayerNorms of Q and K in
 * the 64+ layer models) and a SwiGLU FFN in parallel, both added to the
 * block's input; the tied output, its logits scaled by logit_scale.
 */
#include "llama/graph.h"

/* llama_model_command_r::graph */
static void build_command_r(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t cur = gb_layer_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), -1, il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t ffn_inp = cur;
        int32_t q, k, v, w;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        if ((w = gb_weight(b, "blk.%d.attn_q_norm.weight", il)) >= 0) {
            q = gb_layer_norm(b, q, w, -1, il);
            gb_cb(b, q, "Qcur", il);
        }
        q = gg_rope(g, q, b->inp_pos, -1);
        if ((w = gb_weight(b, "blk.%d.attn_k_norm.weight", il)) >= 0) {
            k = gb_layer_norm(b, k, w, -1, il);
            gb_cb(b, k, "Kcur", il);
        }
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                      gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
        if (il == n_layer - 1) {
            cur = gg_get_rows(g, cur, b->inp_out_ids);
            inpL = gg_get_rows(g, inpL, b->inp_out_ids);
            ffn_inp = gg_get_rows(g, ffn_inp, b->inp_out_ids);
        }
        int32_t attn_out = cur;
        cur = gb_ffn_gated(b, ffn_inp, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, attn_out);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    int32_t cur = gb_layer_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1, -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    if (gb_key(b, "logit_scale", 0) != 0)
        cur = gg_scale(g, cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

const ggfit_arch ggfit__model_command_r = {
    .name = "command-r",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_command_r,
};
