/*
 * mm_glm4v.c - tools/mtmd/models/glm4v.cpp: GLM-4V (GLM-4.1V/4.5V): the
 * two convolutions summed and 2x2-merged as Qwen2-VL's, a patch norm,
 * learned positions resized, M-RoPE in a ViT with RMS norms, then a
 * convolution merging n_merge x n_merge patches, a normed FC and a SwiGLU
 * FFN projector.
 */
#include "mtmd/clip.h"

static int32_t merge_2x2(clip_graph *c, int32_t inp)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, npx = c->n_patches_x, npy = c->n_patches_y;
    inp = cg_cont(c, inp, E * 2, npx / 2, npy, 1);
    inp = cg_reshape(c, inp, E * 2, npx / 2, 2, npy / 2);
    inp = gg_permute(g, inp, 0, 2, 1, 3);
    return cg_cont(c, inp, E, npx * npy, 1, 1);
}

static int32_t mrope(clip_graph *c, int32_t cur)
{
    return gg_rope(c->g, cur, c->pos_a, -1);
}

static void build_glm4v(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, m = c->hp->n_merge;
    int p = (int)c->patch_size;
    int32_t raw = cg_inp_raw(c, 3);
    int32_t k0 = cg_wreq(c, "v.patch_embd.weight"), k1 = cg_wreq(c, "v.patch_embd.weight.1");
    int32_t bias = cg_wreq(c, "v.patch_embd.bias");
    if (c->missing || m < 1)
        return;
    int32_t inp = cg_conv_2d(c, k0, raw, p, p);
    c->pos_a = cg_input(c, GGFIT_TYPE_I32, c->n_patches * 4, 1, 1, 1, "positions");
    inp = cg_add(c, inp, cg_conv_2d(c, k1, raw, p, p));
    inp = merge_2x2(c, gg_permute(g, inp, 1, 2, 0, 3));
    inp = cg_add(c, inp, bias);
    inp = cg_norm(c, inp, cg_w(c, "v.norm_embd.weight"), cg_w(c, "v.norm_embd.bias"),
                  CG_NORM_RMS);
    int32_t pos = cg_w(c, "v.position_embd.weight");
    if (pos >= 0)
        pos = merge_2x2(c, cg_resize_pos(c, pos));
    c->add_pos = mrope;
    int32_t cur = cg_vit(c, inp, c->n_patches, CG_NORM_RMS, c->hp->ffn_op, pos);
    if (cur < 0)
        return;
    int64_t n_out = c->n_patches / m / m;
    cur = cg_reshape(c, cur, E, m, m, n_out);
    cur = gg_cont(g, gg_permute(g, cur, 2, 0, 1, 3));
    int32_t mw = cg_wreq(c, "mm.patch_merger.weight"), mb = cg_wreq(c, "mm.patch_merger.bias");
    int32_t fc = cg_wreq(c, "mm.model.fc.weight");
    if (c->missing)
        return;
    cur = cg_conv_2d(c, mw, cur, (int)m, (int)m);
    cur = cg_reshape(c, cur, g->t[cur].ne[2], n_out, 1, 1);
    cur = cg_add(c, cur, mb);
    cur = gg_mul_mat(g, fc, cur);
    cur = cg_norm(c, cur, cg_wreq(c, "mm.post_norm.weight"), cg_w(c, "mm.post_norm.bias"),
                  CG_NORM_LAYER);
    cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);
    cur = cg_ffn(c, cur, cg_wreq(c, "mm.up.weight"), cg_w(c, "mm.up.bias"),
                 cg_wreq(c, "mm.gate.weight"), cg_w(c, "mm.gate.bias"),
                 cg_wreq(c, "mm.down.weight"), cg_w(c, "mm.down.bias"), c->hp->ffn_op);
    if (!c->missing)
        gg_expand(g, cur);
}

static void hparams_glm4v(clip_model *m)
{
    m->hp.n_merge = 2;
    ggfit__clip_u32(m, "clip.vision.spatial_merge_size", &m->hp.n_merge);
    ggfit__clip_limit_image_tokens(&m->hp, 8, 4096);
    ggfit__clip_warmup_n_tokens(&m->hp, 46 * 46);
}

const clip_type ggfit__clip_glm4v = {
    .name = "glm4v", .hparams = hparams_glm4v, .build = build_glm4v,
};
