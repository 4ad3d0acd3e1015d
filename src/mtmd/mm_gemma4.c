/*
 * mm_gemma4.c - tools/mtmd/models/gemma4v.cpp and gemma4uv.cpp: Gemma 4's
 * vision encoders. gemma4v: the pixels scaled to [-1, 1], the patches,
 * x and y position tables, a ViT with RMS norms, 2D NeoX RoPE and V
 * normed, every matmul clamped (Gemma4ClippableLinear), the patches
 * average-pooled n_merge x n_merge, then an RMS norm and the projection.
 * gemma4uv ("unified"): no ViT, the patches unfolded, normed, embedded
 * and normed around the position tables, then the projection.
 */
#include "mtmd/clip.h"

/* clip_graph_gemma4v::build_mm: load_tensors gives every weight a clamp
 * (FLT_MAX when the file has no bound), so each matmul is clamped on
 * both sides; ggml_clamp is a view, in place */
static int32_t clamped_mm(clip_graph *c, int32_t w, int32_t x)
{
    gg_graph *g = c->g;
    if (w < 0)
        return gg_mul_mat(g, w, x);
    return gg_clamp(g, gg_mul_mat(g, w, gg_clamp(g, x)));
}

static int32_t rope_xy(clip_graph *c, int32_t cur)
{
    return cg_rope_2d(c, cur, c->pos_a, c->pos_b);
}

/* The x and y position tables (the two halves of v.position_embd) looked
 * up and added to inp. */
static int32_t add_pos_tables(clip_graph *c, int32_t inp, int32_t pos)
{
    gg_graph *g = c->g;
    int64_t rows = g->t[pos].ne[1];
    int64_t ne[2] = { c->n_embd, rows };
    uint64_t nb[1] = { g->t[pos].nb[1] };
    int32_t tbl_x = gg_view(g, pos, 2, ne, nb, 0);
    int32_t tbl_y = gg_view(g, pos, 2, ne, nb, (uint64_t)rows * nb[0]);
    int32_t emb_x = gg_get_rows(g, tbl_x, c->pos_a);
    int32_t emb_y = gg_get_rows(g, tbl_y, c->pos_b);
    return cg_add(c, cg_add(c, inp, emb_x), emb_y);
}

static void build_gemma4v(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, k = c->hp->n_merge;
    int32_t raw = gg_scale(g, cg_inp_raw(c, 3));
    int32_t inp = cg_conv_2d(c, cg_wreq(c, "v.patch_embd.weight"), raw, (int)c->patch_size,
                             (int)c->patch_size);
    int32_t pos = cg_wreq(c, "v.position_embd.weight");
    if (c->missing || k <= 0)
        return;
    inp = cg_reshape(c, inp, c->n_patches, E, 1, 1);
    inp = gg_cont(g, gg_transpose(g, inp));
    c->pos_a = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_x");
    c->pos_b = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_y");
    inp = add_pos_tables(c, inp, pos);
    c->add_pos = rope_xy;
    c->mm = clamped_mm;
    c->v_norm = true;
    int32_t cur = cg_vit(c, inp, c->n_patches, CG_NORM_RMS, c->hp->ffn_op, -1);
    if (cur < 0)
        return;
    /* Gemma4VisionPooler */
    int64_t px = c->n_patches_x, py = c->n_patches_y;
    cur = cg_cont(c, gg_transpose(g, cur), px, py, E, 1);
    int64_t ne[4] = { px / k, py / k, E, 1 };   /* ggml_pool_2d, no padding */
    cur = gg_op_shape(g, GGFIT_OP_POOL_2D, GGFIT_TYPE_F32, 4, ne, 1, &cur);
    cur = cg_reshape(c, cur, ne[0] * ne[1], E, 1, 1);
    cur = gg_scale(g, gg_cont(g, gg_transpose(g, cur)));
    int32_t std_bias = cg_w(c, "v.std_bias"), std_scale = cg_w(c, "v.std_scale");
    if (std_bias >= 0 && std_scale >= 0)
        cur = cg_mul(c, gg_binary(g, GGFIT_OP_SUB, cur, std_bias), std_scale);
    int32_t proj = cg_wreq(c, "mm.input_projection.weight");
    if (c->missing)
        return;
    gg_expand(g, cg_mm(c, proj, gg_rms_norm(g, cur)));
}

static void build_gemma4uv(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t P = c->patch_size;
    int32_t raw = cg_inp_raw(c, 3);
    /* an unfold before the norm: im2col with a kernel of no data */
    int32_t kernel = gg_new_4d(g, GGFIT_TYPE_F32, P, P, 3, 1);
    int64_t ne[4] = { P * P * 3, c->n_patches_x, c->n_patches_y, 1 };
    int32_t src[2] = { kernel, raw };
    int32_t inp = gg_op_shape(g, GGFIT_OP_IM2COL, GGFIT_TYPE_F32, 4, ne, 2, src);
    inp = cg_reshape(c, inp, ne[0], ne[1] * ne[2], 1, 1);
    inp = cg_norm(c, inp, cg_wreq(c, "v.patch_norm.1.weight"), cg_wreq(c, "v.patch_norm.1.bias"),
                  CG_NORM_LAYER);
    int32_t patch = cg_wreq(c, "v.patch_embd.weight");
    int32_t bias = cg_wreq(c, "v.patch_embd.bias");
    if (c->missing)
        return;
    inp = cg_add(c, gg_mul_mat(g, patch, inp), bias);
    inp = cg_norm(c, inp, cg_wreq(c, "v.patch_norm.2.weight"), cg_wreq(c, "v.patch_norm.2.bias"),
                  CG_NORM_LAYER);
    int32_t pos = cg_wreq(c, "v.position_embd.weight");
    if (c->missing)
        return;
    c->pos_a = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_x");
    c->pos_b = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "pos_y");
    inp = add_pos_tables(c, inp, pos);
    inp = cg_norm(c, inp, cg_wreq(c, "v.patch_norm.3.weight"), cg_wreq(c, "v.patch_norm.3.bias"),
                  CG_NORM_LAYER);
    int32_t proj = cg_wreq(c, "mm.input_projection.weight");
    if (c->missing)
        return;
    gg_expand(g, gg_mul_mat(g, proj, gg_rms_norm(g, inp)));
}

/* load_hparams (GEMMA4V, GEMMA4UV): pooling by 3 unless the file says,
 * 40 to 280 tokens, a warmup of 256 tokens; the unified encoder merges
 * in its patch instead (the patch n_merge times larger, no merge). */
static void hparams_gemma4v(clip_model *m)
{
    clip_hparams *hp = &m->hp;
    hp->n_merge = 3;
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &hp->n_merge);
    if (m->type->build == build_gemma4uv) {
        hp->patch_size = ggfit__clip_clamp32((int64_t)hp->patch_size * hp->n_merge);
        hp->n_merge = 1;
    }
    ggfit__clip_limit_image_tokens(hp, 40, 280);
    ggfit__clip_warmup_n_tokens(hp, 256);
}

const clip_type ggfit__clip_gemma4v = {
    .name = "gemma4v", .hparams = hparams_gemma4v, .build = build_gemma4v,
};
const clip_type ggfit__clip_gemma4uv = {
    .name = "gemma4uv", .hparams = hparams_gemma4v, .build = build_gemma4uv,
};
