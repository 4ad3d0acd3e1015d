/*
 * mm_internvl.c - tools/mtmd/models/internvl.cpp: InternVL's ViT with a
 * [CLS] token and learned positions (RMS norms for the 6B ViT), the
 * [CLS] dropped, a pixel shuffle, and a normed MLP projector.
 */
#include "mtmd/clip.h"

static void build_internvl(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, s = c->hp->n_merge;
    int32_t inp = cg_inp(c);
    int32_t cls = cg_wreq(c, "v.class_embd"), pos = cg_wreq(c, "v.position_embd.weight");
    if (inp < 0 || c->missing || s < 1)
        return;
    int64_t rne[4] = { g->t[cls].ne[0], 1, 1, 1 };   /* ggml_repeat_4d */
    int32_t rep = gg_op_shape(g, GGFIT_OP_REPEAT, g->t[cls].type, 4, rne, 1, &cls);
    inp = gg_concat(g, inp, rep, 1);
    bool big = c->hp->n_embd == 3200 && c->hp->n_layer == 45;
    int32_t cur = cg_vit(c, inp, c->n_patches + 1, big ? CG_NORM_RMS : CG_NORM_LAYER,
                         c->hp->ffn_op, pos);
    if (cur < 0)
        return;
    const gg_tensor *t = &g->t[cur];
    int64_t vne[3] = { E, c->n_patches, 1 };
    uint64_t vnb[2] = { t->nb[1], t->nb[2] };
    cur = gg_cont(g, gg_view(g, cur, 3, vne, vnb, 0));
    int64_t h = c->n_patches_y, w = c->n_patches_x;
    cur = cg_reshape(c, cur, E * s, h / s, w, 1);
    cur = gg_permute(g, cur, 0, 2, 1, 3);
    cur = cg_cont(c, cur, E * s * s, h / s, w / s, 1);
    cur = gg_permute(g, cur, 0, 2, 1, 3);
    t = &g->t[cur];
    cur = cg_cont(c, cur, E * s * s, t->ne[1] * t->ne[2], t->ne[3], 1);
    cur = cg_norm(c, cur, cg_wreq(c, "mm.model.mlp.0.weight"), cg_wreq(c, "mm.model.mlp.0.bias"),
                  CG_NORM_LAYER);
    cur = cg_ffn(c, cur, cg_wreq(c, "mm.model.mlp.1.weight"), cg_wreq(c, "mm.model.mlp.1.bias"),
                 -1, -1, cg_wreq(c, "mm.model.mlp.3.weight"), cg_wreq(c, "mm.model.mlp.3.bias"),
                 CLIP_FFN_GELU);
    if (!c->missing)
        gg_expand(g, cur);
}

static void hparams_internvl(clip_model *m)
{
    ggfit__clip_u32(m, "clip.vision.projector.scale_factor", &m->hp.n_merge);
}

const clip_type ggfit__clip_internvl = {
    .name = "internvl", .hparams = hparams_internvl, .build = build_internvl,
};
