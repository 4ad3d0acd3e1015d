/*
 * mm_whisper.c - tools/mtmd/models/whisper-enc.cpp: the Whisper-style
 * audio encoders (Ultravox, Voxtral, Qwen2-Audio / Qwen2.5-Omni's audio,
 * "qwen2a"): two 1D convolutions over the mel frames (the second with
 * stride 2), a ViT with learned positions, frames pooled by 2 (Qwen2A,
 * Voxtral, Music Flamingo), frames stacked (Ultravox, Voxtral, MERaLiON,
 * GLM-A), and the projector.
 */
#include <string.h>

#include "mtmd/clip.h"

/* ggml_conv_1d_ph: im2col (F16) then a matmul, [OL, OC, N] */
static int32_t conv_1d_ph(clip_graph *c, int32_t kernel, int32_t inp, int s)
{
    gg_graph *g = c->g;
    const gg_tensor *a = &g->t[kernel], *b = &g->t[inp];
    int64_t p = a->ne[0] / 2, ol = (b->ne[0] + 2 * p - (a->ne[0] - 1) - 1) / s + 1;
    int64_t ne[4] = { a->ne[1] * a->ne[0], ol, b->ne[2], 1 };
    int64_t oc = a->ne[2];
    int32_t src[2] = { kernel, inp };
    uint32_t type = a->type == GGFIT_TYPE_BF16 ? GGFIT_TYPE_F32 : GGFIT_TYPE_F16;
    int32_t im2col = gg_op_shape(g, GGFIT_OP_IM2COL, type, 4, ne, 2, src);
    int32_t r = gg_mul_mat(g, cg_reshape(c, im2col, ne[0], ne[2] * ne[1], 1, 1),
                           cg_reshape(c, kernel, ne[0], oc, 1, 1));
    return cg_reshape(c, r, ol, oc, ne[2], 1);
}

/* build_stack: the frames stacked stack_factor at a time, padded */
static int32_t stack(clip_graph *c, int32_t cur, int64_t factor)
{
    gg_graph *g = c->g;
    if (factor <= 1)
        return cur;
    const gg_tensor *t = &g->t[cur];
    int64_t total = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3], stride = c->n_embd * factor;
    int64_t padded = (total + stride - 1) / stride * stride;
    if (padded > total) {
        int64_t ne1[1] = { total };
        cur = gg_view(g, cur, 1, ne1, NULL, 0);
        int64_t pne[4] = { padded, 1, 1, 1 };
        cur = gg_op_shape(g, GGFIT_OP_PAD, g->t[cur].type, 4, pne, 1, &cur);
    }
    int64_t ne[2] = { stride, padded / stride };
    uint64_t nb[1] = { (uint64_t)stride * 4 };
    return gg_view(g, cur, 2, ne, nb, 0);
}

/* MERaLiON's adaptor: a layer norm, a compressing linear and SiLU, a GLU
 * of two linears, the output linear */
static int32_t meralion_adaptor(clip_graph *c, int32_t cur)
{
    gg_graph *g = c->g;
    int32_t lin[4];
    for (int i = 0; i < 4; i++)
        lin[i] = cg_wreq(c, "mm.a.mlp.%d.weight", i);
    if (c->missing)
        return -1;
    cur = cg_norm(c, cur, cg_wreq(c, "mm.a.norm_pre.weight"), cg_wreq(c, "mm.a.norm_pre.bias"),
                  CG_NORM_LAYER);
    cur = cg_add(c, gg_mul_mat(g, lin[0], cur), cg_wreq(c, "mm.a.mlp.0.bias"));
    cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);
    int32_t gate = cg_add(c, gg_mul_mat(g, lin[1], cur), cg_wreq(c, "mm.a.mlp.1.bias"));
    gate = gg_unary_op(g, GGFIT_OP_UNARY, gate);
    int32_t pool = cg_add(c, gg_mul_mat(g, lin[2], cur), cg_wreq(c, "mm.a.mlp.2.bias"));
    cur = cg_mul(c, gate, pool);
    return cg_add(c, gg_mul_mat(g, lin[3], cur), cg_wreq(c, "mm.a.mlp.3.bias"));
}

static void build_whisper(clip_graph *c)
{
    gg_graph *g = c->g;
    const char *type = c->m->type->name;
    bool ultravox = !strcmp(type, "ultravox"), voxtral = !strcmp(type, "voxtral");
    bool flamingo = !strcmp(type, "musicflamingo"), meralion = !strcmp(type, "meralion");
    bool glma = !strcmp(type, "glma");
    int64_t n_pos = c->nx / 2;
    int32_t inp = cg_inp_raw(c, 1);
    int32_t w1 = cg_wreq(c, "a.conv1d.1.weight"), b1 = cg_wreq(c, "a.conv1d.1.bias");
    int32_t w2 = cg_wreq(c, "a.conv1d.2.weight"), b2 = cg_wreq(c, "a.conv1d.2.bias");
    int32_t pos = cg_wreq(c, "a.position_embd.weight");
    if (c->missing || g->t[pos].ne[1] < n_pos) {
        c->missing = true;
        return;
    }
    int32_t cur = gg_unary_op(g, GGFIT_OP_UNARY, cg_add(c, conv_1d_ph(c, w1, inp, 1), b1));
    cur = gg_unary_op(g, GGFIT_OP_UNARY, cg_add(c, conv_1d_ph(c, w2, cur, 2), b2));
    inp = gg_cont(g, gg_transpose(g, cur));
    int64_t pne[2] = { g->t[pos].ne[0], n_pos };
    uint64_t pnb[1] = { g->t[pos].nb[1] };
    int32_t pos_sel = gg_view(g, pos, 2, pne, pnb, 0);
    c->avgpool = !strcmp(type, "qwen2a") || voxtral || !strcmp(type, "musicflamingo");
    cur = cg_vit(c, inp, n_pos, CG_NORM_LAYER, c->hp->ffn_op, pos_sel);
    if (cur < 0)
        return;
    if (ultravox || voxtral || meralion)
        cur = stack(c, cur, c->hp->proj_stack_factor);
    if (ultravox) {
        cur = cg_mul(c, gg_rms_norm(g, cur), cg_wreq(c, "mm.a.norm_pre.weight"));
        int32_t up = cg_wreq(c, "mm.a.mlp.1.weight");
        if (c->missing)
            return;
        cur = gg_mul_mat(g, up, cur);
        const gg_tensor *t = &g->t[cur];   /* ggml_swiglu_swapped: one source, halved */
        int64_t ne[4] = { t->ne[0] / 2, t->ne[1], t->ne[2], t->ne[3] };
        cur = gg_op_shape(g, GGFIT_OP_GLU, GGFIT_TYPE_F32, 4, ne, 1, &cur);
        cur = cg_mul(c, gg_rms_norm(g, cur), cg_wreq(c, "mm.a.norm_mid.weight"));
        int32_t down = cg_wreq(c, "mm.a.mlp.2.weight");
        if (c->missing)
            return;
        cur = gg_mul_mat(g, down, cur);
    } else if (voxtral || flamingo) {
        cur = cg_ffn(c, cur, cg_wreq(c, "mm.a.mlp.1.weight"), cg_w(c, "mm.a.mlp.1.bias"), -1, -1,
                     cg_wreq(c, "mm.a.mlp.2.weight"), cg_w(c, "mm.a.mlp.2.bias"),
                     CLIP_FFN_GELU_ERF);
    } else if (meralion) {
        cur = meralion_adaptor(c, cur);
    } else if (glma) {
        cur = cg_norm(c, cur, cg_wreq(c, "mm.a.norm_pre.weight"), cg_wreq(c, "mm.a.norm_pre.bias"),
                      CG_NORM_LAYER);
        cur = stack(c, cur, c->hp->proj_stack_factor);
        cur = cg_ffn(c, cur, cg_wreq(c, "mm.a.mlp.1.weight"), cg_wreq(c, "mm.a.mlp.1.bias"), -1,
                     -1, cg_wreq(c, "mm.a.mlp.2.weight"), cg_wreq(c, "mm.a.mlp.2.bias"),
                     c->hp->ffn_op);
        int32_t boi = cg_wreq(c, "v.boi"), eoi = cg_wreq(c, "v.eoi");
        if (c->missing)
            return;
        cur = gg_concat(g, gg_concat(g, boi, cur, 1), eoi, 1);
    } else {   /* qwen2a */
        cur = cg_add(c, gg_mul_mat(g, cg_wreq(c, "mm.a.fc.weight"), cur),
                     cg_wreq(c, "mm.a.fc.bias"));
    }
    if (!c->missing)
        gg_expand(g, cur);
}

/* load_hparams: Ultravox and Voxtral need the stack factor, Qwen2A has none */
static void hparams_whisper(clip_model *m)
{
    ggfit__clip_u32(m, "clip.audio.projector.stack_factor", &m->hp.proj_stack_factor);
    m->hp.ffn_op = CLIP_FFN_GELU_ERF;
}

const clip_type ggfit__clip_ultravox = {
    .name = "ultravox", .hparams = hparams_whisper, .build = build_whisper,
};
const clip_type ggfit__clip_voxtral = {
    .name = "voxtral", .hparams = hparams_whisper, .build = build_whisper,
};
const clip_type ggfit__clip_qwen2a = {
    .name = "qwen2a", .hparams = hparams_whisper, .build = build_whisper,
};
const clip_type ggfit__clip_musicflamingo = {
    .name = "musicflamingo", .hparams = hparams_whisper, .build = build_whisper,
};
const clip_type ggfit__clip_meralion = {
    .name = "meralion", .hparams = hparams_whisper, .build = build_whisper,
};
const clip_type ggfit__clip_glma = {
    .name = "glma", .hparams = hparams_whisper, .build = build_whisper,
};
