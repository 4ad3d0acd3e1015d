/*
 * mm_mobilenetv5.c - tools/mtmd/models/mobilenetv5.cpp: Gemma 3n's
 * MobileNetV5 vision encoder ("gemma3nv"): a strided stem convolution,
 * up to four stages of blocks found by name (edge residual, universal
 * inverted residual, multi-query attention; each stage starts with a
 * stride of 2), the multi-scale fusion of the last two stages' outputs,
 * then the tokens scaled, RMS-normed and projected.
 */
#include <stdio.h>

#include "mtmd/clip.h"

enum { MAX_BLOCKS = 256, MAX_FEATS = 8 };

/* ggml_conv_2d_direct: one CONV_2D op, [OW, OH, OC, N] */
static int32_t conv(clip_graph *c, int32_t kernel, int32_t inp, int s, int p)
{
    gg_graph *g = c->g;
    const gg_tensor *a = &g->t[kernel], *b = &g->t[inp];
    int64_t ne[4] = { (b->ne[0] + 2 * p - a->ne[0]) / s + 1, (b->ne[1] + 2 * p - a->ne[1]) / s + 1,
                      a->ne[3], b->ne[3] };
    int32_t src[2] = { kernel, inp };
    return gg_op_shape(g, GGFIT_OP_CONV_2D, GGFIT_TYPE_F32, 4, ne, 2, src);
}

/* a weight the block needs is not there */
static int32_t missing(clip_graph *c)
{
    c->missing = true;
    return -1;
}

static int32_t gelu(clip_graph *c, int32_t a)
{
    return gg_unary_op(c->g, GGFIT_OP_UNARY, a);
}

/* an RMS norm over the channels of [W, H, C, B] */
static int32_t rms_norm_2d(clip_graph *c, int32_t inp, int32_t w)
{
    gg_graph *g = c->g;
    int32_t cur = gg_rms_norm(g, gg_cont(g, gg_permute(g, inp, 2, 1, 0, 3)));
    if (w >= 0)
        cur = cg_mul(c, cur, w);
    return gg_cont(g, gg_permute(g, cur, 2, 1, 0, 3));
}

/* Conv2dSame's padding: what a stride of s leaves, split low / high */
static int32_t pad_same(clip_graph *c, int32_t inp, int64_t k, int64_t s)
{
    const gg_tensor *t = &c->g->t[inp];
    int64_t oh = (t->ne[1] + s - 1) / s, ow = (t->ne[0] + s - 1) / s;
    int64_t ph = (oh - 1) * s + k - t->ne[1], pw = (ow - 1) * s + k - t->ne[0];
    ph = ph > 0 ? ph : 0;
    pw = pw > 0 ? pw : 0;
    if (!ph && !pw)
        return inp;
    int64_t ne[4] = { t->ne[0] + pw, t->ne[1] + ph, t->ne[2], t->ne[3] };
    return gg_op_shape(c->g, GGFIT_OP_PAD, t->type, 4, ne, 1, &inp);
}

static int32_t blk_w(clip_graph *c, int st, int b, const char *name)
{
    return cg_w(c, "v.blk.%d.%d.%s", st, b, name);
}

static int32_t edge_residual(clip_graph *c, int32_t inp, int st, int b, int stride)
{
    int32_t exp = blk_w(c, st, b, "conv_exp.weight"), cur;
    if (stride == 2)
        cur = conv(c, exp, pad_same(c, inp, 3, stride), stride, 0);
    else
        cur = conv(c, exp, inp, stride, 1);
    int32_t w;
    if ((w = blk_w(c, st, b, "bn1.weight")) >= 0)
        cur = rms_norm_2d(c, cur, w);
    int32_t pwl = blk_w(c, st, b, "conv_pwl.weight");
    if (pwl < 0)
        return missing(c);
    cur = conv(c, pwl, gelu(c, cur), 1, 0);
    if ((w = blk_w(c, st, b, "bn2.weight")) >= 0)
        cur = rms_norm_2d(c, cur, w);
    const gg_tensor *a = &c->g->t[inp], *r = &c->g->t[cur];
    if (stride == 1 && a->ne[2] == r->ne[2] && a->ne[0] == r->ne[0])
        cur = cg_add(c, cur, inp);
    return cur;
}

static int32_t inverted_residual(clip_graph *c, int32_t inp, int st, int b, int stride)
{
    gg_graph *g = c->g;
    int32_t cur = inp, w, n;
    if ((w = blk_w(c, st, b, "dw_start.conv.weight")) >= 0) {
        cur = cg_conv_2d_dw(c, w, cur, 1, (int)(g->t[w].ne[0] / 2));
        if ((n = blk_w(c, st, b, "dw_start.bn.weight")) >= 0)
            cur = rms_norm_2d(c, cur, n);
    }
    if ((w = blk_w(c, st, b, "pw_exp.conv.weight")) >= 0) {
        cur = conv(c, w, cur, 1, 0);
        if ((n = blk_w(c, st, b, "pw_exp.bn.weight")) >= 0)
            cur = rms_norm_2d(c, cur, n);
        cur = gelu(c, cur);
    }
    if ((w = blk_w(c, st, b, "dw_mid.conv.weight")) >= 0) {
        int64_t k = g->t[w].ne[0];
        if (stride > 1)
            cur = cg_conv_2d_dw(c, w, pad_same(c, cur, k, stride), stride, 0);
        else
            cur = cg_conv_2d_dw(c, w, cur, stride, (int)(k / 2));
        if ((n = blk_w(c, st, b, "dw_mid.bn.weight")) >= 0)
            cur = rms_norm_2d(c, cur, n);
        cur = gelu(c, cur);
    }
    if ((w = blk_w(c, st, b, "pw_proj.conv.weight")) >= 0) {
        cur = conv(c, w, cur, 1, 0);
        if ((n = blk_w(c, st, b, "pw_proj.bn.weight")) >= 0)
            cur = rms_norm_2d(c, cur, n);
    }
    if ((w = blk_w(c, st, b, "layer_scale.gamma")) >= 0)
        cur = cg_mul(c, cur, w);
    const gg_tensor *a = &g->t[inp], *r = &g->t[cur];
    if (a->ne[0] == r->ne[0] && a->ne[1] == r->ne[1] && a->ne[2] == r->ne[2])
        cur = cg_add(c, cur, inp);
    return cur;
}

/* K or V: downsampled by a strided depthwise convolution, normed, then
 * the 1x1 projection */
static int32_t kv_proj(clip_graph *c, int32_t cur, int st, int b, const char *which)
{
    char name[48];
    snprintf(name, sizeof name, "attn.%s.down_conv.weight", which);
    int32_t dw = blk_w(c, st, b, name), w;
    if (dw >= 0) {
        cur = cg_conv_2d_dw(c, dw, pad_same(c, cur, c->g->t[dw].ne[0], 2), 2, 0);
        snprintf(name, sizeof name, "attn.%s.norm.weight", which);
        if ((w = blk_w(c, st, b, name)) >= 0)
            cur = rms_norm_2d(c, cur, w);
    }
    snprintf(name, sizeof name, "attn.%s.proj.weight", which);
    if ((w = blk_w(c, st, b, name)) < 0)
        return missing(c);
    return conv(c, w, cur, 1, 0);
}

static int32_t mqa(clip_graph *c, int32_t inp, int st, int b)
{
    gg_graph *g = c->g;
    int32_t cur = inp, w;
    if ((w = blk_w(c, st, b, "norm.weight")) >= 0)
        cur = rms_norm_2d(c, cur, w);
    int32_t q = conv(c, blk_w(c, st, b, "attn.query.proj.weight"), cur, 1, 0);
    int32_t k = kv_proj(c, cur, st, b, "key"), v = k < 0 ? -1 : kv_proj(c, cur, st, b, "value");
    int32_t o = blk_w(c, st, b, "attn.output.proj.weight");
    if (v < 0 || o < 0)
        return missing(c);
    const gg_tensor *tc = &g->t[cur];
    int64_t W = tc->ne[0], H = tc->ne[1], B = tc->ne[3], D = g->t[k].ne[2];
    int64_t nh = g->t[q].ne[2] / D, N = W * H, M = g->t[k].ne[0] * g->t[k].ne[1];
    q = cg_reshape(c, cg_reshape(c, q, N, D * nh, B, 1), N, D, nh, B);
    q = gg_cont(g, gg_permute(g, q, 1, 0, 2, 3));
    k = cg_reshape(c, cg_reshape(c, k, M, D, B, 1), M, D, 1, B);
    k = gg_cont(g, gg_permute(g, k, 1, 0, 2, 3));
    v = gg_cont(g, cg_reshape(c, cg_reshape(c, v, M, D, B, 1), M, D, 1, B));
    int32_t scores = gg_soft_max(g, gg_scale(g, gg_mul_mat(g, k, q)), -1, -1);
    int32_t kqv = gg_cont(g, gg_permute(g, gg_mul_mat(g, v, scores), 1, 0, 2, 3));
    kqv = gg_cont(g, cg_reshape(c, cg_reshape(c, kqv, N, D * nh, B, 1), W, H, D * nh, B));
    cur = conv(c, o, kqv, 1, 0);
    const gg_tensor *a = &g->t[inp], *r = &g->t[cur];
    if (a->ne[0] == r->ne[0] && a->ne[2] == r->ne[2]) {
        if ((w = blk_w(c, st, b, "layer_scale.gamma")) >= 0)
            cur = cg_mul(c, cur, w);
        cur = cg_add(c, cur, inp);
    }
    return cur;
}

/* load_tensors' walk: the blocks of each stage, as long as one is found */
static int find_blocks(clip_graph *c, int16_t st_of[MAX_BLOCKS], int16_t b_of[MAX_BLOCKS],
                       int ends[4], int *n_ends)
{
    int n = 0;
    *n_ends = 0;
    for (int st = 0; st < 4; st++) {
        int found = 0;
        for (int b = 0; n < MAX_BLOCKS; b++) {
            static const char *const parts[] = { "conv_exp.weight", "dw_start.conv.weight",
                                                 "pw_exp.conv.weight", "attn.query.proj.weight" };
            bool found_block = false;
            for (size_t k = 0; !found_block && k < sizeof parts / sizeof parts[0]; k++) {
                char name[64];
                snprintf(name, sizeof name, "v.blk.%d.%d.%s", st, b, parts[k]);
                found_block = ggfit_gguf_find_tensor(c->m->g, name) >= 0;
            }
            if (!found_block)
                break;
            st_of[n] = (int16_t)st;
            b_of[n++] = (int16_t)b;
            found++;
        }
        if (found)
            ends[(*n_ends)++] = n - 1;
    }
    return n;
}

static void build_mobilenetv5(clip_graph *c)
{
    gg_graph *g = c->g;
    int16_t st_of[MAX_BLOCKS], b_of[MAX_BLOCKS];
    int ends[4], n_ends, n_blk = find_blocks(c, st_of, b_of, ends, &n_ends);
    int32_t stem = cg_wreq(c, "v.conv_stem.conv.weight"), w;
    if (c->missing)
        return;
    int32_t cur = conv(c, stem, pad_same(c, cg_inp_raw(c, 3), 3, 2), 2, 0);
    if ((w = cg_w(c, "v.conv_stem.conv.bias")) >= 0)
        cur = cg_add(c, cur, w);
    if ((w = cg_w(c, "v.conv_stem.bn.weight")) >= 0)
        cur = rms_norm_2d(c, cur, w);
    cur = gelu(c, cur);
    int32_t feats[MAX_FEATS];
    int n_feats = 0;
    for (int i = 0; i < n_blk && cur >= 0; i++) {
        int st = st_of[i], b = b_of[i], stride = i == 0 ? 2 : 1;
        for (int e = 0; e < n_ends; e++)
            if (i == ends[e] + 1)
                stride = 2;
        if (blk_w(c, st, b, "conv_exp.weight") >= 0)
            cur = edge_residual(c, cur, st, b, stride);
        else if (blk_w(c, st, b, "attn.query.proj.weight") >= 0)
            cur = mqa(c, cur, st, b);
        else
            cur = inverted_residual(c, cur, st, b, stride);
        bool fuse = n_ends >= 4 ? i == ends[2] || i == ends[3] : i == n_blk - 1;
        if (fuse && cur >= 0 && n_feats < MAX_FEATS)
            feats[n_feats++] = cur;
    }
    if (cur < 0 || c->missing)
        return;
    if (n_feats) {   /* the multi-scale fusion adapter */
        int64_t hw = g->t[feats[0]].ne[0], hh = g->t[feats[0]].ne[1];
        for (int i = 0; i < n_feats; i++) {
            const gg_tensor *t = &g->t[feats[i]];
            if (t->ne[0] < hw || t->ne[1] < hh) {
                int64_t s = hw / t->ne[0];
                int64_t ne[4] = { t->ne[0] * s, t->ne[1] * s, t->ne[2], t->ne[3] };
                feats[i] = gg_op_shape(g, GGFIT_OP_UPSCALE, t->type, 4, ne, 1, &feats[i]);
            }
            cur = i ? gg_concat(g, cur, feats[i], 2) : feats[i];
        }
        if ((w = cg_w(c, "v.msfa.ffn.pw_exp.conv.weight")) >= 0) {
            cur = conv(c, w, cur, 1, 0);
            if ((w = cg_w(c, "v.msfa.ffn.pw_exp.bn.weight")) >= 0)
                cur = rms_norm_2d(c, cur, w);
            cur = gelu(c, cur);
        }
        if ((w = cg_w(c, "v.msfa.ffn.pw_proj.conv.weight")) >= 0) {
            cur = conv(c, w, cur, 1, 0);
            if ((w = cg_w(c, "v.msfa.ffn.pw_proj.bn.weight")) >= 0)
                cur = rms_norm_2d(c, cur, w);
        }
        const gg_tensor *t = &g->t[cur];
        if (t->ne[0] > 16) {   /* pooled to the output's 16 x 16 */
            int64_t s = t->ne[0] / 16;
            int64_t ne[4] = { (t->ne[0] - s) / s + 1, (t->ne[1] - s) / s + 1, t->ne[2], t->ne[3] };
            cur = gg_op_shape(g, GGFIT_OP_POOL_2D, GGFIT_TYPE_F32, 4, ne, 1, &cur);
        }
        if ((w = cg_w(c, "v.msfa.norm.weight")) >= 0)
            cur = rms_norm_2d(c, cur, w);
    }
    const gg_tensor *t = &g->t[cur];
    int64_t W = t->ne[0], H = t->ne[1], C = t->ne[2], B = t->ne[3];
    if (C != c->n_embd) {
        c->missing = true;
        return;
    }
    cur = gg_cont(g, gg_permute(g, gg_permute(g, cur, 2, 1, 0, 3), 0, 2, 1, 3));
    cur = gg_cont(g, cg_reshape(c, cur, C, W * H, B, 1));
    cur = gg_rms_norm(g, gg_scale(g, cur));
    cur = cg_mul(c, cur, cg_wreq(c, "mm.soft_emb_norm.weight"));
    int32_t proj = cg_wreq(c, "mm.input_projection.weight");
    if (c->missing)
        return;
    gg_expand(g, gg_rms_norm(g, cg_mm(c, proj, cur)));
}

/* load_hparams GEMMA3NV: no merge (MobileNetV5 sizes its output itself) */
static void hparams_mobilenetv5(clip_model *m)
{
    m->hp.n_merge = 1;
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
}

const clip_type ggfit__clip_gemma3nv = {
    .name = "gemma3nv", .hparams = hparams_mobilenetv5, .build = build_mobilenetv5,
};
