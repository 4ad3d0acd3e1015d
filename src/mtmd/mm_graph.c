/*
 * mm_graph.c - clip_graph's shared blocks (tools/mtmd/clip.cpp: build_inp,
 * build_norm, build_ffn, build_attn, build_vit), in ggfit's graph ops: the
 * same tensors in the same expansion order, so that the scheduler and the
 * allocator see llama.cpp's warmup graph.
 */
#include <stdarg.h>
#include <stdio.h>

#include "mtmd/clip.h"
#include "versions/version.h"

/* An empty tensor (a dimension of 0) is no weight a graph can use. */
static bool empty(const ggfit_tensor_info *t)
{
    for (uint32_t d = 0; d < t->n_dims; d++)
        if (t->ne[d] == 0)
            return true;
    return false;
}

static int32_t weight(clip_graph *c, bool required, const char *fmt, va_list ap)
{
    char name[GG_NAME];
    vsnprintf(name, sizeof name, fmt, ap);
    int64_t i = ggfit_gguf_find_tensor(c->m->g, name);
    if (i < 0 || empty(ggfit_gguf_tensor(c->m->g, (uint64_t)i))) {
        if (!required)
            return -1;
        /* Missing makes the compute an estimate; until the type looks at
         * it, a required weight reads as a stand-in (one element), so that
         * the ops built on it are never given -1 (a block_count past the
         * file's blocks asks for one in every layer). */
        c->missing = true;
        if (c->stand_in < 0)
            c->stand_in = gg_new_1d(c->g, GGFIT_TYPE_F32, 1);
        return c->stand_in;
    }
    if (c->wmap[i] < 0) {
        const ggfit_tensor_info *t = ggfit_gguf_tensor(c->m->g, (uint64_t)i);
        c->wmap[i] = gg_memory(c->g, t, name, t->type, (int)(t->n_dims ? t->n_dims : 1), t->ne,
                               c->wbuft, true);
    }
    return c->wmap[i];
}

int32_t cg_w(clip_graph *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int32_t t = weight(c, false, fmt, ap);
    va_end(ap);
    return t;
}

int32_t cg_wreq(clip_graph *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int32_t t = weight(c, true, fmt, ap);
    va_end(ap);
    return t;
}

int32_t cg_mm(clip_graph *c, int32_t w, int32_t x)
{
    return c->mm ? c->mm(c, w, x) : gg_mul_mat(c->g, w, x);
}

int32_t cg_add(clip_graph *c, int32_t a, int32_t b)
{
    return gg_binary(c->g, GGFIT_OP_ADD, a, b);
}

int32_t cg_mul(clip_graph *c, int32_t a, int32_t b)
{
    return gg_binary(c->g, GGFIT_OP_MUL, a, b);
}

int32_t cg_reshape(clip_graph *c, int32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return gg_reshape(c->g, a, 4, ne);
}

int32_t cg_cont(clip_graph *c, int32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return gg_cont_shape(c->g, a, 4, ne);
}

int32_t cg_input(clip_graph *c, uint32_t type, int64_t ne0, int64_t ne1, int64_t ne2,
                 int64_t ne3, const char *name)
{
    return gg_input(c->g, gg_new_4d(c->g, type, ne0, ne1, ne2, ne3), name);
}

/* ggml_conv_2d: im2col into F16 rows (F32 for a BF16 kernel), one matmul
 * with the kernel as [KW*KH*IC, OC], then [OW, OH, OC, N]. No dilation
 * (the only convolutions the encoders here make). */
int32_t cg_conv_2d(clip_graph *c, int32_t kernel, int32_t inp, int s0, int s1)
{
    return cg_conv_2d_pad(c, kernel, inp, s0, s1, 0, 0);
}

int32_t cg_conv_2d_pad(clip_graph *c, int32_t kernel, int32_t inp, int s0, int s1, int p0,
                       int p1)
{
    /* ggml_conv_2d's im2col: F32 for a BF16 kernel, else F16 */
    uint32_t type = c->g->t[kernel].type == GGFIT_TYPE_BF16 ? GGFIT_TYPE_F32 : GGFIT_TYPE_F16;
    return cg_conv_2d_typed(c, kernel, inp, s0, s1, p0, p1, type);
}

int32_t cg_conv_2d_typed(clip_graph *c, int32_t kernel, int32_t inp, int s0, int s1, int p0,
                         int p1, uint32_t type)
{
    gg_graph *g = c->g;
    const gg_tensor *a = &g->t[kernel], *b = &g->t[inp];
    int64_t ow = (b->ne[0] + 2 * p0 - a->ne[0]) / s0 + 1;
    int64_t oh = (b->ne[1] + 2 * p1 - a->ne[1]) / s1 + 1;
    int64_t ne[4] = { a->ne[0] * a->ne[1] * a->ne[2], ow, oh, b->ne[3] };
    int64_t oc = a->ne[3], kk = ne[0];
    int32_t src[2] = { kernel, inp };
    int32_t im2col = gg_op_shape(g, GGFIT_OP_IM2COL, type, 4, ne, 2, src);
    int32_t r = gg_mul_mat(g, cg_reshape(c, im2col, kk, oh * ow * ne[3], 1, 1),
                           cg_reshape(c, kernel, kk, oc, 1, 1));
    r = cg_reshape(c, r, ow, oh, ne[3], oc);
    return gg_cont(g, gg_permute(g, r, 0, 1, 3, 2));
}

/* ggml_conv_2d_dw: each channel by its own KW x KH kernel (an im2col
 * per channel, one batched matmul), [OW, OH, C, N] */
int32_t cg_conv_2d_dw(clip_graph *c, int32_t kernel, int32_t inp, int s, int p)
{
    gg_graph *g = c->g;
    const gg_tensor *a = &g->t[kernel], *b = &g->t[inp];
    int64_t kw = a->ne[0], kh = a->ne[1], C = b->ne[2], N = b->ne[3];
    int64_t ow = (b->ne[0] + 2 * p - kw) / s + 1, oh = (b->ne[1] + 2 * p - kh) / s + 1;
    int32_t na = cg_reshape(c, kernel, kw, kh, 1, a->ne[2] * a->ne[3]);
    int32_t nb = cg_reshape(c, inp, b->ne[0], b->ne[1], 1, C * N);
    int64_t ne[4] = { kw * kh, ow, oh, C * N };
    int32_t src[2] = { na, nb };
    uint32_t type = a->type == GGFIT_TYPE_BF16 ? GGFIT_TYPE_F32 : GGFIT_TYPE_F16;
    int32_t im2col = gg_op_shape(g, GGFIT_OP_IM2COL, type, 4, ne, 2, src);
    int32_t rb = cg_reshape(c, im2col, kw * kh, oh * ow, C, N);
    na = cg_reshape(c, na, kw * kh, 1, a->ne[2] * a->ne[3], 1);
    return cg_reshape(c, gg_mul_mat(g, na, rb), ow, oh, C, N);
}

int32_t cg_inp_raw(clip_graph *c, int channels)
{
    return cg_input(c, GGFIT_TYPE_F32, c->nx, c->ny, channels, 1, "inp_raw");
}

/* build_inp: the patches as [n_embd, n_patches] */
int32_t cg_inp(clip_graph *c)
{
    int32_t inp = cg_conv_2d(c, cg_wreq(c, "v.patch_embd.weight"), cg_inp_raw(c, 3),
                             (int)c->patch_size, (int)c->patch_size);
    if (c->missing)
        return -1;
    inp = cg_reshape(c, inp, c->n_patches, c->n_embd, 1, 1);
    inp = gg_cont(c->g, gg_transpose(c->g, inp));
    int32_t bias = cg_w(c, "v.patch_embd.bias");
    return bias >= 0 ? cg_add(c, inp, bias) : inp;
}

int32_t cg_norm(clip_graph *c, int32_t cur, int32_t w, int32_t b, int type)
{
    cur = type == CG_NORM_RMS ? gg_rms_norm(c->g, cur) : gg_norm(c->g, cur);
    if (w >= 0)
        cur = cg_mul(c, cur, w);
    if (b >= 0)
        cur = cg_add(c, cur, b);
    return cur;
}

/* build_ffn: the parallel FFN (a gate: the op's GLU), or up, op, down. */
int32_t cg_ffn(clip_graph *c, int32_t cur, int32_t up, int32_t up_b, int32_t gate,
               int32_t gate_b, int32_t down, int32_t down_b, int op)
{
    gg_graph *g = c->g;
    int32_t tmp = up >= 0 ? cg_mm(c, up, cur) : cur;
    if (up_b >= 0)
        tmp = cg_add(c, tmp, up_b);
    if (gate >= 0) {
        cur = cg_mm(c, gate, cur);
        if (gate_b >= 0)
            cur = cg_add(c, cur, gate_b);
        cur = gg_glu_split(g, cur, tmp);
    } else {
        cur = gg_unary_op(g, GGFIT_OP_UNARY, tmp);
    }
    (void)op;   /* every activation is one unary (or GLU) op of the same shape */
    if (down >= 0)
        cur = cg_mm(c, down, cur);
    if (down_b >= 0)
        cur = cg_add(c, cur, down_b);
    return cur;
}

/* build_attn: q, k, v as [d_head, n_head, n_pos]; the result [n_embd, n_pos] */
int32_t cg_attn(clip_graph *c, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                int32_t mask)
{
    gg_graph *g = c->g;
    /* ggml_build_forward_order: the three are added first, without the
     * compute flag, so that they are not reordered */
    gg_expand_no_compute(g, q);
    gg_expand_no_compute(g, k);
    gg_expand_no_compute(g, v);
    q = gg_permute(g, q, 0, 2, 1, 3);
    k = gg_permute(g, k, 0, 2, 1, 3);
    int32_t cur;
    if (c->flash_attn) {
        v = gg_permute(g, v, 0, 2, 1, 3);
        k = gg_cpy_type(g, k, GGFIT_TYPE_F16);
        v = gg_cpy_type(g, v, GGFIT_TYPE_F16);
        if (mask >= 0)
            mask = gg_cpy_type(g, mask, GGFIT_TYPE_F16);
        cur = gg_flash_attn(g, q, k, v, mask, -1);
        const gg_tensor *t = &g->t[cur];
        cur = cg_reshape(c, cur, t->ne[0] * t->ne[1], t->ne[2] * t->ne[3], 1, 1);
    } else {
        v = gg_cont(g, gg_permute(g, v, 1, 2, 0, 3));
        int32_t kq = gg_soft_max(g, gg_mul_mat(g, k, q), mask, -1);
        cur = gg_permute(g, gg_mul_mat(g, v, kq), 0, 2, 1, 3);
        const gg_tensor *t = &g->t[cur];
        cur = cg_cont(c, cur, t->ne[0] * t->ne[1], t->ne[2] * t->ne[3], 1, 1);
    }
    if (wo >= 0)
        cur = cg_mm(c, wo, cur);
    if (wo_b >= 0)
        cur = cg_add(c, cur, wo_b);
    return cur;
}

/* build_vit without its options (no masks, no layer callback, the post
 * norm kept): separate or fused Q/K/V, their norms, layer scales. */
int32_t cg_vit(clip_graph *c, int32_t inp, int64_t n_pos, int norm, int ffn,
               int32_t learned_pos)
{
    gg_graph *g = c->g;
    int64_t B = g->t[inp].ne[2], E = c->n_embd, D = c->d_head;
    if (learned_pos >= 0)
        inp = cg_add(c, inp, learned_pos);
    inp = cg_reshape(c, inp, E, n_pos * B, 1, 1);
    int32_t inpL = inp;
    int32_t pre = cg_w(c, "%s.pre_ln.weight", c->pfx);
    if (pre >= 0)
        inpL = cg_norm(c, inpL, pre, cg_w(c, "%s.pre_ln.bias", c->pfx), norm);
    for (int il = 0; il < c->n_layer; il++) {
        int32_t cur = cg_norm(c, inpL, cg_w(c, "%s.blk.%d.ln1.weight", c->pfx, il),
                              cg_w(c, "%s.blk.%d.ln1.bias", c->pfx, il), norm);
        int32_t Q, K, V, qkv = cg_w(c, "%s.blk.%d.attn_qkv.weight", c->pfx, il);
        int32_t qn = cg_w(c, "%s.blk.%d.attn_q_norm.weight", c->pfx, il);
        int32_t kn = cg_w(c, "%s.blk.%d.attn_k_norm.weight", c->pfx, il);
        if (qkv >= 0) {
            cur = cg_mm(c, qkv, cur);
            int32_t qb = cg_w(c, "%s.blk.%d.attn_qkv.bias", c->pfx, il);
            if (qb >= 0)
                cur = cg_add(c, cur, qb);
            const gg_tensor *t = &g->t[cur];
            int64_t ne[4] = { D, c->n_head, n_pos, B };
            uint64_t nb[3] = { (uint64_t)D * 4, t->nb[1], t->nb[1] * (uint64_t)n_pos };
            Q = gg_view(g, cur, 4, ne, nb, 0);
            K = gg_view(g, cur, 4, ne, nb, (uint64_t)(c->n_head * D) * 4);
            V = gg_view(g, cur, 4, ne, nb, (uint64_t)(2 * c->n_head * D) * 4);
            if (qn >= 0)
                Q = cg_norm(c, Q, qn, -1, norm);
            if (kn >= 0)
                K = cg_norm(c, K, kn, -1, norm);
        } else {
            int32_t b;
            Q = cg_mm(c, cg_wreq(c, "%s.blk.%d.attn_q.weight", c->pfx, il), cur);
            if ((b = cg_w(c, "%s.blk.%d.attn_q.bias", c->pfx, il)) >= 0)
                Q = cg_add(c, Q, b);
            K = cg_mm(c, cg_wreq(c, "%s.blk.%d.attn_k.weight", c->pfx, il), cur);
            if ((b = cg_w(c, "%s.blk.%d.attn_k.bias", c->pfx, il)) >= 0)
                K = cg_add(c, K, b);
            V = cg_mm(c, cg_wreq(c, "%s.blk.%d.attn_v.weight", c->pfx, il), cur);
            if ((b = cg_w(c, "%s.blk.%d.attn_v.bias", c->pfx, il)) >= 0)
                V = cg_add(c, V, b);
            bool per_head = qn >= 0 && g->t[qn].ne[0] == D;
            if (!per_head && qn >= 0)
                Q = cg_norm(c, Q, qn, -1, norm);
            if (!per_head && kn >= 0)
                K = cg_norm(c, K, kn, -1, norm);
            Q = cg_reshape(c, Q, D, c->n_head, n_pos, B);
            K = cg_reshape(c, K, D, c->n_head_kv, n_pos, B);
            V = cg_reshape(c, V, D, c->n_head_kv, n_pos, B);
            if (per_head && qn >= 0)
                Q = cg_norm(c, Q, qn, -1, norm);
            if (per_head && kn >= 0)
                K = cg_norm(c, K, kn, -1, norm);
        }
        if (c->missing)
            return -1;
        if (c->add_pos) {
            Q = c->add_pos(c, Q);
            K = c->add_pos(c, K);
        }
        if (c->v_norm)
            V = gg_rms_norm(g, V);
        cur = cg_attn(c, cg_wreq(c, "%s.blk.%d.attn_out.weight", c->pfx, il),
                      cg_w(c, "%s.blk.%d.attn_out.bias", c->pfx, il), Q, K, V, -1);
        int32_t w;
        if ((w = cg_w(c, "%s.blk.%d.ls1.weight", c->pfx, il)) >= 0)
            cur = cg_mul(c, cur, w);
        if ((w = cg_w(c, "%s.blk.%d.attn_post_norm.weight", c->pfx, il)) >= 0)
            cur = cg_norm(c, cur, w, -1, norm);
        cur = cg_add(c, cur, inpL);
        inpL = cur;
        cur = cg_norm(c, cur, cg_w(c, "%s.blk.%d.ln2.weight", c->pfx, il),
                      cg_w(c, "%s.blk.%d.ln2.bias", c->pfx, il), norm);
        cur = cg_ffn(c, cur, cg_wreq(c, "%s.blk.%d.ffn_up.weight", c->pfx, il),
                     cg_w(c, "%s.blk.%d.ffn_up.bias", c->pfx, il), cg_w(c, "%s.blk.%d.ffn_gate.weight", c->pfx, il),
                     cg_w(c, "%s.blk.%d.ffn_gate.bias", c->pfx, il),
                     cg_wreq(c, "%s.blk.%d.ffn_down.weight", c->pfx, il),
                     cg_w(c, "%s.blk.%d.ffn_down.bias", c->pfx, il), ffn);
        if ((w = cg_w(c, "%s.blk.%d.ffn_post_norm.weight", c->pfx, il)) >= 0)
            cur = cg_norm(c, cur, w, -1, norm);
        if ((w = cg_w(c, "%s.blk.%d.ls2.weight", c->pfx, il)) >= 0)
            cur = cg_mul(c, cur, w);
        cur = cg_add(c, inpL, cur);
        if ((w = cg_w(c, "%s.blk.%d.out_scale.weight", c->pfx, il)) >= 0)
            cur = cg_mul(c, cur, w);
        inpL = cur;
    }
    if (c->avgpool) {   /* clip_model::audio_has_avgpool: frames pooled by 2 */
        int32_t cur = gg_cont(g, gg_transpose(g, inpL));
        const gg_tensor *t = &g->t[cur];
        int64_t ne[4] = { (t->ne[0] - 2) / 2 + 1, t->ne[1], t->ne[2], t->ne[3] };
        cur = gg_op_shape(g, GGFIT_OP_POOL_1D, GGFIT_TYPE_F32, 4, ne, 1, &cur);
        inpL = gg_cont(g, gg_transpose(g, cur));
    }
    int32_t post = cg_w(c, "%s.post_ln.weight", c->pfx);
    if (post >= 0)
        inpL = cg_norm(c, inpL, post, cg_w(c, "%s.post_ln.bias", c->pfx), norm);
    return cg_reshape(c, inpL, E, g->t[inpL].ne[1] / B, B, 1);
}

int32_t cg_rope_2d(clip_graph *c, int32_t cur, int32_t pos_a, int32_t pos_b)
{
    gg_graph *g = c->g;
    if (ggfit__llama_has(c->llama_build, LLAMA_CHANGE_MTMD_ROPE_SET_OFFSET))
        return gg_rope(g, gg_rope(g, cur, pos_a, -1), pos_b, -1);
    const gg_tensor *t = &g->t[cur];
    int64_t ne[3] = { t->ne[0] / 2, t->ne[1], t->ne[2] };
    uint64_t nb[2] = { t->nb[1], t->nb[2] };
    uint64_t half = (uint64_t)(t->ne[0] / 2) * 4;
    int32_t first = gg_rope(g, gg_view(g, cur, 3, ne, nb, 0), pos_a, -1);
    int32_t second = gg_rope(g, gg_view(g, cur, 3, ne, nb, half), pos_b, -1);
    return gg_concat(g, first, second, 0);
}

int32_t cg_patch_merge_permute(clip_graph *c, int32_t cur, int s)
{
    gg_graph *g = c->g;
    int64_t E = g->t[cur].ne[0], w = c->n_patches_x, h = c->n_patches_y;
    if (s < 2 || w % s || h % s) {
        c->missing = true;
        return -1;
    }
    cur = cg_reshape(c, cur, E, w, h, 1);
    cur = cg_reshape(c, cur, E * s, w / s, h, 1);
    cur = gg_permute(g, cur, 0, 2, 1, 3);
    cur = cg_cont(c, cur, E * s * s, h / s, w / s, 1);
    cur = gg_permute(g, cur, 0, 2, 1, 3);
    const gg_tensor *t = &g->t[cur];
    return cg_cont(c, cur, t->ne[0], t->ne[1] * t->ne[2], 1, 1);
}

int32_t cg_resize_pos(clip_graph *c, int32_t pos)
{
    gg_graph *g = c->g;
    int64_t side = 0, w = c->n_patches_x, h = c->n_patches_y, E = c->n_embd;
    while ((side + 1) * (side + 1) <= g->t[pos].ne[1])
        side++;
    if (w == side && h == side)
        return pos;
    pos = cg_reshape(c, pos, E, side, side, 1);
    pos = gg_permute(g, pos, 2, 0, 1, 3);
    int64_t ne[4] = { w, h, E, 1 };
    pos = gg_op_shape(g, GGFIT_OP_UPSCALE, g->t[pos].type, 4, ne, 1, &pos);
    pos = gg_permute(g, pos, 1, 2, 0, 3);
    return cg_cont(c, pos, E, w * h, 1, 1);
}
