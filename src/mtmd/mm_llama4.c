/*
 * mm_llama4.c - tools/mtmd/models/llama4.cpp: Llama 4's vision encoder:
 * an unfold convolution (im2col and the patch embedding as a matmul), a
 * [CLS] token, a ViT with learned positions and 2D RoPE, the [CLS]
 * dropped, a pixel shuffle, a two-layer GELU MLP and the projection.
 */
#include "mtmd/clip.h"

static int32_t rope_wh(clip_graph *c, int32_t cur)
{
    return cg_rope_2d(c, cur, c->pos_b, c->pos_a);
}

static void build_llama4(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, p = c->patch_size, s = c->hp->n_merge, n_pos = c->n_patches + 1;
    c->pos_a = cg_input(c, GGFIT_TYPE_I32, n_pos, 1, 1, 1, "pos_h");
    c->pos_b = cg_input(c, GGFIT_TYPE_I32, n_pos, 1, 1, 1, "pos_w");
    c->add_pos = rope_wh;
    int32_t inp = cg_inp_raw(c, 3);
    int32_t patch = cg_wreq(c, "v.patch_embd.weight"), cls = cg_wreq(c, "v.class_embd");
    int32_t pos = cg_wreq(c, "v.position_embd.weight");
    if (c->missing || s < 1)
        return;
    int32_t kernel = cg_reshape(c, patch, p, p, 3, E);
    int64_t ne[4] = { 3 * p * p, c->n_patches_x, c->n_patches_y, 1 };
    int32_t src[2] = { kernel, inp };
    inp = gg_op_shape(g, GGFIT_OP_IM2COL, GGFIT_TYPE_F32, 4, ne, 2, src);
    inp = gg_mul_mat(g, patch, inp);
    inp = cg_reshape(c, inp, E, c->n_patches, 1, 1);
    inp = gg_concat(g, inp, cls, 1);
    int32_t cur = cg_vit(c, inp, n_pos, CG_NORM_LAYER, c->hp->ffn_op, pos);
    if (cur < 0)
        return;
    int64_t vne[2] = { E, c->n_patches };
    uint64_t vnb[1] = { (uint64_t)E * 4 };
    cur = gg_view(g, cur, 2, vne, vnb, 0);
    int64_t px = c->n_patches_x, py = c->n_patches_y;
    cur = cg_reshape(c, cur, E * s, px / s, py, 1);
    cur = gg_permute(g, cur, 0, 2, 1, 3);
    cur = cg_cont(c, cur, E * s * s, px / s, py / s, 1);
    cur = cg_cont(c, cur, E * s * s, c->n_patches / s / s, 1, 1);
    int32_t m1 = cg_wreq(c, "mm.model.mlp.1.weight"), m2 = cg_wreq(c, "mm.model.mlp.2.weight");
    int32_t proj = cg_wreq(c, "mm.model.fc.weight");
    if (c->missing)
        return;
    cur = gg_unary_op(g, GGFIT_OP_UNARY, gg_mul_mat(g, m1, cur));
    cur = gg_unary_op(g, GGFIT_OP_UNARY, gg_mul_mat(g, m2, cur));
    gg_expand(g, gg_mul_mat(g, proj, cur));
}

static void hparams_llama4(clip_model *m)
{
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
}

const clip_type ggfit__clip_llama4 = {
    .name = "llama4", .hparams = hparams_llama4, .build = build_llama4,
};
