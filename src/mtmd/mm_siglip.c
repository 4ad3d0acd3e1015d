/*
 * mm_siglip.c - tools/mtmd/models/siglip.cpp: the SigLIP encoders with
 * learned position embeddings. Gemma 3: the patches average-pooled
 * n_merge x n_merge, an RMS norm and the input projection; Idefics3
 * (SmolVLM): a pixel shuffle and one matmul; LFM2-VL: the positions
 * resized to the image (SigLIP2 NaFlex), a pixel shuffle, an optional
 * layer norm and an MLP; Phi-4 (positions resized) and Janus Pro: an MLP.
 */
#include <string.h>

#include "mtmd/clip.h"

static void build_siglip(clip_graph *c)
{
    gg_graph *g = c->g;
    const char *type = c->m->type->name;
    bool gemma3 = !strcmp(type, "gemma3"), lfm2 = !strcmp(type, "lfm2");
    bool phi4 = !strcmp(type, "phi4"), janus = !strcmp(type, "janus_pro");
    int32_t inp = cg_inp(c);
    if (inp < 0)
        return;
    int32_t pos = cg_w(c, "v.position_embd.weight");
    if ((lfm2 || phi4) && pos < 0) {
        c->missing = true;
        return;
    }
    if (lfm2 || phi4)
        pos = cg_resize_pos(c, pos);
    int32_t cur = cg_vit(c, inp, c->n_patches, CG_NORM_LAYER, c->hp->ffn_op, pos);
    if (cur < 0)
        return;
    int64_t E = c->n_embd;
    if (lfm2) {
        cur = cg_patch_merge_permute(c, cur, c->hp->n_merge);
        if (cur < 0)
            return;
        int32_t nw = cg_w(c, "mm.input_norm.weight"), nb = cg_w(c, "mm.input_norm.bias");
        if (nw >= 0)
            cur = cg_mul(c, gg_norm(g, cur), nw);
        if (nb >= 0)
            cur = cg_add(c, cur, nb);
        cur = cg_ffn(c, cur, cg_wreq(c, "mm.1.weight"), cg_wreq(c, "mm.1.bias"), -1, -1,
                     cg_wreq(c, "mm.2.weight"), cg_wreq(c, "mm.2.bias"), CLIP_FFN_GELU);
    } else if (phi4 || janus) {
        int down = phi4 ? 2 : 1;   /* the second layer: mm.2 (Phi-4), mm.1 (Janus) */
        cur = cg_ffn(c, cur, cg_wreq(c, "mm.0.weight"), cg_wreq(c, "mm.0.bias"), -1, -1,
                     cg_wreq(c, "mm.%d.weight", down), cg_wreq(c, "mm.%d.bias", down),
                     phi4 ? CLIP_FFN_GELU : c->hp->ffn_op);
    } else if (gemma3) {
        int64_t side = c->n_patches_x, k = c->hp->n_merge;
        cur = cg_cont(c, gg_transpose(g, cur), side, side, E, 1);
        int64_t ne[4] = { side / k, side / k, E, 1 };   /* ggml_pool_2d, no padding */
        cur = gg_op_shape(g, GGFIT_OP_POOL_2D, GGFIT_TYPE_F32, 4, ne, 1, &cur);
        cur = cg_reshape(c, cur, ne[0] * ne[0], E, 1, 1);
        cur = gg_cont(g, gg_transpose(g, cur));
        cur = gg_rms_norm(g, cur);
        cur = cg_mul(c, cur, cg_wreq(c, "mm.soft_emb_norm.weight"));
        int32_t proj = cg_wreq(c, "mm.input_projection.weight");
        if (c->missing)
            return;
        cur = gg_mul_mat(g, gg_cont(g, gg_transpose(g, proj)), cur);
    } else {
        /* build_patch_merge_permute(cur, n_merge), then mm.model.fc */
        cur = cg_patch_merge_permute(c, cur, c->hp->n_merge);
        if (cur < 0)
            return;
        int32_t fc = cg_wreq(c, "mm.model.fc.weight");
        if (c->missing)
            return;
        cur = gg_mul_mat(g, fc, cur);
    }
    if (!c->missing)
        gg_expand(g, cur);
}

static void hparams_gemma3(clip_model *m)
{
    m->hp.n_merge = 4;
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
}

/* Gemma 3's projector pools the patches with a kernel and stride of
 * n_merge (ggml_pool_2d divides by it). */
static void check_gemma3(hp_check *c, const clip_model *m)
{
    hc_range(c, "projector.scale_factor", m->hp.n_merge, 1, 65535,
             "Gemma 3's projector pools the patches by this factor a side");
}

static void hparams_idefics3(clip_model *m)
{
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
    ggfit__clip_custom_image_tokens(m);
}

/* load_hparams LFM2: 64 to 256 tokens after a merge of scale_factor */
static void hparams_lfm2(clip_model *m)
{
    m->hp.n_merge = 1;
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
    ggfit__clip_limit_image_tokens(&m->hp, 64, 256);
}

/* load_hparams PHI4: no merge, a warmup of 16 x 16 tokens */
static void hparams_phi4(clip_model *m)
{
    m->hp.n_merge = 1;
    ggfit__clip_warmup_n_tokens(&m->hp, 16 * 16);
}

const clip_type ggfit__clip_gemma3 = {
    .name = "gemma3", .hparams = hparams_gemma3, .build = build_siglip, .check = check_gemma3,
};
const clip_type ggfit__clip_idefics3 = {
    .name = "idefics3", .hparams = hparams_idefics3, .build = build_siglip,
};
const clip_type ggfit__clip_lfm2 = {
    .name = "lfm2", .hparams = hparams_lfm2, .build = build_siglip,
};
const clip_type ggfit__clip_phi4 = {
    .name = "phi4", .hparams = hparams_phi4, .build = build_siglip,
};
const clip_type ggfit__clip_janus_pro = { .name = "janus_pro", .build = build_siglip };
