/*
 * mm_gemma4a.c - tools/mtmd/models/gemma4a.cpp and gemma4ua.cpp: Gemma 4's
 * audio encoders. gemma4a, a Conformer: two strided 2D convolutions over
 * the mel frames, then per block a half-step FFN, self-attention over
 * chunks of 12 frames with 12 of left context and relative positions
 * (Transformer-XL's shift), a light depthwise convolution (ggml_ssm_conv)
 * and a second half-step FFN; every matmul on a weight clamped
 * (Gemma4ClippableLinear). gemma4ua: no encoder, the raw 640-sample
 * frames projected.
 */
#include "mtmd/clip.h"

enum { CHUNK = 12, PAST = 12, CTX = CHUNK + PAST, RPE = PAST + 1 };

/* as mm_gemma4.c's: load_tensors clamps every weight */
static int32_t clamped_mm(clip_graph *c, int32_t w, int32_t x)
{
    gg_graph *g = c->g;
    if (w < 0)
        return gg_mul_mat(g, w, x);
    return gg_clamp(g, gg_mul_mat(g, w, gg_clamp(g, x)));
}

static int32_t pad(clip_graph *c, int32_t a, int64_t p0, int64_t p1, int64_t p2)
{
    const gg_tensor *t = &c->g->t[a];
    int64_t ne[4] = { t->ne[0] + p0, t->ne[1] + p1, t->ne[2] + p2, t->ne[3] };
    return gg_op_shape(c->g, GGFIT_OP_PAD, t->type, 4, ne, 1, &a);
}

static int32_t roll(clip_graph *c, int32_t a)
{
    const gg_tensor *t = &c->g->t[a];
    return gg_op_shape(c->g, GGFIT_OP_ROLL, t->type, 4, t->ne, 1, &a);
}

static int32_t unary(clip_graph *c, int32_t a)
{
    return gg_unary_op(c->g, GGFIT_OP_UNARY, a);
}

/* The subsampling: conv, its channel norm, relu, twice; [ch*freq, time]. */
static int32_t subsample(clip_graph *c)
{
    gg_graph *g = c->g;
    int32_t cur = gg_cont(g, gg_transpose(g, cg_inp_raw(c, 1)));
    for (int i = 0; i < 2; i++) {
        int32_t w = cg_wreq(c, "a.conv1d.%d.weight", i);
        if (c->missing)
            return -1;
        cur = cg_conv_2d_pad(c, w, cur, 2, 2, 1, 1);
        int32_t b = cg_w(c, "a.conv1d.%d.bias", i), n = cg_w(c, "a.conv1d.%d.norm.weight", i);
        if (b >= 0)
            cur = cg_add(c, cur, b);
        if (n >= 0) {
            cur = gg_cont(g, gg_permute(g, cur, 1, 2, 0, 3));
            cur = cg_mul(c, gg_norm(g, cur), n);
            cur = gg_cont(g, gg_permute(g, cur, 2, 0, 1, 3));
        }
        cur = unary(c, cur);
    }
    cur = gg_cont(g, gg_permute(g, cur, 1, 2, 0, 3));
    const gg_tensor *t = &g->t[cur];
    cur = cg_reshape(c, cur, t->ne[0] * t->ne[1], t->ne[2], 1, 1);
    int32_t w = cg_w(c, "a.input_projection.weight");
    if (w >= 0) {
        cur = cg_mm(c, w, cur);
        int32_t b = cg_w(c, "a.input_projection.bias");
        if (b >= 0)
            cur = cg_add(c, cur, b);
    }
    return cur;
}

/* A half-step FFN (suffix "" or "_1"), added at half weight. */
static int32_t half_ffn(clip_graph *c, int32_t res, int il, const char *sfx)
{
    gg_graph *g = c->g;
    int32_t norm = cg_w(c, "a.blk.%d.ffn_norm%s.weight", il, sfx);
    int32_t up = cg_w(c, "a.blk.%d.ffn_up%s.weight", il, sfx);
    int32_t down = cg_w(c, "a.blk.%d.ffn_down%s.weight", il, sfx);
    if (norm < 0 || up < 0 || down < 0)
        return res;
    int32_t cur = cg_norm(c, res, norm, -1, CG_NORM_RMS);
    cur = cg_ffn(c, cur, up, -1, -1, -1, down, -1, CLIP_FFN_SILU);
    int32_t post = cg_w(c, "a.blk.%d.ffn_post_norm%s.weight", il, sfx);
    if (post >= 0)
        cur = cg_norm(c, cur, post, -1, CG_NORM_RMS);
    return cg_add(c, res, gg_scale(g, cur));
}

/* K or V as overlapping windows of CTX frames, one every CHUNK. */
static int32_t extract_blocks(clip_graph *c, int32_t t, int64_t n_pos, int64_t nb_blk)
{
    gg_graph *g = c->g;
    t = gg_cont(g, roll(c, pad(c, t, 0, 0, CTX * nb_blk - n_pos)));
    const gg_tensor *x = &g->t[t];
    int64_t ne[4] = { c->d_head, c->n_head, CTX, nb_blk };
    uint64_t nb[3] = { x->nb[1], x->nb[2], CHUNK * x->nb[2] };
    return gg_cont(g, gg_view(g, t, 4, ne, nb, 0));
}

static int32_t attention(clip_graph *c, int32_t res, int il, int32_t pos_emb, int32_t mask,
                         int64_t n_pos)
{
    gg_graph *g = c->g;
    int64_t D = c->d_head, H = c->n_head, B = (n_pos + CHUNK - 1) / CHUNK, Np = B * CHUNK;
    int32_t q = cg_w(c, "a.blk.%d.attn_q.weight", il), k = cg_w(c, "a.blk.%d.attn_k.weight", il);
    int32_t v = cg_w(c, "a.blk.%d.attn_v.weight", il), o = cg_w(c, "a.blk.%d.attn_out.weight", il);
    if (q < 0 || k < 0 || v < 0 || o < 0)
        return res;
    int32_t nw = cg_w(c, "a.blk.%d.attn_pre_norm.weight", il);
    if (nw < 0)
        nw = cg_w(c, "a.blk.%d.ln1.weight", il);
    int32_t cur = nw >= 0 ? cg_norm(c, res, nw, -1, CG_NORM_RMS) : res;
    int32_t Q = cg_reshape(c, cg_mm(c, q, cur), D, H, n_pos, 1);
    int32_t K = cg_reshape(c, cg_mm(c, k, cur), D, H, n_pos, 1);
    int32_t V = cg_reshape(c, cg_mm(c, v, cur), D, H, n_pos, 1);
    int32_t w;
    Q = gg_scale(g, Q);
    if ((w = cg_w(c, "a.blk.%d.per_dim_scale.weight", il)) >= 0)
        Q = cg_mul(c, Q, cg_reshape(c, w, D, 1, 1, 1));
    K = gg_scale(g, K);
    if ((w = cg_w(c, "a.blk.%d.per_dim_k_scale.weight", il)) >= 0)
        K = cg_mul(c, K, cg_reshape(c, w, D, 1, 1, 1));
    Q = cg_reshape(c, pad(c, Q, 0, 0, Np - n_pos), D, H, CHUNK, B);
    Q = gg_cont(g, gg_permute(g, Q, 0, 3, 1, 2));
    int32_t Kb = gg_cont(g, gg_permute(g, extract_blocks(c, K, n_pos, B), 0, 3, 1, 2));
    int32_t Vb = gg_cont(g, gg_permute(g, extract_blocks(c, V, n_pos, B), 1, 3, 0, 2));
    int32_t ac = gg_mul_mat(g, Kb, Q);
    if ((w = cg_w(c, "a.blk.%d.attn_k_rel.weight", il)) >= 0) {
        int32_t p = cg_reshape(c, gg_mul_mat(g, w, pos_emb), D, H, RPE, 1);
        p = gg_cont(g, gg_permute(g, p, 0, 2, 1, 3));
        int32_t bd = gg_mul_mat(g, p, cg_reshape(c, Q, D, CHUNK * B, H, 1));
        bd = cg_reshape(c, bd, RPE, CHUNK, B, H);
        /* the blocked relative shift */
        bd = pad(c, bd, CTX + 1 - RPE, 0, 0);
        bd = cg_reshape(c, bd, (CTX + 1) * CHUNK, B, H, 1);
        const gg_tensor *t = &g->t[bd];
        int64_t ne[3] = { CHUNK * CTX, B, H };
        uint64_t nb[2] = { t->nb[1], t->nb[2] };
        bd = gg_cont(g, gg_view(g, bd, 3, ne, nb, 0));
        ac = cg_add(c, ac, cg_reshape(c, bd, CTX, CHUNK, B, H));
    }
    int32_t scores = gg_scale(g, unary(c, gg_scale(g, ac)));   /* softcap */
    scores = gg_soft_max(g, cg_add(c, scores, mask), -1, -1);
    int32_t x = gg_mul_mat(g, Vb, scores);
    x = gg_cont(g, gg_permute(g, x, 0, 2, 3, 1));
    x = cg_cont(c, x, D * H, CHUNK * B, 1, 1);
    if (Np > n_pos) {
        int64_t ne[2] = { D * H, n_pos };
        uint64_t nb[1] = { g->t[x].nb[1] };
        x = gg_cont(g, gg_view(g, x, 2, ne, nb, 0));
    }
    x = cg_mm(c, o, x);
    if ((w = cg_w(c, "a.blk.%d.attn_out.bias", il)) >= 0)
        x = cg_add(c, x, w);
    if ((w = cg_w(c, "a.blk.%d.attn_post_norm.weight", il)) >= 0)
        x = cg_norm(c, x, w, -1, CG_NORM_RMS);
    return cg_add(c, res, x);
}

/* The convolution module (the file's conv_norm and norm_conv are swapped,
 * as load_tensors reads them). */
static int32_t conv_module(clip_graph *c, int32_t res, int il)
{
    gg_graph *g = c->g;
    int32_t n1 = cg_w(c, "a.blk.%d.conv_norm.weight", il);
    int32_t pw1 = cg_w(c, "a.blk.%d.conv_pw1.weight", il);
    int32_t dw = cg_w(c, "a.blk.%d.conv_dw.weight", il);
    int32_t pw2 = cg_w(c, "a.blk.%d.conv_pw2.weight", il);
    if (n1 < 0 || pw1 < 0 || dw < 0 || pw2 < 0)
        return res;
    int32_t x = cg_mm(c, pw1, cg_norm(c, res, n1, -1, CG_NORM_RMS));
    const gg_tensor *t = &g->t[x];
    int64_t ne[2] = { t->ne[0] / 2, t->ne[1] };
    uint64_t nb[1] = { t->nb[1] }, half = (uint64_t)(t->ne[0] / 2) * t->nb[0];
    int32_t gate = unary(c, gg_cont(g, gg_view(g, x, 2, ne, nb, half)));
    x = cg_mul(c, gg_view(g, x, 2, ne, nb, 0), gate);
    x = gg_cont(g, gg_transpose(g, x));
    x = gg_ssm_conv(g, roll(c, pad(c, x, 4, 0, 0)), dw);
    int32_t w;
    if ((w = cg_w(c, "a.blk.%d.conv_dw.bias", il)) >= 0)
        x = cg_add(c, x, w);
    if ((w = cg_w(c, "a.blk.%d.norm_conv.weight", il)) >= 0)
        x = cg_mul(c, gg_rms_norm(g, x), w);
    x = cg_mm(c, pw2, unary(c, x));
    return cg_add(c, res, x);
}

static void build_gemma4a(clip_graph *c)
{
    gg_graph *g = c->g;
    c->mm = clamped_mm;
    int32_t cur = subsample(c);
    if (cur < 0)
        return;
    int64_t n_pos = g->t[cur].ne[1], B = (n_pos + CHUNK - 1) / CHUNK;
    int32_t pos_emb = cg_input(c, GGFIT_TYPE_F32, c->n_head * c->d_head, RPE, 1, 1, "pos_emb");
    int32_t mask = cg_input(c, GGFIT_TYPE_F32, CTX, CHUNK, B, 1, "kq_mask");
    for (int il = 0; il < c->n_layer; il++) {
        int32_t res = half_ffn(c, cur, il, "");
        res = attention(c, res, il, pos_emb, mask, n_pos);
        res = conv_module(c, res, il);
        res = half_ffn(c, res, il, "_1");
        int32_t ln2 = cg_w(c, "a.blk.%d.ln2.weight", il);
        cur = ln2 >= 0 ? cg_norm(c, res, ln2, -1, CG_NORM_RMS) : res;
    }
    int32_t w = cg_w(c, "a.pre_encode.out.weight");
    if (w >= 0) {
        cur = cg_mm(c, w, cur);
        int32_t b = cg_w(c, "a.pre_encode.out.bias");
        if (b >= 0)
            cur = cg_add(c, cur, b);
    }
    cur = gg_rms_norm(g, cur);
    if ((w = cg_w(c, "mm.a.soft_emb_norm.weight")) >= 0)
        cur = cg_mul(c, cur, w);
    if ((w = cg_w(c, "mm.a.input_projection.weight")) >= 0)
        cur = cg_mm(c, w, cur);
    gg_expand(g, cur);
}

static void build_gemma4ua(clip_graph *c)
{
    gg_graph *g = c->g;
    int32_t cur = gg_cont(g, gg_permute(g, cg_inp_raw(c, 1), 1, 0, 2, 3));
    int32_t proj = cg_wreq(c, "mm.a.input_projection.weight");
    if (!c->missing)
        gg_expand(g, gg_mul_mat(g, proj, gg_rms_norm(g, cur)));
}

/* load_hparams GEMMA4UA: raw 16 kHz samples in frames of 640 */
static void hparams_gemma4ua(clip_model *m)
{
    m->hp.n_mel_bins = 640;
}

const clip_type ggfit__clip_gemma4a = { .name = "gemma4a", .build = build_gemma4a };
const clip_type ggfit__clip_gemma4ua = {
    .name = "gemma4ua", .hparams = hparams_gemma4ua, .build = build_gemma4ua,
};
