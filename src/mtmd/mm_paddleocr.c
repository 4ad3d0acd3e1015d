/*
 * mm_paddleocr.c - tools/mtmd/models/paddleocr.cpp and hunyuanvl.cpp.
 * PaddleOCR-VL: a SigLIP ViT with its positions resized to the image and
 * vision M-RoPE, a layer norm, a 2x2 pixel shuffle and an MLP.
 * HunyuanOCR / Hunyuan-VL: a ViT with positions given as an input, then
 * an RMS norm, a 2x2 convolution, GELU, a 1x1 convolution, a newline
 * column, the projection between begin and end tokens, an RMS norm.
 */
#include "mtmd/clip.h"

static int32_t mrope(clip_graph *c, int32_t cur)
{
    return gg_rope(c->g, cur, c->pos_a, -1);   /* ggml_rope_multi, vision sections */
}

static void build_paddleocr(clip_graph *c)
{
    gg_graph *g = c->g;
    c->pos_a = cg_input(c, GGFIT_TYPE_I32, c->n_patches * 4, 1, 1, 1, "positions");
    c->add_pos = mrope;
    int32_t pos = cg_wreq(c, "v.position_embd.weight");
    if (c->missing)
        return;
    pos = cg_resize_pos(c, pos);
    int32_t inp = cg_inp(c);
    if (inp < 0)
        return;
    int32_t cur = cg_vit(c, inp, c->n_patches, CG_NORM_LAYER, c->hp->ffn_op, pos);
    if (cur < 0)
        return;
    cur = cg_norm(c, cur, cg_wreq(c, "mm.input_norm.weight"), cg_wreq(c, "mm.input_norm.bias"),
                  CG_NORM_LAYER);
    cur = cg_patch_merge_permute(c, cur, c->hp->n_merge);
    if (cur < 0)
        return;
    cur = cg_ffn(c, cur, cg_wreq(c, "mm.1.weight"), cg_wreq(c, "mm.1.bias"), -1, -1,
                 cg_wreq(c, "mm.2.weight"), cg_wreq(c, "mm.2.bias"), c->hp->ffn_op);
    if (!c->missing)
        gg_expand(g, cur);
}

/* a 2D convolution's per-channel bias, added as [1, 1, OC] */
static int32_t conv_bias(clip_graph *c, int32_t cur, const char *name)
{
    int32_t b = cg_w(c, "%s", name);
    return b < 0 ? cur : cg_add(c, cur, cg_reshape(c, b, 1, 1, c->g->t[b].ne[0], 1));
}

static void build_hunyuanvl(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t merge = c->hp->n_merge, pw = c->n_patches_x, ph = c->n_patches_y, E = c->n_embd;
    int32_t pos = cg_input(c, GGFIT_TYPE_F32, E, ph * pw, 1, 1, "hunyuanvl_pos_embd");
    int32_t inp = cg_inp(c);
    if (inp < 0 || merge <= 0)
        return;
    int32_t cur = cg_vit(c, inp, c->n_patches, CG_NORM_LAYER, c->hp->ffn_op, pos);
    if (cur < 0)
        return;
    cur = cg_norm(c, cur, cg_wreq(c, "mm.pre_norm.weight"), -1, CG_NORM_RMS);
    cur = cg_reshape(c, cur, E, pw, ph, 1);
    cur = gg_cont(g, gg_permute(g, cur, 2, 0, 1, 3));
    int32_t w0 = cg_wreq(c, "mm.0.weight"), w2 = cg_wreq(c, "mm.2.weight");
    int32_t nl = cg_wreq(c, "v.image_newline"), proj = cg_wreq(c, "mm.model.fc.weight");
    int32_t begin = cg_wreq(c, "mm.image_begin"), end = cg_wreq(c, "mm.image_end");
    if (c->missing)
        return;
    cur = cg_conv_2d(c, w0, cur, (int)merge, (int)merge);
    cur = gg_unary_op(g, GGFIT_OP_UNARY, conv_bias(c, cur, "mm.0.bias"));
    cur = conv_bias(c, cg_conv_2d(c, w2, cur, 1, 1), "mm.2.bias");
    int64_t ow = pw / merge, oh = ph / merge, idim = g->t[cur].ne[2];
    /* a newline column after each row */
    nl = cg_reshape(c, nl, 1, 1, idim, 1);
    int64_t ne[4] = { 1, oh, idim, 1 };
    nl = gg_op_shape(g, GGFIT_OP_REPEAT, g->t[nl].type, 4, ne, 1, &nl);
    cur = gg_concat(g, cur, nl, 0);
    cur = gg_permute(g, cur, 1, 2, 0, 3);
    cur = cg_cont(c, cur, idim, (ow + 1) * oh, 1, 1);
    cur = cg_mm(c, proj, cur);
    int32_t b = cg_w(c, "mm.model.fc.bias");
    if (b >= 0)
        cur = cg_add(c, cur, b);
    cur = gg_concat(g, cg_reshape(c, begin, g->t[begin].ne[0], 1, 1, 1), cur, 1);
    cur = gg_concat(g, cur, cg_reshape(c, end, g->t[end].ne[0], 1, 1, 1), 1);
    cur = cg_norm(c, cur, cg_wreq(c, "mm.post_norm.weight"), -1, CG_NORM_RMS);
    if (!c->missing)
        gg_expand(g, cur);
}

/* load_hparams PADDLEOCR: a 2x2 merge, a warmup of 28 x 28 tokens */
static void hparams_paddleocr(clip_model *m)
{
    m->hp.n_merge = 2;
    ggfit__clip_warmup_n_tokens(&m->hp, 28 * 28);
}

/* load_hparams HUNYUANVL: 256 to 16384 tokens (unless the file gives the
 * pixels), the merge the file gives (2 by default), a warmup of 32 x 32
 * tokens */
static void hparams_hunyuanvl(clip_model *m)
{
    clip_hparams *hp = &m->hp;
    hp->n_merge = 2;
    hp->ffn_op = CLIP_FFN_GELU;
    ggfit__clip_limit_image_tokens(hp, 256, 16384);
    ggfit__clip_u32(m, "clip.vision.spatial_merge_size", &hp->n_merge);
    ggfit__clip_u32(m, "clip.vision.image_min_pixels", &hp->image_min_pixels);
    ggfit__clip_u32(m, "clip.vision.image_max_pixels", &hp->image_max_pixels);
    ggfit__clip_warmup_n_tokens(hp, 32 * 32);
}

const clip_type ggfit__clip_paddleocr = {
    .name = "paddleocr", .hparams = hparams_paddleocr, .build = build_paddleocr,
};
const clip_type ggfit__clip_hunyuanvl = {
    .name = "hunyuanvl", .hparams = hparams_hunyuanvl, .build = build_hunyuanvl,
};
