/*
 * chameleon.c - src/models/chameleon.cpp: Chameleon's text model. Llama's
 * block with LayerNorms of Q and K over each head (weights of
 * head x n_head, optional biases), or with swin_norm the attention and FFN
 * norms after each sublayer instead of before. The logits of the image
 * tokens 4..8195 are overwritten by a clamped 8192-value tensor
 * (ggml_set_1d into a copy of the logits), so the vocabulary must hold
 * them.
 */
#include "llama/graph.h"

/* llama_model_chameleon::graph */
static void build_chameleon(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    bool swin = gb_key(b, "swin_norm", 0) != 0;
    if (hp->n_embd_head_k != hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp asserts they are equal */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t attn_norm = gb_required(b, "blk.%d.attn_norm.weight", il);
        int32_t ffn_norm = gb_required(b, "blk.%d.ffn_norm.weight", il);
        int32_t cur = inpL;
        if (!swin) {
            cur = gb_norm(b, inpL, attn_norm, il);
            gb_cb(b, cur, "attn_norm", il);
        }
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gb_layer_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il),
                          gb_weight(b, "blk.%d.attn_q_norm.bias", il), il);
        gb_cb(b, q, "Qcur", il);
        k = gb_layer_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il),
                          gb_weight(b, "blk.%d.attn_k_norm.bias", il), il);
        gb_cb(b, k, "Kcur", il);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        if (swin)
            cur = gb_norm(b, cur, attn_norm, il);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        if (!swin) {
            cur = gb_norm(b, ffn_inp, ffn_norm, il);
            gb_cb(b, cur, "ffn_norm", il);
        }
        cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                       gb_required(b, "blk.%d.ffn_gate.weight", il),
                       gb_required(b, "blk.%d.ffn_down.weight", il), il);
        gb_cb(b, cur, "ffn_out", il);
        if (swin) {
            cur = gb_norm(b, cur, ffn_norm, il);
            gb_cb(b, cur, "ffn_norm", il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output_with_img_logits", -1);
    /* ggml_set asserts that the image logits fit */
    enum { IMG_START = 4, IMG_END = 8196 };
    if (gb_ne(b, cur, 0) * gb_ne(b, cur, 1) < IMG_END - IMG_START) {
        b->missing = true;
        return;
    }
    int32_t img = gg_new_1d(g, GGFIT_TYPE_F32, IMG_END - IMG_START);
    img = gg_clamp(g, img);
    gb_cb(b, img, "img_logits", -1);
    /* ggml_set_1d: a copy of the logits (SET does not run in place) */
    const gg_tensor *t = &g->t[cur];
    int64_t ne[4] = { t->ne[0], t->ne[1], t->ne[2], t->ne[3] };
    int32_t src[2] = { cur, img };
    cur = gg_op_shape(g, GGFIT_OP_SET, t->type, 4, ne, 2, src);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

const ggfit_arch ggfit__model_chameleon = {
    .name = "chameleon",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_chameleon,
};
