/*
 * mm_kimivl.c - tools/mtmd/models/kimivl.cpp: Kimi-VL's MoonViT, learned
 * positions resized to the image plus a 2D RoPE (x then y), a pixel
 * shuffle, a LayerNorm over the unshuffled rows and the MLP projector.
 */
#include "mtmd/clip.h"

static int32_t rope_wh(clip_graph *c, int32_t cur)
{
    return cg_rope_2d(c, cur, c->pos_b, c->pos_a);
}

static void build_kimivl(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, s = c->hp->n_merge;
    c->pos_a = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_h");
    c->pos_b = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_w");
    c->add_pos = rope_wh;
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
    cur = cg_patch_merge_permute(c, cur, (int)s);
    if (cur < 0)
        return;
    int64_t dim = g->t[cur].ne[0], rows = g->t[cur].ne[1];
    int64_t ne[2] = { E, rows * s * s };
    uint64_t nb[1] = { (uint64_t)E * 4 };
    cur = gg_view(g, cur, 2, ne, nb, 0);
    cur = gg_norm(g, cur);
    cur = cg_mul(c, cur, cg_wreq(c, "mm.input_norm.weight"));
    cur = cg_add(c, cur, cg_wreq(c, "mm.input_norm.bias"));
    int64_t ne2[2] = { dim, g->t[cur].ne[1] / s / s };
    uint64_t nb2[1] = { (uint64_t)dim * 4 };
    cur = gg_view(g, cur, 2, ne2, nb2, 0);
    cur = cg_ffn(c, cur, cg_wreq(c, "mm.1.weight"), cg_wreq(c, "mm.1.bias"), -1, -1,
                 cg_wreq(c, "mm.2.weight"), cg_wreq(c, "mm.2.bias"), CLIP_FFN_GELU);
    if (!c->missing)
        gg_expand(g, cur);
}

static void hparams_kimivl(clip_model *m)
{
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
    ggfit__clip_limit_image_tokens(&m->hp, 8, 1024);
    ggfit__clip_warmup_n_tokens(&m->hp, 256);
}

const clip_type ggfit__clip_kimivl = { "kimivl", hparams_kimivl, build_kimivl };
