/*
 * mm_granite4v.c - tools/mtmd/models/granite4-vision.cpp: Granite Vision
 * 4.1: a SigLIP tower, then per feature layer (clip.vision.feature_layer)
 * a WindowQFormer block: the layer's output normed and cut into windows,
 * downsampled (gathered at a spatial offset, or average-pooled), queries
 * that self-attend and cross-attend to their window, an FFN, the windows
 * put back and a linear; the blocks' outputs side by side.
 */
#include <stdio.h>

#include "mtmd/clip.h"

enum { MAX_BLOCKS = 16, QF_HEAD = 64 };

/* An INT32 array key, up to MAX_BLOCKS values; its count. */
static int int_array(const clip_graph *c, const char *key, int32_t out[MAX_BLOCKS])
{
    int64_t k = ggfit_gguf_find_key(c->m->g, key);
    ggfit_value arr, v;
    ggfit_value_iter it = { 0 };
    int n = 0;
    if (k < 0 || !ggfit_gguf_value(c->m->g, (uint64_t)k, &arr) || arr.type != GGFIT_GGUF_ARRAY)
        return 0;
    while (n < MAX_BLOCKS && ggfit_value_next(&arr, &it, &v))
        out[n++] = (int32_t)(v.type == GGFIT_GGUF_INT32 ? v.i : (int64_t)v.u);
    return n;
}

/* gather: src's rows picked by an index input of n */
static int32_t gather(clip_graph *c, int32_t src, int64_t n)
{
    return gg_get_rows(c->g, src, cg_input(c, GGFIT_TYPE_I32, n, 1, 1, 1, "g4v_idx"));
}

static int32_t interp_down(clip_graph *c, int32_t src, int64_t side, int64_t new_side)
{
    gg_graph *g = c->g;
    int64_t E = g->t[src].ne[0], k = side / new_side;
    int32_t t = cg_reshape(c, src, E, side, side, 1);
    t = gg_cont(g, gg_permute(g, t, 2, 0, 1, 3));
    int64_t ne[4] = { (side - k) / k + 1, (side - k) / k + 1, E, 1 };
    t = gg_op_shape(g, GGFIT_OP_POOL_2D, GGFIT_TYPE_F32, 4, ne, 1, &t);
    t = gg_cont(g, gg_permute(g, t, 1, 2, 0, 3));
    return cg_reshape(c, t, E, new_side * new_side, 1, 1);
}

/* the block's linear: x flattened over the windows, a matmul, its bias */
static int32_t linear(clip_graph *c, int32_t x, int bid, const char *name)
{
    const gg_tensor *t = &c->g->t[x];
    int32_t r = cg_reshape(c, x, t->ne[0], t->ne[1] * t->ne[2], 1, 1);
    r = cg_mm(c, cg_wreq(c, "v.proj_blk.%d.%s.weight", bid, name), r);
    int32_t b = cg_w(c, "v.proj_blk.%d.%s.bias", bid, name);
    return b >= 0 ? cg_add(c, r, b) : r;
}

static int32_t qf_norm(clip_graph *c, int32_t x, int bid, const char *name)
{
    return cg_norm(c, x, cg_wreq(c, "v.proj_blk.%d.%s.weight", bid, name),
                   cg_wreq(c, "v.proj_blk.%d.%s.bias", bid, name), CG_NORM_LAYER);
}

/* attention of q (nq a window) over kv (nkv a window), then the residual
 * and the norm */
static int32_t qf_attn(clip_graph *c, int32_t q, int32_t kv, int bid, const char *pre,
                       int64_t n_windows)
{
    int64_t E = c->g->t[q].ne[0], H = E / QF_HEAD, nq = c->g->t[q].ne[1],
            nkv = c->g->t[kv].ne[1];
    char nm[4][32];
    static const char *const part[4] = { "q", "k", "v", "out" };
    for (int i = 0; i < 4; i++)
        snprintf(nm[i], sizeof nm[i], "%s_%s", pre, part[i]);
    int32_t Q = cg_reshape(c, linear(c, q, bid, nm[0]), QF_HEAD, H, nq, n_windows);
    int32_t K = cg_reshape(c, linear(c, kv, bid, nm[1]), QF_HEAD, H, nkv, n_windows);
    int32_t V = cg_reshape(c, linear(c, kv, bid, nm[2]), QF_HEAD, H, nkv, n_windows);
    if (c->missing)
        return -1;
    int32_t out = cg_attn(c, cg_wreq(c, "v.proj_blk.%d.%s.weight", bid, nm[3]),
                          cg_w(c, "v.proj_blk.%d.%s.bias", bid, nm[3]), Q, K, V, -1);
    out = cg_add(c, cg_reshape(c, out, E, nq, n_windows, 1), q);
    snprintf(nm[0], sizeof nm[0], "%s_norm", pre);
    return qf_norm(c, out, bid, nm[0]);
}

static int32_t qf_block(clip_graph *c, int32_t h, int bid, int spatial_offset, int64_t side,
                        int64_t window_side, int64_t query_side)
{
    gg_graph *g = c->g;
    int64_t E = g->t[h].ne[0], n = side / window_side, new_side = n * query_side;
    int64_t n_windows = n * n, enc_len = window_side * window_side,
            query_len = query_side * query_side;
    int32_t x = qf_norm(c, h, bid, "norm");
    int32_t enc = cg_reshape(c, gather(c, x, side * side), E, enc_len, n_windows, 1);
    int32_t d = spatial_offset >= 0 ? gather(c, x, new_side * new_side)
                                    : interp_down(c, x, side, new_side);
    int32_t dw = cg_reshape(c, gather(c, d, new_side * new_side), E, query_len, n_windows, 1);
    int32_t q_in = cg_add(c, dw, cg_wreq(c, "v.proj_blk.%d.query", bid));
    int32_t e_in = cg_add(c, enc, cg_wreq(c, "v.proj_blk.%d.img_pos", bid));
    int32_t q = qf_norm(c, q_in, bid, "post_norm");
    if (c->missing)
        return -1;
    int32_t sa = qf_attn(c, q, q, bid, "self_attn", n_windows);
    int32_t ca = sa < 0 ? -1 : qf_attn(c, sa, e_in, bid, "cross_attn", n_windows);
    if (ca < 0)
        return -1;
    int32_t t = gg_unary_op(g, GGFIT_OP_UNARY, linear(c, ca, bid, "ffn_up")), b;
    t = cg_mm(c, cg_wreq(c, "v.proj_blk.%d.ffn_down.weight", bid), t);
    if ((b = cg_w(c, "v.proj_blk.%d.ffn_down.bias", bid)) >= 0)
        t = cg_add(c, t, b);
    t = cg_reshape(c, t, E, query_len, n_windows, 1);
    int32_t ffn = qf_norm(c, cg_add(c, t, ca), bid, "ffn_norm");
    int32_t flat = cg_reshape(c, ffn, E, query_len * n_windows, 1, 1);
    int32_t out = cg_mm(c, cg_wreq(c, "v.proj_blk.%d.linear.weight", bid),
                        gather(c, flat, new_side * new_side));
    return cg_add(c, out, cg_wreq(c, "v.proj_blk.%d.linear.bias", bid));
}

static int32_t siglip_layer(clip_graph *c, int32_t inpL, int il)
{
    int32_t cur = cg_norm(c, inpL, cg_w(c, "v.blk.%d.ln1.weight", il),
                          cg_w(c, "v.blk.%d.ln1.bias", il), CG_NORM_LAYER);
    static const char *const nm[3] = { "q", "k", "v" };
    int32_t qkv[3], b;
    for (int k = 0; k < 3; k++) {
        qkv[k] = cg_mm(c, cg_wreq(c, "v.blk.%d.attn_%s.weight", il, nm[k]), cur);
        if ((b = cg_w(c, "v.blk.%d.attn_%s.bias", il, nm[k])) >= 0)
            qkv[k] = cg_add(c, qkv[k], b);
    }
    if (c->missing)
        return -1;
    for (int k = 0; k < 3; k++)
        qkv[k] = cg_reshape(c, qkv[k], c->d_head, c->n_head, c->n_patches, 1);
    cur = cg_attn(c, cg_wreq(c, "v.blk.%d.attn_out.weight", il),
                  cg_w(c, "v.blk.%d.attn_out.bias", il), qkv[0], qkv[1], qkv[2], -1);
    inpL = cg_add(c, cur, inpL);
    cur = cg_norm(c, inpL, cg_w(c, "v.blk.%d.ln2.weight", il), cg_w(c, "v.blk.%d.ln2.bias", il),
                  CG_NORM_LAYER);
    cur = cg_ffn(c, cur, cg_wreq(c, "v.blk.%d.ffn_up.weight", il),
                 cg_w(c, "v.blk.%d.ffn_up.bias", il), cg_w(c, "v.blk.%d.ffn_gate.weight", il),
                 cg_w(c, "v.blk.%d.ffn_gate.bias", il), cg_wreq(c, "v.blk.%d.ffn_down.weight", il),
                 cg_w(c, "v.blk.%d.ffn_down.bias", il), c->hp->ffn_op);
    return cg_add(c, inpL, cur);
}

static void build_granite4v(clip_graph *c)
{
    gg_graph *g = c->g;
    int32_t layers[MAX_BLOCKS], offsets[MAX_BLOCKS];
    int n_blk = int_array(c, "clip.vision.feature_layer", layers);
    int32_t qs = 0, ws = 0;
    ggfit__clip_u32(c->m, "clip.vision.projector.query_side", &qs);
    ggfit__clip_u32(c->m, "clip.vision.projector.window_side", &ws);
    bool ok = n_blk > 0 && int_array(c, "clip.vision.projector.spatial_offsets", offsets) == n_blk
              && qs > 0 && ws > 0 && c->n_patches_x == c->n_patches_y;
    for (int i = 0; ok && i < n_blk; i++)
        ok = layers[i] >= 0 && layers[i] < c->n_layer;
    int32_t pos = cg_wreq(c, "v.position_embd.weight");
    if (!ok || c->missing || c->n_layer > 4096) {
        c->missing = true;
        return;
    }
    int32_t inp = cg_inp(c);
    if (inp < 0)
        return;
    int32_t inpL = cg_add(c, inp, pos), outs[4096];
    for (int il = 0; il < c->n_layer && inpL >= 0; il++)
        outs[il] = inpL = siglip_layer(c, inpL, il);
    if (inpL < 0)
        return;
    int32_t mm = -1;
    for (int b = 0; b < n_blk; b++) {
        int32_t s = qf_block(c, outs[layers[b]], b, offsets[b], c->n_patches_x, ws, qs);
        if (s < 0)
            return;
        mm = mm < 0 ? s : gg_concat(g, mm, s, 0);
    }
    if (!c->missing)
        gg_expand(g, mm);
}

/* Each block cuts the warmup image's side of patches into windows of
 * window_side and downsamples each to query_side a side: at least one
 * window, and no larger than before (interp_down divides by the ratio,
 * as llama.cpp's does). */
static void check_granite4v(hp_check *c, const clip_model *m)
{
    static const char *const keys[2] = { "clip.vision.projector.query_side",
                                         "clip.vision.projector.window_side" };
    int32_t qs = 0, ws = 0;
    int64_t side = m->hp.warmup_image_size / m->hp.patch_size;
    ggfit_value v;
    for (int i = 0; i < 2; i++)
        if (!ggfit__clip_key_value(m, keys[i], &v))
            hc_fail(c, "key not found: %s (llama.cpp's clip loader requires it)", keys[i]);
    ggfit__clip_u32(m, keys[0], &qs);
    ggfit__clip_u32(m, keys[1], &ws);
    if (hc_range(c, "projector.window_side", ws, 1, side,
                 "Granite Vision cuts the image's patches into windows this many a side") &&
        hc_range(c, "projector.query_side", qs, 1, INT32_MAX,
                 "Granite Vision downsamples each window to this many queries a side") &&
        (side / ws) * qs > side)
        hc_fail(c, "clip.vision.projector.query_side is %d, more than its window_side %d "
                "(%lld patches a side): Granite Vision downsamples each window to it",
                qs, ws, (long long)side);
}

const clip_type ggfit__clip_granite4_vision = {
    .name = "granite4_vision", .build = build_granite4v, .check = check_granite4v,
};
