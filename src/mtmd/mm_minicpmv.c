/*
 * mm_minicpmv.c - tools/mtmd/models/minicpmv.cpp: MiniCPM-V.
 * "resampler" (2.5, 2.6, 4.0, 4.5): a SigLIP ViT with looked-up learned
 * positions, then a one-layer cross-attention resampler whose learned
 * queries read the patches with 2D sinusoidal positions added to the keys.
 * "minicpmv4_6": the ViT with a window-attention merger (2x2 tokens)
 * after one layer, and a final 2x2 merge into an MLP.
 */
#include "mtmd/clip.h"

static int32_t unary_op(clip_graph *c, uint8_t op, int32_t a)
{
    const gg_tensor *t = &c->g->t[a];
    return gg_op_shape(c->g, op, t->type, 4, t->ne, 1, &a);
}

/* sin and cos of theta, side by side */
static int32_t sincos(clip_graph *c, int32_t theta)
{
    return gg_concat(c->g, unary_op(c, GGFIT_OP_SIN, theta), unary_op(c, GGFIT_OP_COS, theta), 0);
}

static void build_resampler(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t n_pos = c->n_patches;
    int32_t proj = cg_wreq(c, "resampler.proj.weight"), query = cg_wreq(c, "resampler.query");
    int32_t pos = cg_wreq(c, "v.position_embd.weight");
    if (c->missing)
        return;
    int64_t P = g->t[proj].ne[0], nq = c->hp->minicpmv_query_num, d_head = 128, H = P / d_head;
    int32_t omega = cg_input(c, GGFIT_TYPE_F32, P / 4, 1, 1, 1, "omega");
    int32_t pos_h = cg_input(c, GGFIT_TYPE_F32, 1, n_pos, 1, 1, "pos_h");
    int32_t pos_w = cg_input(c, GGFIT_TYPE_F32, 1, n_pos, 1, 1, "pos_w");
    int32_t positions = cg_input(c, GGFIT_TYPE_I32, n_pos, 1, 1, 1, "positions");
    int32_t learned = gg_get_rows(g, pos, positions);
    int32_t inp = cg_inp(c);
    if (inp < 0)
        return;
    int32_t emb = cg_vit(c, inp, n_pos, CG_NORM_LAYER, c->hp->ffn_op, learned);
    if (emb < 0)
        return;
    int32_t v = cg_mm(c, cg_wreq(c, "resampler.kv.weight"), emb);
    int32_t q = cg_norm(c, query, cg_wreq(c, "resampler.ln_q.weight"),
                        cg_wreq(c, "resampler.ln_q.bias"), CG_NORM_LAYER);
    v = cg_norm(c, v, cg_wreq(c, "resampler.ln_kv.weight"), cg_wreq(c, "resampler.ln_kv.bias"),
                CG_NORM_LAYER);
    /* the 2D sinusoidal positions: omega's outer product with x and y */
    int64_t ne[4] = { P / 4, n_pos, 1, 1 };
    int32_t omega_b = gg_op_shape(g, GGFIT_OP_REPEAT, GGFIT_TYPE_F32, 4, ne, 1, &omega);
    int32_t theta_x = cg_mul(c, omega_b, pos_w), theta_y = cg_mul(c, omega_b, pos_h);
    int32_t pos_x = sincos(c, theta_x), pos_y = sincos(c, theta_y);
    int32_t k = cg_add(c, v, gg_concat(g, pos_x, pos_y, 0));
    int32_t Q = cg_add(c, cg_mm(c, cg_wreq(c, "resampler.attn.q.weight"), q),
                       cg_wreq(c, "resampler.attn.q.bias"));
    int32_t K = cg_add(c, cg_mm(c, cg_wreq(c, "resampler.attn.k.weight"), k),
                       cg_wreq(c, "resampler.attn.k.bias"));
    int32_t V = cg_add(c, cg_mm(c, cg_wreq(c, "resampler.attn.v.weight"), v),
                       cg_wreq(c, "resampler.attn.v.bias"));
    if (c->missing || H <= 0 || P % d_head)
        return;
    Q = cg_reshape(c, Q, d_head, H, nq, 1);
    K = cg_reshape(c, K, d_head, H, n_pos, 1);
    V = cg_reshape(c, V, d_head, H, n_pos, 1);
    emb = cg_attn(c, cg_wreq(c, "resampler.attn.out.weight"),
                  cg_wreq(c, "resampler.attn.out.bias"), Q, K, V, -1);
    emb = cg_norm(c, emb, cg_wreq(c, "resampler.ln_post.weight"),
                  cg_wreq(c, "resampler.ln_post.bias"), CG_NORM_LAYER);
    if (!c->missing)
        gg_expand(g, cg_mm(c, proj, emb));
}

static int32_t i32_input(clip_graph *c, int64_t n, const char *name)
{
    return cg_input(c, GGFIT_TYPE_I32, n, 1, 1, 1, name);
}

/* 4.6's ViT layers il0..il1-1 over n_pos tokens (build_vit_layers) */
static int32_t vit_layers(clip_graph *c, int32_t input, int il0, int il1, int64_t n_pos)
{
    int ffn = c->hp->ffn_op;
    for (int il = il0; il < il1; il++) {
        int32_t cur = cg_norm(c, input, cg_w(c, "v.blk.%d.ln1.weight", il),
                              cg_w(c, "v.blk.%d.ln1.bias", il), CG_NORM_LAYER);
        int32_t qkv[3], b, w;
        static const char *const n[3] = { "q", "k", "v" };
        for (int k = 0; k < 3; k++) {
            qkv[k] = cg_mm(c, cg_wreq(c, "v.blk.%d.attn_%s.weight", il, n[k]), cur);
            if ((b = cg_w(c, "v.blk.%d.attn_%s.bias", il, n[k])) >= 0)
                qkv[k] = cg_add(c, qkv[k], b);
        }
        if (c->missing)
            return -1;
        for (int k = 0; k < 3; k++)
            qkv[k] = cg_reshape(c, qkv[k], c->d_head, c->n_head, n_pos, 1);
        cur = cg_attn(c, cg_wreq(c, "v.blk.%d.attn_out.weight", il),
                      cg_w(c, "v.blk.%d.attn_out.bias", il), qkv[0], qkv[1], qkv[2], -1);
        if ((w = cg_w(c, "v.blk.%d.ls1.weight", il)) >= 0)
            cur = cg_mul(c, cur, w);
        input = cg_add(c, cur, input);
        cur = cg_norm(c, input, cg_w(c, "v.blk.%d.ln2.weight", il),
                      cg_w(c, "v.blk.%d.ln2.bias", il), CG_NORM_LAYER);
        cur = cg_ffn(c, cur, cg_wreq(c, "v.blk.%d.ffn_up.weight", il),
                     cg_w(c, "v.blk.%d.ffn_up.bias", il), cg_w(c, "v.blk.%d.ffn_gate.weight", il),
                     cg_w(c, "v.blk.%d.ffn_gate.bias", il),
                     cg_wreq(c, "v.blk.%d.ffn_down.weight", il),
                     cg_w(c, "v.blk.%d.ffn_down.bias", il), ffn);
        if ((w = cg_w(c, "v.blk.%d.ls2.weight", il)) >= 0)
            cur = cg_mul(c, cur, w);
        input = cg_add(c, input, cur);
    }
    return input;
}

/* The four tokens of each 2x2 block gathered and concatenated; their
 * mean into *mean when asked. */
static int32_t gather4(clip_graph *c, int32_t cur, const int32_t idx[4], int32_t *mean)
{
    gg_graph *g = c->g;
    int32_t p[4];
    for (int i = 0; i < 4; i++)
        p[i] = gg_get_rows(g, cur, idx[i]);
    if (mean)
        *mean = gg_scale(g, cg_add(c, cg_add(c, cg_add(c, p[0], p[1]), p[2]), p[3]));
    return gg_concat(g, gg_concat(g, gg_concat(g, p[0], p[1], 0), p[2], 0), p[3], 0);
}

/* The window-attention merger: windows of 4 tokens attend to themselves,
 * then each 2x2 block becomes one token (an MLP over the four, plus
 * their mean). */
static int32_t vit_merger(clip_graph *c, int32_t inpL, int32_t win, int32_t inv, int32_t mask,
                          const int32_t ds[4])
{
    gg_graph *g = c->g;
    int64_t n_pos = c->n_patches;
    int32_t res = inpL;
    int32_t cur = cg_norm(c, inpL, cg_wreq(c, "v.vit_merger.ln1.weight"),
                          cg_wreq(c, "v.vit_merger.ln1.bias"), CG_NORM_LAYER);
    cur = gg_get_rows(g, cur, win);
    int32_t qkv[3], b;
    static const char *const n[3] = { "q", "k", "v" };
    for (int k = 0; k < 3; k++) {
        qkv[k] = cg_mm(c, cg_wreq(c, "v.vit_merger.attn_%s.weight", n[k]), cur);
        if ((b = cg_w(c, "v.vit_merger.attn_%s.bias", n[k])) >= 0)
            qkv[k] = cg_add(c, qkv[k], b);
    }
    if (c->missing)
        return -1;
    for (int k = 0; k < 3; k++)
        qkv[k] = cg_reshape(c, qkv[k], c->d_head, c->n_head, n_pos, 1);
    cur = cg_attn(c, cg_wreq(c, "v.vit_merger.attn_out.weight"),
                  cg_w(c, "v.vit_merger.attn_out.bias"), qkv[0], qkv[1], qkv[2], mask);
    inpL = cg_add(c, gg_get_rows(g, cur, inv), res);
    int32_t mean;
    cur = gather4(c, inpL, ds, &mean);
    cur = cg_norm(c, cur, cg_wreq(c, "v.vit_merger.ds_ln.weight"),
                  cg_wreq(c, "v.vit_merger.ds_ln.bias"), CG_NORM_LAYER);
    cur = cg_ffn(c, cur, cg_wreq(c, "v.vit_merger.ds_ffn_up.weight"),
                 cg_w(c, "v.vit_merger.ds_ffn_up.bias"), -1, -1,
                 cg_wreq(c, "v.vit_merger.ds_ffn_down.weight"),
                 cg_w(c, "v.vit_merger.ds_ffn_down.bias"), CLIP_FFN_GELU);
    return cg_add(c, cur, mean);
}

static void build_minicpmv4_6(clip_graph *c)
{
    gg_graph *g = c->g;
    bool is_4x = c->hp->n_merge == 2;
    int64_t n_pos = c->n_patches, half_h = c->n_patches_y / 2, half_w = c->n_patches_x / 2;
    int64_t n_ds = half_h * half_w, n_out = is_4x ? n_ds : (half_h / 2) * (half_w / 2);
    int32_t pos = cg_wreq(c, "v.position_embd.weight");
    if (c->missing)
        return;
    int32_t positions = i32_input(c, n_pos, "positions");
    int32_t learned = gg_get_rows(g, pos, positions);
    int32_t win = -1, inv = -1, mask = -1, vds[4] = { -1, -1, -1, -1 }, mds[4];
    if (!is_4x) {
        win = i32_input(c, n_pos, "vit_merger_window_idx");
        inv = i32_input(c, n_pos, "vit_merger_inv_window_idx");
        mask = cg_input(c, GGFIT_TYPE_F32, n_pos, n_pos, 1, 1, "vit_merger_window_mask");
        if (c->flash_attn)
            mask = gg_cpy_type(g, mask, GGFIT_TYPE_F16);
        for (int i = 0; i < 4; i++)
            vds[i] = i32_input(c, n_ds, "vit_merger_ds_idx");
    }
    for (int i = 0; i < 4; i++)
        mds[i] = i32_input(c, n_out, "merger_ds_idx");
    int32_t inp = cg_inp(c);
    if (inp < 0)
        return;
    int32_t inpL = cg_add(c, inp, learned), w;
    if ((w = cg_w(c, "v.pre_ln.weight")) >= 0)
        inpL = cg_norm(c, inpL, w, cg_w(c, "v.pre_ln.bias"), CG_NORM_LAYER);
    int L = (int)c->n_layer, ins = c->hp->insert_layer_id;
    if (!is_4x) {
        if (ins < 0 || ins >= L) {
            c->missing = true;
            return;
        }
        inpL = vit_layers(c, inpL, 0, ins + 1, n_pos);
        if (inpL >= 0)
            inpL = vit_merger(c, inpL, win, inv, mask, vds);
        if (inpL >= 0)
            inpL = vit_layers(c, inpL, ins + 1, L, n_ds);
    } else {
        inpL = vit_layers(c, inpL, 0, L, n_pos);
    }
    if (inpL < 0)
        return;
    if ((w = cg_w(c, "v.post_ln.weight")) >= 0)
        inpL = cg_norm(c, inpL, w, cg_w(c, "v.post_ln.bias"), CG_NORM_LAYER);
    int32_t cur = gather4(c, inpL, mds, NULL);
    cur = cg_norm(c, cur, cg_wreq(c, "mm.input_norm.weight"), cg_w(c, "mm.input_norm.bias"),
                  CG_NORM_LAYER);
    cur = cg_ffn(c, cur, cg_wreq(c, "mm.up.weight"), cg_w(c, "mm.up.bias"), -1, -1,
                 cg_wreq(c, "mm.down.weight"), cg_w(c, "mm.down.bias"), CLIP_FFN_GELU_ERF);
    if (!c->missing)
        gg_expand(g, cur);
}

/* load_hparams MINICPMV4_6: a merge of 4 (the ViT merger's 2x2 and the
 * final 2x2) or 2 (no ViT merger); the merger after the layer
 * wa_layer_indexes[0] */
static void hparams_minicpmv4_6(clip_model *m)
{
    clip_hparams *hp = &m->hp;
    hp->n_merge = 4;
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &hp->n_merge);
    int64_t k = ggfit_gguf_find_key(m->g, "clip.vision.wa_layer_indexes");
    ggfit_value arr, first;
    ggfit_value_iter it = { 0 };
    if (k >= 0 && ggfit_gguf_value(m->g, (uint64_t)k, &arr) && arr.type == GGFIT_GGUF_ARRAY &&
        ggfit_value_next(&arr, &it, &first))
        hp->insert_layer_id = (int32_t)(first.type == GGFIT_GGUF_INT32 ? first.i
                                                                        : (int64_t)first.u);
}

/* load_hparams MINICPMV4_6 asserts a merge of 2 or 4. */
static void check_minicpmv4_6(hp_check *c, const clip_model *m)
{
    if (m->hp.n_merge != 2 && m->hp.n_merge != 4)
        hc_fail(c, "clip.vision.projector.scale_factor is %d: MiniCPM-V 4.6 merges 2 or 4 "
                "patches a side (llama.cpp's clip loader asserts it)", m->hp.n_merge);
}

/* load_hparams: the query count the file gives, else by version */
static void hparams_resampler(clip_model *m)
{
    clip_hparams *hp = &m->hp;
    int32_t version = 0;
    ggfit__clip_u32(m, "clip.minicpmv_version", &version);
    ggfit__clip_u32(m, "clip.minicpmv_query_num", &hp->minicpmv_query_num);
    if (hp->minicpmv_query_num == 0)
        hp->minicpmv_query_num = version >= 3 && version <= 6 ? 64 : version == 100045 ? 64 : 96;
}

const clip_type ggfit__clip_resampler = {
    .name = "resampler", .hparams = hparams_resampler, .build = build_resampler,
};
const clip_type ggfit__clip_minicpmv4_6 = {
    .name = "minicpmv4_6", .hparams = hparams_minicpmv4_6, .build = build_minicpmv4_6,
    .check = check_minicpmv4_6,
};
