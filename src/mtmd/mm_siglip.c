/*
 * mm_siglip.c - tools/mtmd/models/siglip.cpp: the SigLIP encoders with
 * learned position embeddings. Gemma 3: the patches average-pooled
 * n_merge x n_merge, an RMS norm and the input projection; Idefics3
 * (SmolVLM): a pixel shuffle and one matmul.
 */
#include "mtmd/clip.h"

static void build_siglip(clip_graph *c)
{
    gg_graph *g = c->g;
    bool gemma3 = c->m->type->name[0] == 'g';
    int32_t inp = cg_inp(c);
    if (inp < 0)
        return;
    int32_t cur = cg_vit(c, inp, c->n_patches, CG_NORM_LAYER, c->hp->ffn_op,
                         cg_w(c, "v.position_embd.weight"));
    if (cur < 0)
        return;
    int64_t E = c->n_embd;
    if (gemma3) {
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
    gg_expand(g, cur);
}

static void hparams_gemma3(clip_model *m)
{
    m->hp.n_merge = 4;
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
}

static void hparams_idefics3(clip_model *m)
{
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
}

const clip_type ggfit__clip_gemma3 = { "gemma3", hparams_gemma3, build_siglip };
const clip_type ggfit__clip_idefics3 = { "idefics3", hparams_idefics3, build_siglip };
