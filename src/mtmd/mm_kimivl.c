/*
 * mm_kimivl.c - tools/mtmd/models/kimivl.cpp: Kimi-VL's MoonViT, learned
 * positions resized to the image plus a 2D RoPE (x then y), a pixel
 * shuffle, a LayerNorm over the unshuffled rows and the MLP projector;
 * Kimi-K2.5 (kimik25.cpp): the same with a [E, W, H] position grid.
 */
#include "mtmd/clip.h"

static int32_t rope_wh(clip_graph *c, int32_t cur)
{
    return cg_rope_2d(c, cur, c->pos_b, c->pos_a);
}

/* The patches shuffled s x s, each of the s*s rows normed, the MLP. */
static int32_t kimi_projector(clip_graph *c, int32_t cur)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, s = c->hp->n_merge;
    cur = cg_patch_merge_permute(c, cur, (int)s);
    if (cur < 0)
        return -1;
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
    return cg_ffn(c, cur, cg_wreq(c, "mm.1.weight"), cg_wreq(c, "mm.1.bias"), -1, -1,
                  cg_wreq(c, "mm.2.weight"), cg_wreq(c, "mm.2.bias"), CLIP_FFN_GELU);
}

static void build_kimivl(clip_graph *c)
{
    gg_graph *g = c->g;
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
    cur = kimi_projector(c, cur);
    if (cur >= 0 && !c->missing)
        gg_expand(g, cur);
}

/* clip_graph_kimik25::resize_position_embeddings_3d: the grid stored as
 * [E, W, H], interpolated unless it is the image's */
static int32_t resize_pos_3d(clip_graph *c, int32_t pos)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, w = c->n_patches_x, h = c->n_patches_y;
    if (g->t[pos].ne[1] == w && g->t[pos].ne[2] == h)
        return cg_cont(c, pos, E, w * h, 1, 1);
    pos = gg_permute(g, pos, 2, 1, 0, 3);
    int64_t ne[4] = { h, w, E, 1 };
    pos = gg_op_shape(g, GGFIT_OP_UPSCALE, g->t[pos].type, 4, ne, 1, &pos);
    pos = gg_permute(g, pos, 2, 1, 0, 3);
    return cg_cont(c, pos, E, w * h, 1, 1);
}

/* Kimi-K2.5: the positions added before the ViT, from a 3D grid */
static void build_kimik25(clip_graph *c)
{
    gg_graph *g = c->g;
    c->pos_a = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_h");
    c->pos_b = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_w");
    c->add_pos = rope_wh;
    int32_t pos = cg_wreq(c, "v.position_embd.weight");
    if (c->missing || g->t[pos].ne[0] != c->n_embd) {
        c->missing = true;
        return;
    }
    pos = resize_pos_3d(c, pos);
    int32_t inp = cg_inp(c);
    if (inp < 0)
        return;
    int32_t cur = cg_vit(c, cg_add(c, inp, pos), c->n_patches, CG_NORM_LAYER, c->hp->ffn_op, -1);
    if (cur < 0)
        return;
    cur = kimi_projector(c, cur);
    if (cur >= 0 && !c->missing)
        gg_expand(g, cur);
}

static void hparams_kimivl(clip_model *m)
{
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
    ggfit__clip_limit_image_tokens(&m->hp, 8, 1024);
    ggfit__clip_warmup_n_tokens(&m->hp, 256);
}

/* load_hparams KIMIK25: the file's pixel bounds (the warmup at the
 * largest), else 2 to 4096 tokens */
static void hparams_kimik25(clip_model *m)
{
    clip_hparams *hp = &m->hp;
    int32_t min_pixels = 0, max_pixels = 0;
    hp->n_merge = 1;
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &hp->n_merge);
    ggfit__clip_u32(m, "clip.vision.image_min_pixels", &min_pixels);
    ggfit__clip_u32(m, "clip.vision.image_max_pixels", &max_pixels);
    if (min_pixels > 0 && max_pixels > 0) {
        hp->image_min_pixels = min_pixels;
        hp->image_max_pixels = max_pixels;
        int32_t r = 0;
        while ((int64_t)(r + 1) * (r + 1) <= max_pixels)
            r++;
        hp->warmup_image_size = r;
    } else {
        ggfit__clip_limit_image_tokens(hp, 2, 4096);
    }
}

const clip_type ggfit__clip_kimivl = {
    .name = "kimivl", .hparams = hparams_kimivl, .build = build_kimivl,
};
const clip_type ggfit__clip_kimik25 = {
    .name = "kimik25", .hparams = hparams_kimik25, .build = build_kimik25,
};
