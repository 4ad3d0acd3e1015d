/*
 * mm_deepseekocr.c - tools/mtmd/models/deepseekocr.cpp: DeepSeek-OCR's
 * encoder at its warmup (one 1024 x 1024 tile): a SAM ViT (windowed
 * attention but in layers 2, 5, 8, 11, decomposed relative positions as
 * an attention mask) with its convolutional neck, a CLIP ViT over SAM's
 * 16 x 16 output with [CLS], both side by side into the projection, and
 * a newline after each row.
 */
#include "mtmd/clip.h"
#include "versions/version.h"

static bool is_global(int il)
{
    return il == 2 || il == 5 || il == 8 || il == 11;
}

static int32_t pad3(clip_graph *c, int32_t a, int64_t p0, int64_t p1, int64_t p2)
{
    const gg_tensor *t = &c->g->t[a];
    int64_t ne[4] = { t->ne[0] + p0, t->ne[1] + p1, t->ne[2] + p2, t->ne[3] };
    return gg_op_shape(c->g, GGFIT_OP_PAD, t->type, 4, ne, 1, &a);
}

static int32_t window_partition(clip_graph *c, int32_t x, int64_t win)
{
    gg_graph *g = c->g;
    const gg_tensor *t = &g->t[x];
    int64_t C = t->ne[0], w = t->ne[1], h = t->ne[2], b = t->ne[3];
    int64_t px = (win - w % win) % win, py = (win - h % win) % win;
    int64_t npw = (w + px) / win, nph = (h + py) / win;
    if (px > 0 || py > 0)
        x = pad3(c, x, 0, px, py);
    x = cg_reshape(c, x, C * win, npw, win, nph * b);
    x = gg_cont(g, gg_permute(g, x, 0, 2, 1, 3));
    return cg_reshape(c, x, C, win, win, npw * nph * b);
}

static int32_t window_unpartition(clip_graph *c, int32_t x, int64_t w, int64_t h, int64_t win)
{
    gg_graph *g = c->g;
    int64_t C = g->t[x].ne[0], px = (win - w % win) % win, py = (win - h % win) % win;
    int64_t npw = (w + px) / win, nph = (h + py) / win, b = g->t[x].ne[3] / (npw * nph);
    x = cg_reshape(c, x, C * win, win, npw, nph * b);
    x = gg_cont(g, gg_permute(g, x, 0, 2, 1, 3));
    x = cg_reshape(c, x, C, w + px, h + py, b);
    const gg_tensor *t = &g->t[x];
    int64_t ne[4] = { C, w, h, b };
    uint64_t nb[3] = { t->nb[1], t->nb[2], t->nb[3] };
    return gg_cont(g, gg_view(g, x, 4, ne, nb, 0));
}

/* the relative positions [C, L] for q x k pairs: [C, k, q] */
static int32_t rel_pos(clip_graph *c, int32_t rp, int32_t indices, int64_t q, int64_t k)
{
    gg_graph *g = c->g;
    int64_t dist = 2 * (q > k ? q : k) - 1;
    const gg_tensor *t = &g->t[rp];
    int64_t C = t->ne[0], ne0 = t->ne[0], ne1 = t->ne[1], ne2 = t->ne[2], ne3 = t->ne[3];
    if (dist != ne1) {   /* linearly interpolated to the distances needed */
        int32_t cur = gg_cont(g, gg_permute(g, rp, 1, 0, 2, 3));
        cur = cg_reshape(c, cur, ne1, 1, ne0 * ne2 * ne3, 1);
        int64_t une[4] = { dist, 1, ne0 * ne2 * ne3, 1 };
        cur = gg_op_shape(g, GGFIT_OP_UPSCALE, g->t[cur].type, 4, une, 1, &cur);
        cur = cg_reshape(c, cur, dist, ne0, ne2, ne3);
        rp = gg_cont(g, gg_permute(g, cur, 1, 0, 2, 3));
    }
    int32_t rows = gg_get_rows(g, rp, cg_reshape(c, indices, q * k, 1, 1, 1));
    return cg_reshape(c, rows, C, k, q, 1);
}

static int32_t sam_layer(clip_graph *c, int32_t cur, int il, int32_t local, int32_t global,
                         int64_t win, int64_t nh)
{
    gg_graph *g = c->g;
    int32_t shortcut = cur;
    cur = cg_norm(c, cur, cg_wreq(c, "v.sam.blk.%d.pre_ln.weight", il),
                  cg_wreq(c, "v.sam.blk.%d.pre_ln.bias", il), CG_NORM_LAYER);
    int64_t w0 = g->t[cur].ne[1], h0 = g->t[cur].ne[2], E = g->t[cur].ne[0], dh = E / nh;
    int32_t indices = is_global(il) ? global : local;
    if (!is_global(il))
        cur = window_partition(c, cur, win);
    int64_t W = g->t[cur].ne[1], H = g->t[cur].ne[2], B = g->t[cur].ne[3];
    int32_t qkv_w = cg_wreq(c, "v.sam.blk.%d.attn.qkv.weight", il);
    int32_t rpw = cg_wreq(c, "v.sam.blk.%d.attn.pos_w.weight", il);
    int32_t rph = cg_wreq(c, "v.sam.blk.%d.attn.pos_h.weight", il);
    if (c->missing)
        return -1;
    cur = cg_add(c, gg_mul_mat(g, qkv_w, cur), cg_wreq(c, "v.sam.blk.%d.attn.qkv.bias", il));
    cur = cg_reshape(c, cur, E, 3, W * H, B);
    int32_t qkv[3];
    for (int k = 0; k < 3; k++) {
        const gg_tensor *t = &g->t[cur];
        int64_t ne[3] = { E, W * H, B };
        uint64_t nb[2] = { t->nb[2], t->nb[3] };
        int32_t v = gg_view(g, cur, 3, ne, nb, (uint64_t)k * t->nb[1]);
        qkv[k] = cg_reshape(c, gg_cont(g, v), dh, nh, W * H, B);
    }
    int32_t rw = rel_pos(c, rpw, indices, W, W), rh = rel_pos(c, rph, indices, H, H);
    int32_t qr = gg_permute(g, qkv[0], 0, 2, 1, 3);
    qr = cg_reshape(c, gg_cont(g, qr), dh, W, H, B * nh);
    rw = gg_mul_mat(g, rw, gg_cont(g, gg_permute(g, qr, 0, 2, 1, 3)));
    rw = gg_cont(g, gg_permute(g, rw, 0, 2, 1, 3));
    rw = cg_reshape(c, rw, W, 1, W * H, nh * B);
    int64_t rne[4] = { W, H, W * H, nh * B };
    rw = gg_op_shape(g, GGFIT_OP_REPEAT, g->t[rw].type, 4, rne, 1, &rw);
    rh = cg_reshape(c, gg_mul_mat(g, rh, qr), 1, H, W * H, nh * B);
    int32_t mask = cg_reshape(c, cg_add(c, rw, rh), W * H, W * H, nh, B);
    if (c->flash_attn)
        mask = gg_cpy_type(g, mask, GGFIT_TYPE_F16);
    cur = cg_attn(c, cg_wreq(c, "v.sam.blk.%d.attn.out.weight", il),
                  cg_wreq(c, "v.sam.blk.%d.attn.out.bias", il), qkv[0], qkv[1], qkv[2], mask);
    cur = cg_reshape(c, gg_cont(g, cur), E, W, H, B);
    if (!is_global(il))
        cur = window_unpartition(c, cur, w0, h0, win);
    int32_t ff_in = cg_add(c, cur, shortcut);
    cur = cg_norm(c, ff_in, cg_wreq(c, "v.sam.blk.%d.post_ln.weight", il),
                  cg_wreq(c, "v.sam.blk.%d.post_ln.bias", il), CG_NORM_LAYER);
    cur = cg_ffn(c, cur, cg_wreq(c, "v.sam.blk.%d.mlp.lin1.weight", il),
                 cg_wreq(c, "v.sam.blk.%d.mlp.lin1.bias", il), -1, -1,
                 cg_wreq(c, "v.sam.blk.%d.mlp.lin2.weight", il),
                 cg_wreq(c, "v.sam.blk.%d.mlp.lin2.bias", il), c->hp->ffn_op);
    return cg_add(c, cur, ff_in);
}

/* a neck norm: the channels of [W, H, C] normed */
static int32_t neck_norm(clip_graph *c, int32_t cur, int i)
{
    gg_graph *g = c->g;
    cur = gg_cont(g, gg_permute(g, cur, 1, 2, 0, 3));
    cur = cg_norm(c, cur, cg_wreq(c, "v.sam.neck.%d.weight", i), cg_wreq(c, "v.sam.neck.%d.bias", i),
                  CG_NORM_LAYER);
    return gg_cont(g, gg_permute(g, cur, 2, 0, 1, 3));
}


/* The SAM's ggml_conv_2d: from MTMD_SAM_IM2COL_F32 its im2col stays F32
 * (F16 only for an F16 kernel) */
static int32_t sam_conv(clip_graph *c, int32_t kernel, int32_t inp, int s0, int s1, int p)
{
    if (!ggfit__llama_has(c->llama_build, LLAMA_CHANGE_MTMD_SAM_IM2COL_F32))
        return cg_conv_2d_pad(c, kernel, inp, s0, s1, p, p);
    uint32_t type = c->g->t[kernel].type == GGFIT_TYPE_F16 ? GGFIT_TYPE_F16 : GGFIT_TYPE_F32;
    return cg_conv_2d_typed(c, kernel, inp, s0, s1, p, p, type);
}

static int32_t build_sam(clip_graph *c, int32_t inp)
{
    gg_graph *g = c->g;
    int32_t pw = cg_wreq(c, "v.sam.patch_embd.weight"), pos = cg_wreq(c, "v.sam.pos_embd.weight");
    int32_t nk[4] = { cg_wreq(c, "v.sam.neck.0.weight"), -1, cg_wreq(c, "v.sam.neck.2.weight"), -1 };
    int32_t net2 = cg_wreq(c, "v.sam.net_2.weight"), net3 = cg_wreq(c, "v.sam.net_3.weight");
    int32_t nh = 0, n_sam = 0, win = 0;
    ggfit__clip_u32(c->m, "clip.vision.sam.head_count", &nh);
    ggfit__clip_u32(c->m, "clip.vision.sam.block_count", &n_sam);
    ggfit__clip_u32(c->m, "clip.vision.window_size", &win);
    if (c->missing || nh <= 0 || win <= 0 || n_sam < 0 || n_sam > 4096) {
        c->missing = true;
        return -1;
    }
    int64_t E = g->t[pw].ne[3];
    int32_t cur = sam_conv(c, pw, inp, (int)g->t[pw].ne[0], (int)g->t[pw].ne[1], 0);
    cur = cg_add(c, cur, cg_reshape(c, cg_wreq(c, "v.sam.patch_embd.bias"), 1, 1, E, 1));
    cur = gg_cont(g, gg_permute(g, cur, 1, 2, 0, 3));
    int64_t side = g->t[cur].ne[1];
    int32_t local = cg_input(c, GGFIT_TYPE_I32, win, win, 1, 1, "rel_pos_indices_local");
    int32_t global = cg_input(c, GGFIT_TYPE_I32, side, g->t[cur].ne[2], 1, 1,
                              "rel_pos_indices_global");
    if (g->t[pos].ne[1] != side) {   /* the positions resized to the grid */
        int32_t old = gg_cont(g, gg_permute(g, pos, 2, 0, 1, 3));
        int64_t ne[4] = { side, side, E, 1 };
        pos = gg_op_shape(g, GGFIT_OP_UPSCALE, g->t[old].type, 4, ne, 1, &old);
        pos = gg_cont(g, gg_permute(g, pos, 1, 2, 0, 3));
    }
    cur = cg_add(c, cur, pos);
    for (int il = 0; il < n_sam && cur >= 0; il++)
        cur = sam_layer(c, cur, il, local, global, win, nh);
    if (cur < 0 || c->missing)
        return -1;
    cur = gg_cont(g, gg_permute(g, cur, 2, 0, 1, 3));
    cur = neck_norm(c, sam_conv(c, nk[0], cur, 1, 1, 0), 1);
    cur = neck_norm(c, sam_conv(c, nk[2], cur, 1, 1, 1), 3);
    cur = sam_conv(c, net2, cur, 2, 2, 1);
    cur = sam_conv(c, net3, cur, 2, 2, 1);
    gg_expand(g, cur);
    return cur;
}

static void build_deepseekocr(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t nx = c->nx, ny = c->ny, E = c->n_embd;
    if (ny < nx || ny % nx) {
        c->missing = true;
        return;
    }
    int64_t tiles = ny / nx;
    int32_t inp = cg_reshape(c, cg_inp_raw(c, 3), nx * nx, tiles, 3, 1);
    inp = gg_cont(g, gg_permute(g, inp, 0, 2, 1, 3));
    inp = cg_reshape(c, inp, nx, nx, 3, tiles);
    int32_t sam = build_sam(c, inp);
    int32_t pos = cg_wreq(c, "v.position_embd.weight"), cls = cg_wreq(c, "v.class_embd");
    if (sam < 0 || c->missing)
        return;
    const gg_tensor *st = &g->t[sam];
    int64_t n_patch = st->ne[0] * st->ne[1], n_batch = tiles;
    int32_t x = cg_reshape(c, sam, n_patch, st->ne[2], st->ne[3], 1);
    x = gg_cont(g, gg_permute(g, x, 1, 0, 2, 3));
    int64_t n_pos = g->t[pos].ne[1], tgt = 0, src = 0;
    while ((tgt + 1) * (tgt + 1) <= g->t[x].ne[1])
        tgt++;
    while ((src + 1) * (src + 1) <= n_pos - 1)
        src++;
    if (tgt != src) {   /* the grid's positions resized, [CLS]'s kept */
        const gg_tensor *pt = &g->t[pos];
        int64_t ne[2] = { pt->ne[0], src * src }, ne1[2] = { pt->ne[0], 1 };
        uint64_t nb[1] = { pt->nb[1] };
        int32_t old = gg_view(g, pos, 2, ne, nb, 0);
        int32_t cls_tok = gg_view(g, pos, 2, ne1, nb, (uint64_t)(src * src) * nb[0]);
        int64_t une[4] = { tgt, tgt, g->t[pos].ne[0], 1 };
        pos = gg_op_shape(g, GGFIT_OP_UPSCALE, g->t[old].type, 4, une, 1, &old);
        pos = gg_concat(g, cg_reshape(c, pos, E, tgt * tgt, 1, 1), cls_tok, 1);
        n_pos = tgt * tgt + 1;
    }
    int64_t cne[4] = { E, 1, n_batch, 1 };
    int32_t cls_b = gg_op_shape(g, GGFIT_OP_REPEAT, g->t[cls].type, 4, cne, 1, &cls);
    x = gg_concat(g, cls_b, x, 1);
    int64_t ane[1] = { n_pos };
    int32_t positions = gg_op_shape(g, GGFIT_OP_ARANGE, GGFIT_TYPE_F32, 1, ane, 0, NULL);
    positions = gg_cpy_type(g, positions, GGFIT_TYPE_I32);
    int32_t clip = cg_vit(c, x, n_pos, CG_NORM_LAYER, CLIP_FFN_GELU_QUICK,
                          gg_get_rows(g, pos, positions));
    if (clip < 0)
        return;
    gg_expand(g, clip);
    sam = gg_cont(g, gg_permute(g, sam, 1, 2, 0, 3));
    sam = cg_reshape(c, sam, g->t[sam].ne[0], n_patch, n_batch, 1);
    const gg_tensor *ct = &g->t[clip];
    int64_t vne[3] = { E, n_patch, n_batch };
    uint64_t vnb[2] = { ct->nb[1], ct->nb[2] };
    clip = gg_view(g, clip, 3, vne, vnb, ct->nb[1]);
    int32_t cur = gg_concat(g, clip, sam, 0);
    int32_t fc = cg_wreq(c, "mm.model.fc.weight"), nl = cg_wreq(c, "v.image_newline");
    if (c->missing)
        return;
    cur = cg_add(c, gg_mul_mat(g, fc, cur), cg_wreq(c, "mm.model.fc.bias"));
    /* a row of tiles: each grid row across the tiles, then a newline */
    int64_t grid = 0, n_dim = g->t[cur].ne[0];
    while ((grid + 1) * (grid + 1) <= n_patch)
        grid++;
    cur = cg_reshape(c, cur, n_dim * grid, grid, tiles, 1);
    cur = gg_cont(g, gg_permute(g, cur, 0, 2, 1, 3));
    cur = cg_reshape(c, cur, n_dim, grid * tiles, grid, 1);
    int64_t nne[4] = { n_dim, 1, grid, 1 };
    nl = gg_op_shape(g, GGFIT_OP_REPEAT, g->t[nl].type, 4, nne, 1, &nl);
    cur = gg_concat(g, cur, nl, 1);
    cur = cg_reshape(c, cur, n_dim, (grid * tiles + 1) * grid, 1, 1);
    if (!c->missing)
        gg_expand(g, cur);
}

/* load_hparams DEEPSEEKOCR: 16-pixel patches, a 1024-pixel warmup */
static void hparams_deepseekocr(clip_model *m)
{
    m->hp.patch_size = 16;
    m->hp.image_size = 1024;
    m->hp.warmup_image_size = 1024;
}

const clip_type ggfit__clip_deepseekocr = {
    .name = "deepseekocr", .hparams = hparams_deepseekocr, .build = build_deepseekocr,
};
