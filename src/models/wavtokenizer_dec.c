/*
 * wavtokenizer_dec.c - src/models/wavtokenizer-dec.cpp: WavTokenizer's
 * decoder, audio codes to spectrogram frames. No memory module
 * (create_memory gives nullptr) and no attention over a cache: a conv1d
 * stem, the posnet (resnet, resnet, attention, resnet, resnet, norm: 1-D
 * convolutions as im2col and a product, group norms), a LayerNorm, the
 * ConvNeXt blocks (depthwise convolution, LayerNorm, GELU MLP, gamma) and a
 * linear head; the graph ends at embeddings of embedding_length values.
 * hparams.n_embd is features_length here. The posnet and ConvNeXt tensors
 * ("posnet.N.", "convnext.N.") are placed with layer N, the stem and
 * token_embd_norm with layer 0 (LLM_TENSOR_LAYER_REPEATING, bid 0).
 */
#include <stdlib.h>
#include <string.h>

#include "llama/check.h"
#include "llama/graph.h"

/* build_inp_embd with n_embd = features_length. */
static int32_t inp_embd(bctx *b, int64_t n_embd)
{
    gg_graph *g = b->g;
    int64_t n_tokens = b->p->n_tokens;
    int32_t tokens = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, n_tokens), "inp_tokens");
    int32_t embd = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, n_embd, n_tokens), "inp_embd");
    int32_t cur = gg_get_rows(g, gb_required(b, "token_embd.weight", 0), tokens);
    gg_expand(g, cur);
    gg_expand_no_compute(g, embd);
    b->t_inp_embd = cur;
    gb_cb(b, cur, "embd", -1);
    gg_expand(g, cur);
    return cur;
}

/* ggml_cont(ggml_transpose(x)) */
static int32_t cont_t(bctx *b, int32_t x)
{
    return gg_cont(b->g, gg_transpose(b->g, x));
}

/* ggml_conv_1d_ph(a, x, 1, 1): im2col (F16 unless the kernel is BF16) of
 * x (OL x IC) over kernel a (K x IC x OC), padding K/2, times the kernel:
 * OL x OC x 1. */
static int32_t conv_1d_ph(bctx *b, int32_t a, int32_t x)
{
    gg_graph *g = b->g;
    const gg_tensor *ta = &g->t[a], *tx = &g->t[x];
    int64_t k = ta->ne[0], ic = ta->ne[1], oc = ta->ne[2], p0 = k / 2;
    int64_t ow = tx->ne[0] + 2 * p0 - (k - 1);
    if (tx->ne[1] != ic || tx->ne[3] != 1 || ow <= 0) {
        b->missing = true;   /* ggml_im2col asserts */
        return x;
    }
    int64_t ne[4] = { ic * k, ow, tx->ne[2], 1 };
    int32_t src[2] = { a, x };
    uint32_t type = ta->type == GGFIT_TYPE_BF16 ? GGFIT_TYPE_F32 : GGFIT_TYPE_F16;
    int32_t col = gg_op_shape(g, GGFIT_OP_IM2COL, type, 4, ne, 2, src);
    int64_t n_col = g->t[col].ne[1], n_batch = g->t[col].ne[2];
    int32_t r = gg_mul_mat(g, gb_reshape_2d(b, col, ic * k, n_batch * n_col),
                           gb_reshape_2d(b, a, k * ic, oc));
    return gb_reshape_3d(b, r, n_col, oc, n_batch);
}

/* ggml_conv_1d_dw_ph(a, x, 1, 1): a depthwise kernel a (K x 1 x C) over
 * x (OL x C). */
static int32_t conv_1d_dw_ph(bctx *b, int32_t a, int32_t x)
{
    gg_graph *g = b->g;
    const gg_tensor *ta = &g->t[a], *tx = &g->t[x];
    int64_t k = ta->ne[0], p0 = k / 2;
    int32_t nb_ = gb_reshape_4d(b, x, tx->ne[0], 1, tx->ne[1], tx->ne[2]);
    const gg_tensor *tn = &g->t[nb_];
    int64_t ow = tn->ne[0] + 2 * p0 - (k - 1);
    if (tn->ne[1] != ta->ne[1] || tn->ne[3] != 1 || ow <= 0) {
        b->missing = true;   /* ggml_im2col asserts */
        return x;
    }
    int64_t ne[4] = { ta->ne[1] * k, ow, tn->ne[2], 1 };
    int32_t src[2] = { a, nb_ };
    uint32_t type = ta->type == GGFIT_TYPE_BF16 ? GGFIT_TYPE_F32 : GGFIT_TYPE_F16;
    int32_t col = gg_op_shape(g, GGFIT_OP_IM2COL, type, 4, ne, 2, src);
    int32_t r = gg_mul_mat(g, col, a);
    return gb_reshape_3d(b, r, gb_ne(b, r, 0), gb_ne(b, r, 2), 1);
}

/* build_norm with LLM_NORM_GROUP: the group norm over x (L x C) seen as
 * L x 1 x C, then the weight and bias. */
static int32_t group_norm(bctx *b, int32_t cur, int32_t w, int32_t bias, int il)
{
    gg_graph *g = b->g;
    cur = gb_reshape_3d(b, cur, gb_ne(b, cur, 0), 1, gb_ne(b, cur, 1));
    const gg_tensor *t = &g->t[cur];
    int64_t ne[4] = { t->ne[0], t->ne[1], t->ne[2], t->ne[3] };
    cur = gg_op_shape(g, GGFIT_OP_GROUP_NORM, t->type, 4, ne, 1, &cur);
    cur = gb_reshape_2d(b, cur, gb_ne(b, cur, 0), gb_ne(b, cur, 2));
    if (w >= 0 || bias >= 0)
        gb_cb(b, cur, "norm", il);
    if (w >= 0) {
        cur = gg_binary(g, GGFIT_OP_MUL, cur, w);
        if (bias >= 0)
            gb_cb(b, cur, "norm_w", il);
    }
    if (bias >= 0)
        cur = gg_binary(g, GGFIT_OP_ADD, cur, bias);
    return cur;
}

/* x * sigmoid(x), as ggml_mul(ggml_sigmoid(x), x) */
static int32_t swish(bctx *b, int32_t x)
{
    return gg_binary(b->g, GGFIT_OP_MUL, gg_unary_op(b->g, GGFIT_OP_UNARY, x), x);
}

/* llama_model_wavtokenizer_dec::graph */
static void build_wavtokenizer_dec(bctx *b)
{
    gg_graph *g = b->g;
    double n_feat = gb_key(b, "features_length", 0);
    double n_posnet = gb_key(b, "posnet.block_count", 0);
    double n_convnext = gb_key(b, "convnext.block_count", 0);
    if (n_feat < 1 || n_posnet < 0 || n_posnet > 6 || n_convnext < 0 ||
        n_posnet > b->hp->n_layer || n_convnext > b->hp->n_layer) {
        b->missing = true;   /* llama.cpp aborts or reads past its layers */
        return;
    }
    int32_t inpL = inp_embd(b, (int64_t)n_feat);
    int32_t cur = cont_t(b, inpL);
    cur = conv_1d_ph(b, gb_required(b, "conv1d.weight", 0), cur);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, gb_required(b, "conv1d.bias", 0));
    for (int il = 0; il < (int)n_posnet && !b->missing; il++) {
        inpL = cur;
        if (il == 2) {
            cur = group_norm(b, cur, gb_required(b, "posnet.%d.attn_norm.weight", il),
                             gb_required(b, "posnet.%d.attn_norm.bias", il), 0);
            int32_t q = conv_1d_ph(b, gb_required(b, "posnet.%d.attn_q.weight", il), cur);
            int32_t k = conv_1d_ph(b, gb_required(b, "posnet.%d.attn_k.weight", il), cur);
            int32_t v = conv_1d_ph(b, gb_required(b, "posnet.%d.attn_v.weight", il), cur);
            q = gg_binary(g, GGFIT_OP_ADD, q, gb_required(b, "posnet.%d.attn_q.bias", il));
            k = gg_binary(g, GGFIT_OP_ADD, k, gb_required(b, "posnet.%d.attn_k.bias", il));
            v = gg_binary(g, GGFIT_OP_ADD, v, gb_required(b, "posnet.%d.attn_v.bias", il));
            q = cont_t(b, q);
            k = cont_t(b, k);
            int32_t kq = gg_mul_mat(g, k, q);
            kq = gg_soft_max(g, kq, -1, -1);
            cur = gg_mul_mat(g, kq, v);
            cur = conv_1d_ph(b, gb_required(b, "posnet.%d.attn_output.weight", il), cur);
            cur = gg_binary(g, GGFIT_OP_ADD, cur,
                            gb_required(b, "posnet.%d.attn_output.bias", il));
            cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        } else if (il == 5) {
            cur = group_norm(b, cur, gb_required(b, "posnet.%d.attn_norm.weight", il),
                             gb_required(b, "posnet.%d.attn_norm.bias", il), 0);
        } else {
            cur = group_norm(b, cur, gb_required(b, "posnet.%d.norm1.weight", il),
                             gb_required(b, "posnet.%d.norm1.bias", il), 0);
            cur = swish(b, cur);
            cur = conv_1d_ph(b, gb_required(b, "posnet.%d.conv1.weight", il), cur);
            cur = gg_binary(g, GGFIT_OP_ADD, cur, gb_required(b, "posnet.%d.conv1.bias", il));
            cur = group_norm(b, cur, gb_required(b, "posnet.%d.norm2.weight", il),
                             gb_required(b, "posnet.%d.norm2.bias", il), 0);
            cur = swish(b, cur);
            cur = conv_1d_ph(b, gb_required(b, "posnet.%d.conv2.weight", il), cur);
            cur = gg_binary(g, GGFIT_OP_ADD, cur, gb_required(b, "posnet.%d.conv2.bias", il));
            cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        }
    }
    cur = cont_t(b, cur);
    cur = gb_layer_norm(b, cur, gb_required(b, "token_embd_norm.weight", 0),
                        gb_required(b, "token_embd_norm.bias", 0), 0);
    cur = cont_t(b, cur);
    inpL = cur;
    for (int il = 0; il < (int)n_convnext && !b->missing; il++) {
        cur = conv_1d_dw_ph(b, gb_required(b, "convnext.%d.dw.weight", il), inpL);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, gb_required(b, "convnext.%d.dw.bias", il));
        cur = cont_t(b, cur);
        cur = gb_layer_norm(b, cur, gb_required(b, "convnext.%d.norm.weight", il),
                            gb_required(b, "convnext.%d.norm.bias", il), -1);
        cur = gb_build_ffn(b, cur, gb_required(b, "convnext.%d.pw1.weight", il),
                           gb_required(b, "convnext.%d.pw1.bias", il), -1, -1,
                           gb_required(b, "convnext.%d.pw2.weight", il),
                           gb_required(b, "convnext.%d.pw2.bias", il), GB_FFN_GELU, false, il);
        cur = gg_binary(g, GGFIT_OP_MUL, cur, gb_required(b, "convnext.%d.gamma.weight", il));
        cur = cont_t(b, cur);
        inpL = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
    }
    if (b->missing)
        return;
    cur = cont_t(b, inpL);
    cur = gb_layer_norm(b, cur, gb_required(b, "output_norm.weight", 0),
                        gb_required(b, "output_norm.bias", 0), -1);
    cur = gg_mul_mat(g, gb_required(b, "output.weight", 0), cur);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, gb_required(b, "output.bias", 0));
    gb_cb(b, cur, "result_embd", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_tensors: "posnet.N." and "convnext.N." with layer N; the stem and
 * token_embd_norm with layer 0. */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    const char *n = t->info->name;
    if (!strncmp(n, "conv1d.", 7) || !strncmp(n, "token_embd_norm.", 16))
        return 0;
    const char *p = !strncmp(n, "posnet.", 7) ? n + 7 : !strncmp(n, "convnext.", 9) ? n + 9
                                                                                    : NULL;
    if (!p || *p < '0' || *p > '9')
        return -2;
    char *end;
    long il = strtol(p, &end, 10);
    if (*end != '.' || il < 0 || il >= (long)ggfit_model_hparams(m)->n_layer)
        return -2;
    return il;
}

/* The graph converts the feature length and the block counts to integers. */
static void check(hp_check *c)
{
    static const char *const keys[] = { "features_length", "posnet.block_count",
                                        "convnext.block_count" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        hc_key_int(c, keys[i], 0, UINT32_MAX, 0, NULL,
                   "llama.cpp reads it as an unsigned 32-bit count");
}

const ggfit_arch ggfit__model_wavtokenizer_dec = {
    .name = "wavtokenizer-dec",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon",
            "attention.group_norm_epsilon", "attention.group_norm_groups", NULL },
    .check = check,
    .mem = GGFIT_MEM_NONE,
    .build = build_wavtokenizer_dec,
    .tensor_layer = tensor_layer,
    .blocks_unnamed = true,
};
