/*
 * mm_youtuvl.c - tools/mtmd/models/youtuvl.cpp: Youtu-VL's SigLIP2 ViT:
 * the pixels cut into 2x2 blocks of patches by reshapes (its 3D
 * convolution as a matmul), vision M-RoPE, windowed attention in all
 * layers but those clip.vision.wa_layer_indexes lists (tokens reordered
 * by window, put back after the last layer), an RMS norm and a merge MLP.
 */
#include "mtmd/clip.h"

enum { MAX_FULL = 64 };

/* clip.vision.wa_layer_indexes: the layers with full attention */
static int full_layers(const clip_graph *c, int32_t out[MAX_FULL])
{
    int64_t k = ggfit_gguf_find_key(c->m->g, "clip.vision.wa_layer_indexes");
    ggfit_value arr, v;
    ggfit_value_iter it = { 0 };
    int n = 0;
    if (k < 0 || !ggfit_gguf_value(c->m->g, (uint64_t)k, &arr) || arr.type != GGFIT_GGUF_ARRAY)
        return 0;
    while (n < MAX_FULL && ggfit_value_next(&arr, &it, &v))
        out[n++] = (int32_t)(v.type == GGFIT_GGUF_INT32 ? v.i : (int64_t)v.u);
    return n;
}

/* the image as rows of 3 x P x P pixels, 2x2 patches next to each other */
static int32_t patches(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t P = c->patch_size, m = 2, Wm = c->n_patches_x / m, Hm = c->n_patches_y / m;
    int32_t inp = cg_reshape(c, cg_inp_raw(c, 3), Wm * m * P, m * P, Hm, 3);
    inp = cg_cont(c, gg_permute(g, inp, 1, 2, 3, 0), m * P * 3, Wm, m * P, Hm);
    inp = cg_cont(c, gg_permute(g, inp, 0, 2, 1, 3), m * P * 3, P, m, Hm * Wm);
    inp = cg_cont(c, gg_permute(g, inp, 1, 0, 2, 3), P, 3, P, Hm * Wm * m * m);
    return cg_cont(c, gg_permute(g, inp, 2, 0, 1, 3), 3 * P * P, Hm * Wm * m * m, 1, 1);
}

static bool is_full(const int32_t *full, int n, int il)
{
    for (int i = 0; i < n; i++)
        if (full[i] == il)
            return true;
    return false;
}

static int32_t layer(clip_graph *c, int32_t inpL, int il, int32_t positions, int32_t mask)
{
    int64_t n = c->n_patches;
    int32_t cur = cg_norm(c, inpL, cg_w(c, "v.blk.%d.ln1.weight", il),
                          cg_w(c, "v.blk.%d.ln1.bias", il), CG_NORM_LAYER);
    static const char *const nm[3] = { "q", "k", "v" };
    int32_t qkv[3];
    for (int k = 0; k < 3; k++)
        qkv[k] = cg_add(c, cg_mm(c, cg_wreq(c, "v.blk.%d.attn_%s.weight", il, nm[k]), cur),
                        cg_wreq(c, "v.blk.%d.attn_%s.bias", il, nm[k]));
    if (c->missing)
        return -1;
    for (int k = 0; k < 3; k++)
        qkv[k] = cg_reshape(c, qkv[k], c->d_head, c->n_head, n, 1);
    qkv[0] = gg_rope(c->g, qkv[0], positions, -1);   /* ggml_rope_multi, vision */
    qkv[1] = gg_rope(c->g, qkv[1], positions, -1);
    cur = cg_attn(c, cg_wreq(c, "v.blk.%d.attn_out.weight", il),
                  cg_w(c, "v.blk.%d.attn_out.bias", il), qkv[0], qkv[1], qkv[2], mask);
    inpL = cg_add(c, cur, inpL);
    cur = cg_norm(c, inpL, cg_w(c, "v.blk.%d.ln2.weight", il), cg_w(c, "v.blk.%d.ln2.bias", il),
                  CG_NORM_LAYER);
    cur = cg_ffn(c, cur, cg_wreq(c, "v.blk.%d.ffn_up.weight", il),
                 cg_w(c, "v.blk.%d.ffn_up.bias", il), -1, -1,
                 cg_wreq(c, "v.blk.%d.ffn_down.weight", il),
                 cg_w(c, "v.blk.%d.ffn_down.bias", il), c->hp->ffn_op);
    return cg_add(c, inpL, cur);
}

static void build_youtuvl(clip_graph *c)
{
    gg_graph *g = c->g;
    int32_t full[MAX_FULL];
    int n_full = full_layers(c, full), w;
    int64_t E = c->n_embd, n = c->n_patches;
    int32_t pe = cg_wreq(c, "v.patch_embd.weight");
    if (c->missing)
        return;
    int32_t inp = cg_mm(c, pe, patches(c));
    if ((w = cg_w(c, "v.patch_embd.bias")) >= 0)
        inp = cg_add(c, inp, w);
    int32_t inpL = cg_reshape(c, inp, E, n, 1, 1), mask = -1;
    int32_t positions = cg_input(c, GGFIT_TYPE_I32, n * 4, 1, 1, 1, "positions");
    if ((w = cg_w(c, "v.pre_ln.weight")) >= 0)
        inpL = cg_norm(c, inpL, w, cg_w(c, "v.pre_ln.bias"), CG_NORM_LAYER);
    if (n_full) {
        int32_t inv = cg_input(c, GGFIT_TYPE_I32, n / 4, 1, 1, 1, "inv_window_idx");
        mask = cg_input(c, GGFIT_TYPE_F32, n, n, 1, 1, "window_mask");
        if (c->flash_attn)
            mask = gg_cpy_type(g, mask, GGFIT_TYPE_F16);
        inpL = gg_get_rows(g, cg_reshape(c, inpL, E * 4, n / 4, 1, 1), inv);
        inpL = cg_reshape(c, inpL, E, n, 1, 1);
    }
    for (int il = 0; il < c->n_layer && inpL >= 0; il++)
        inpL = layer(c, inpL, il, positions, n_full && !is_full(full, n_full, il) ? mask : -1);
    if (inpL < 0)
        return;
    if (n_full) {
        int32_t idx = cg_input(c, GGFIT_TYPE_I32, n / 4, 1, 1, 1, "window_idx");
        inpL = gg_get_rows(g, cg_reshape(c, inpL, E * 4, n / 4, 1, 1), idx);
        inpL = cg_reshape(c, inpL, E, n, 1, 1);
    }
    if ((w = cg_w(c, "v.post_ln.weight")) >= 0)
        inpL = cg_norm(c, inpL, w, cg_w(c, "v.post_ln.bias"), CG_NORM_LAYER);
    inpL = cg_norm(c, inpL, cg_wreq(c, "mm.input_norm.weight"), -1, CG_NORM_RMS);
    inpL = cg_reshape(c, inpL, E * 4, n / 4, 1, 1);
    inpL = cg_ffn(c, inpL, cg_wreq(c, "mm.0.weight"), cg_wreq(c, "mm.0.bias"), -1, -1,
                  cg_wreq(c, "mm.2.weight"), cg_wreq(c, "mm.2.bias"), CLIP_FFN_GELU);
    if (!c->missing)
        gg_expand(g, inpL);
}

/* load_hparams YOUTUVL: 1 to 62500 tokens, a warmup of 16 x 16 */
static void hparams_youtuvl(clip_model *m)
{
    clip_hparams *hp = &m->hp;
    hp->n_merge = 2;
    ggfit__clip_u32(m, "clip.vision.spatial_merge_size", &hp->n_merge);
    ggfit__clip_limit_image_tokens(hp, 1, 62500);
    ggfit__clip_warmup_n_tokens(hp, 16 * 16);
}

const clip_type ggfit__clip_youtuvl = {
    .name = "youtuvl", .hparams = hparams_youtuvl, .build = build_youtuvl,
};
