/*
 * mm_pixtral.c - tools/mtmd/models/pixtral.cpp: Pixtral and Mistral
 * Small 3.1 (mistral3): a ViT with RMS norms and 2D RoPE (no learned
 * positions), Mistral 3's patch merger (an RMS norm, the n_merge x n_merge
 * patches unfolded with im2col, a matmul), the LLaVA MLP, and an
 * [IMG_BREAK] embedding after each row; LightOnOCR: the same without
 * [IMG_BREAK].
 */
#include "mtmd/clip.h"

static int32_t rope_hw(clip_graph *c, int32_t cur)
{
    return cg_rope_2d(c, cur, c->pos_a, c->pos_b);
}

static void build_pixtral(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, m = c->hp->n_merge;
    c->pos_a = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_h");
    c->pos_b = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_w");
    c->add_pos = rope_hw;
    int32_t inp = cg_inp(c);
    if (inp < 0)
        return;
    int32_t cur = cg_vit(c, inp, c->n_patches, CG_NORM_RMS, c->hp->ffn_op, -1);
    if (cur < 0)
        return;
    int32_t merger = cg_w(c, "mm.patch_merger.weight");
    if (merger >= 0) {
        cur = cg_mul(c, gg_rms_norm(g, cur), cg_wreq(c, "mm.input_norm.weight"));
        cur = cg_reshape(c, cur, E, c->n_patches_x, c->n_patches_y, 1);
        cur = gg_cont(g, gg_permute(g, cur, 2, 0, 1, 3));
        /* unfold: im2col with a dummy kernel, a view of cur */
        const gg_tensor *t = &g->t[cur];
        int64_t kne[3] = { m, m, t->ne[2] };
        uint64_t knb[2] = { 0, 0 };
        int32_t kernel = gg_view(g, cur, 3, kne, knb, 0);
        int64_t ne[4] = { m * m * t->ne[2], (t->ne[0] - m) / m + 1, (t->ne[1] - m) / m + 1,
                          t->ne[3] };
        int32_t src[2] = { kernel, cur };
        cur = gg_op_shape(g, GGFIT_OP_IM2COL, g->t[inp].type, 4, ne, 2, src);
        cur = cg_reshape(c, cur, ne[0], ne[1] * ne[2], 1, 1);
        cur = gg_mul_mat(g, merger, cur);
    }
    cur = cg_ffn(c, cur, cg_wreq(c, "mm.1.weight"), cg_w(c, "mm.1.bias"), -1, -1,
                 cg_wreq(c, "mm.2.weight"), cg_w(c, "mm.2.bias"), CLIP_FFN_GELU);
    int32_t brk = cg_w(c, "v.token_embd.img_break");   /* none in LightOnOCR */
    if (c->missing)
        return;
    if (brk < 0) {
        gg_expand(g, cur);
        return;
    }
    /* one [IMG_BREAK] at the end of each row but the last */
    int64_t py = c->n_patches_y / m, px = c->n_patches_x / m, n_text = g->t[cur].ne[0];
    int32_t tmp = cg_reshape(c, cur, n_text, px, py, 1);
    int32_t tok = gg_new_4d(g, g->t[tmp].type, n_text, 1, py, 1);
    tok = cg_add(c, gg_scale(g, tok), brk);
    tmp = gg_concat(g, tmp, tok, 1);
    int64_t vne[2] = { n_text, px * py + py - 1 };
    uint64_t vnb[1] = { (uint64_t)n_text * 4 };
    cur = gg_view(g, tmp, 2, vne, vnb, 0);
    gg_expand(g, cur);
}

static void hparams_pixtral(clip_model *m)
{
    m->hp.n_merge = 1;
    ggfit__clip_u32(m, "clip.vision.spatial_merge_size", &m->hp.n_merge);
    ggfit__clip_limit_image_tokens(&m->hp, 8, 1024);
    ggfit__clip_warmup_n_tokens(&m->hp, 256);
}

/* load_hparams LIGHTONOCR: as Pixtral's, without the token limits but
 * the custom ones (MTMD_LONGEST_EDGE_LIMITS) */
static void hparams_lightonocr(clip_model *m)
{
    m->hp.n_merge = 1;
    ggfit__clip_u32(m, "clip.vision.spatial_merge_size", &m->hp.n_merge);
    ggfit__clip_custom_image_tokens(m);
    ggfit__clip_warmup_n_tokens(&m->hp, 256);
}

const clip_type ggfit__clip_pixtral = {
    .name = "pixtral", .hparams = hparams_pixtral, .build = build_pixtral,
};
const clip_type ggfit__clip_lightonocr = {
    .name = "lightonocr", .hparams = hparams_lightonocr, .build = build_pixtral,
};
