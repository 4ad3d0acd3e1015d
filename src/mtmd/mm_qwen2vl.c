/*
 * mm_qwen2vl.c - tools/mtmd/models/qwen2vl.cpp: the Qwen2-VL and
 * Qwen2.5-VL vision encoders. Two convolutions over the image (the
 * temporal pair) summed, 2x2 patches merged, M-RoPE; Qwen2.5-VL adds
 * window attention (a mask on every layer but each n_wa_pattern-th, the
 * patches reordered by window in and out) and RMS norms;
 * tools/mtmd/models/qwen3vl.cpp: Qwen3-VL, fused QKV, a learned position
 * embedding resized to the image, and the deepstack layers' merged
 * features concatenated to the output.
 */
#include "mtmd/clip.h"

/* clip_graph_qwen2vl::build_inp_with_temporal_merge, a still image */
static int32_t temporal_merge(clip_graph *c)
{
    int32_t raw = cg_inp_raw(c, 3);
    int32_t k0 = cg_wreq(c, "v.patch_embd.weight"), k1 = cg_wreq(c, "v.patch_embd.weight.1");
    if (c->missing)
        return -1;
    int p = (int)c->patch_size;
    return cg_add(c, cg_conv_2d(c, k0, raw, p, p), cg_conv_2d(c, k1, raw, p, p));
}

static void build_qwen2vl(clip_graph *c)
{
    gg_graph *g = c->g;
    bool v25 = c->m->type->name[5] == '.';   /* "qwen2.5vl_merger" */
    int n_wa = c->hp->n_wa_pattern;
    bool window = n_wa > 0;
    int norm = v25 ? CG_NORM_RMS : CG_NORM_LAYER;
    int64_t E = c->n_embd, npx = c->n_patches_x, npy = c->n_patches_y, n_pos = c->n_patches;

    int32_t inp = temporal_merge(c);
    if (inp < 0)
        return;
    inp = gg_permute(g, inp, 1, 2, 0, 3);
    inp = cg_cont(c, inp, E * 2, npx / 2, npy, 1);
    inp = cg_reshape(c, inp, E * 2, npx / 2, 2, npy / 2);
    inp = gg_permute(g, inp, 0, 2, 1, 3);
    inp = cg_cont(c, inp, E, npx * npy, 1, 1);

    int32_t inpL = inp, window_mask = -1;
    int32_t positions = cg_input(c, GGFIT_TYPE_I32, n_pos * 4, 1, 1, 1, "positions");
    int32_t pre = cg_w(c, "v.pre_ln.weight");
    if (pre >= 0)
        inpL = cg_norm(c, inpL, pre, cg_w(c, "v.pre_ln.bias"), norm);
    if (window) {
        int32_t inv_idx = cg_input(c, GGFIT_TYPE_I32, n_pos / 4, 1, 1, 1, "inv_window_idx");
        window_mask = cg_input(c, GGFIT_TYPE_F32, n_pos, n_pos, 1, 1, "window_mask");
        if (c->flash_attn)
            window_mask = gg_cpy_type(g, window_mask, GGFIT_TYPE_F16);
        inpL = cg_reshape(c, inpL, E * 4, n_pos / 4, 1, 1);
        inpL = gg_get_rows(g, inpL, inv_idx);
        inpL = cg_reshape(c, inpL, E, n_pos, 1, 1);
    }
    for (int il = 0; il < c->n_layer; il++) {
        bool full = !window || (il + 1) % n_wa == 0;
        int32_t cur = cg_norm(c, inpL, cg_w(c, "v.blk.%d.ln1.weight", il),
                              cg_w(c, "v.blk.%d.ln1.bias", il), norm);
        int32_t Q = cg_add(c, gg_mul_mat(g, cg_wreq(c, "v.blk.%d.attn_q.weight", il), cur),
                           cg_wreq(c, "v.blk.%d.attn_q.bias", il));
        int32_t K = cg_add(c, gg_mul_mat(g, cg_wreq(c, "v.blk.%d.attn_k.weight", il), cur),
                           cg_wreq(c, "v.blk.%d.attn_k.bias", il));
        int32_t V = cg_add(c, gg_mul_mat(g, cg_wreq(c, "v.blk.%d.attn_v.weight", il), cur),
                           cg_wreq(c, "v.blk.%d.attn_v.bias", il));
        if (c->missing)
            return;
        Q = cg_reshape(c, Q, c->d_head, c->n_head, n_pos, 1);
        K = cg_reshape(c, K, c->d_head, c->n_head, n_pos, 1);
        V = cg_reshape(c, V, c->d_head, c->n_head, n_pos, 1);
        Q = gg_rope(g, Q, positions, -1);   /* ggml_rope_multi, vision sections */
        K = gg_rope(g, K, positions, -1);
        cur = cg_attn(c, cg_wreq(c, "v.blk.%d.attn_out.weight", il),
                      cg_w(c, "v.blk.%d.attn_out.bias", il), Q, K, V, full ? -1 : window_mask);
        cur = cg_add(c, cur, inpL);
        inpL = cur;
        cur = cg_norm(c, cur, cg_w(c, "v.blk.%d.ln2.weight", il),
                      cg_w(c, "v.blk.%d.ln2.bias", il), norm);
        cur = cg_ffn(c, cur, cg_wreq(c, "v.blk.%d.ffn_up.weight", il),
                     cg_w(c, "v.blk.%d.ffn_up.bias", il), cg_w(c, "v.blk.%d.ffn_gate.weight", il),
                     cg_w(c, "v.blk.%d.ffn_gate.bias", il),
                     cg_wreq(c, "v.blk.%d.ffn_down.weight", il),
                     cg_w(c, "v.blk.%d.ffn_down.bias", il), c->hp->ffn_op);
        inpL = cg_add(c, inpL, cur);
    }
    int32_t post = cg_w(c, "v.post_ln.weight");
    if (post >= 0)
        inpL = cg_norm(c, inpL, post, cg_w(c, "v.post_ln.bias"), norm);
    /* the merger: 2x2 patches as one row, an MLP */
    int32_t emb = cg_reshape(c, inpL, E * 4, n_pos / 4, 1, 1);
    emb = cg_ffn(c, emb, cg_wreq(c, "mm.0.weight"), cg_wreq(c, "mm.0.bias"), -1, -1,
                 cg_wreq(c, "mm.2.weight"), cg_wreq(c, "mm.2.bias"), CLIP_FFN_GELU);
    if (c->missing)
        return;
    if (window) {
        int32_t idx = cg_input(c, GGFIT_TYPE_I32, n_pos / 4, 1, 1, 1, "window_idx");
        emb = cg_reshape(c, emb, c->hp->projection_dim, n_pos / 4, 1, 1);
        emb = gg_get_rows(g, emb, idx);
        emb = cg_reshape(c, emb, c->hp->projection_dim, n_pos / 4, 1, 1);
    }
    gg_expand(g, emb);
}

/* the spatial merge of qwen2vl/qwen3vl: 2x2 patches next to each other */
static int32_t merge_2x2(clip_graph *c, int32_t inp)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, npx = c->n_patches_x, npy = c->n_patches_y;
    inp = cg_cont(c, inp, E * 2, npx / 2, npy, 1);
    inp = cg_reshape(c, inp, E * 2, npx / 2, 2, npy / 2);
    inp = gg_permute(g, inp, 0, 2, 1, 3);
    return cg_cont(c, inp, E, npx * npy, 1, 1);
}

static void build_qwen3vl(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, D = c->d_head, n_pos = c->n_patches;
    int norm = CG_NORM_LAYER;
    int32_t inp = temporal_merge(c);
    int32_t bias = cg_wreq(c, "v.patch_embd.bias"), pos = cg_wreq(c, "v.position_embd.weight");
    if (inp < 0 || c->missing)
        return;
    inp = merge_2x2(c, gg_permute(g, inp, 1, 2, 0, 3));
    inp = cg_add(c, inp, bias);
    inp = cg_add(c, inp, merge_2x2(c, cg_resize_pos(c, pos)));
    int32_t inpL = inp;
    int32_t positions = cg_input(c, GGFIT_TYPE_I32, n_pos * 4, 1, 1, 1, "positions");
    int32_t pre = cg_w(c, "v.pre_ln.weight");
    if (pre >= 0)
        inpL = cg_norm(c, inpL, pre, cg_w(c, "v.pre_ln.bias"), norm);
    int64_t mf = c->hp->n_merge > 0 ? (int64_t)c->hp->n_merge * c->hp->n_merge : 4;
    int32_t deep = -1;
    for (int il = 0; il < c->n_layer; il++) {
        int32_t cur = cg_norm(c, inpL, cg_w(c, "v.blk.%d.ln1.weight", il),
                              cg_w(c, "v.blk.%d.ln1.bias", il), norm);
        cur = cg_add(c, gg_mul_mat(g, cg_wreq(c, "v.blk.%d.attn_qkv.weight", il), cur),
                     cg_wreq(c, "v.blk.%d.attn_qkv.bias", il));
        if (c->missing)
            return;
        int64_t ne[3] = { D, c->n_head, n_pos };
        uint64_t nb[2] = { (uint64_t)D * 4, g->t[cur].nb[1] };
        int32_t Q = gg_view(g, cur, 3, ne, nb, 0);
        int32_t K = gg_view(g, cur, 3, ne, nb, (uint64_t)E * 4);
        int32_t V = gg_view(g, cur, 3, ne, nb, (uint64_t)E * 8);
        Q = gg_rope(g, Q, positions, -1);
        K = gg_rope(g, K, positions, -1);
        cur = cg_attn(c, cg_wreq(c, "v.blk.%d.attn_out.weight", il),
                      cg_w(c, "v.blk.%d.attn_out.bias", il), Q, K, V, -1);
        cur = cg_add(c, cur, inpL);
        inpL = cur;
        cur = cg_norm(c, cur, cg_w(c, "v.blk.%d.ln2.weight", il),
                      cg_w(c, "v.blk.%d.ln2.bias", il), norm);
        cur = cg_ffn(c, cur, cg_wreq(c, "v.blk.%d.ffn_up.weight", il),
                     cg_w(c, "v.blk.%d.ffn_up.bias", il), cg_w(c, "v.blk.%d.ffn_gate.weight", il),
                     cg_w(c, "v.blk.%d.ffn_gate.bias", il),
                     cg_wreq(c, "v.blk.%d.ffn_down.weight", il),
                     cg_w(c, "v.blk.%d.ffn_down.bias", il), c->hp->ffn_op);
        cur = cg_add(c, inpL, cur);
        int32_t fc1 = cg_w(c, "v.deepstack.%d.fc1.weight", il);
        if (fc1 >= 0) {   /* clip_layer::has_deepstack */
            int32_t feat = cg_reshape(c, cur, E * mf, n_pos / mf, 1, 1);
            feat = cg_norm(c, feat, cg_w(c, "v.deepstack.%d.norm.weight", il),
                           cg_w(c, "v.deepstack.%d.norm.bias", il), norm);
            feat = cg_ffn(c, feat, fc1, cg_w(c, "v.deepstack.%d.fc1.bias", il), -1, -1,
                          cg_w(c, "v.deepstack.%d.fc2.weight", il),
                          cg_w(c, "v.deepstack.%d.fc2.bias", il), CLIP_FFN_GELU);
            deep = deep < 0 ? feat : gg_concat(g, deep, feat, 0);
        }
        inpL = cur;
    }
    int32_t post = cg_w(c, "v.post_ln.weight");
    if (post >= 0)
        inpL = cg_norm(c, inpL, post, cg_w(c, "v.post_ln.bias"), norm);
    int32_t emb = cg_reshape(c, inpL, E * 4, n_pos / 4, 1, 1);
    emb = cg_ffn(c, emb, cg_wreq(c, "mm.0.weight"), cg_wreq(c, "mm.0.bias"), -1, -1,
                 cg_wreq(c, "mm.2.weight"), cg_wreq(c, "mm.2.bias"), CLIP_FFN_GELU);
    if (c->missing)
        return;
    if (deep >= 0)
        emb = gg_concat(g, emb, deep, 0);
    gg_expand(g, emb);
}

/* load_hparams: Qwen2-VL, Qwen2.5-VL (which needs n_wa_pattern) */
static void hparams_qwen2vl(clip_model *m)
{
    clip_hparams *hp = &m->hp;
    hp->n_merge = 2;
    ggfit__clip_u32(m, "clip.vision.spatial_merge_size", &hp->n_merge);
    ggfit__clip_u32(m, "clip.vision.n_wa_pattern", &hp->n_wa_pattern);
    ggfit__clip_limit_image_tokens(hp, 8, 4096);
    ggfit__clip_warmup_n_tokens(hp, 46 * 46);
}

const clip_type ggfit__clip_qwen2vl = {
    .name = "qwen2vl_merger", .hparams = hparams_qwen2vl, .build = build_qwen2vl,
};
const clip_type ggfit__clip_qwen25vl = {
    .name = "qwen2.5vl_merger", .hparams = hparams_qwen2vl, .build = build_qwen2vl,
};
const clip_type ggfit__clip_qwen3vl = {
    .name = "qwen3vl_merger", .hparams = hparams_qwen2vl, .build = build_qwen3vl,
};
