/*
 * bitnet.c - src/models/bitnet.cpp: BitNet b1.58, a Llama block with a
 * sub-norm before each output projection (attention's and the FFN's down),
 * optional per-tensor scales after each matrix product, and the token
 * embeddings themselves as the output matrix (no copy in the output layer).
 */
#include <stdio.h>

#include "llama/graph.h"

/* build_lora_mm with its scale: w x cur, times blk.il.<name>.scale when the
 * file has it. */
static int32_t mm_scaled(bctx *b, const char *name, int32_t cur, int il)
{
    char fmt[64];
    snprintf(fmt, sizeof fmt, "blk.%%d.%s.weight", name);
    cur = gg_mul_mat(b->g, gb_required(b, fmt, il), cur);
    snprintf(fmt, sizeof fmt, "blk.%%d.%s.scale", name);
    int32_t s = gb_weight(b, fmt, il);
    return s >= 0 ? gg_binary(b->g, GGFIT_OP_MUL, cur, s) : cur;
}

/* llama_model_bitnet::graph */
static void build_bitnet(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int64_t hd = hp->n_embd_head_k, nt = b->p->n_tokens;
    if (hd != hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp asserts */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        /* build_qkv, separate, with the scales */
        int32_t q = mm_scaled(b, "attn_q", cur, il);
        gb_cb(b, q, "Qcur", il);
        int32_t k = mm_scaled(b, "attn_k", cur, il);
        gb_cb(b, k, "Kcur", il);
        int32_t v = mm_scaled(b, "attn_v", cur, il);
        gb_cb(b, v, "Vcur", il);
        q = gb_reshape_3d(b, q, hd, li->n_head, nt);
        k = gb_reshape_3d(b, k, hd, li->n_head_kv, nt);
        v = gb_reshape_3d(b, v, hd, li->n_head_kv, nt);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        if (b->missing)
            return;
        cur = gb_attn(b, -1, -1, q, k, v, -1, il);   /* no output projection there */
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.attn_sub_norm.weight", il), il);
        gb_cb(b, cur, "attn_sub_norm", il);
        cur = mm_scaled(b, "attn_output", cur, il);
        gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        /* build_ffn: SwiGLU with the scales, no down */
        int32_t up = mm_scaled(b, "ffn_up", cur, il);
        gb_cb(b, up, "ffn_up", il);
        cur = mm_scaled(b, "ffn_gate", cur, il);
        gb_cb(b, cur, "ffn_gate", il);
        cur = gg_glu_split(g, cur, up);
        gb_cb(b, cur, "ffn_swiglu", il);
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.ffn_sub_norm.weight", il), il);
        gb_cb(b, cur, "ffn_sub_norm", il);
        cur = mm_scaled(b, "ffn_down", cur, il);
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (b->missing)
        return;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_required(b, "token_embd.weight", 0), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_tensors creates no output matrix: the graph multiplies by
 * token_embd where it lies. */
const ggfit_arch ggfit__model_bitnet = {
    .name = "bitnet",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .no_output = true,
    .build = build_bitnet,
};
