/*
 * mm_minimax_m3.c - tools/mtmd/models/minimax-m3.cpp: MiniMax-M3's
 * vision encoder: two patch convolutions summed, the patches reordered so
 * that each 2x2 block is contiguous, a ViT whose heads rotate an h and a
 * w slice (NeoX RoPE; the time slice is left as is), a per-patch MLP and
 * a 2x2 merge MLP.
 */
#include "mtmd/clip.h"
#include "versions/version.h"

/* clip_graph_minimax_m3::apply_rope: x as [t, h, w + pad] slices; from
 * MTMD_ROPE_SET_OFFSET the whole head roped twice (h and w past their
 * offsets), before it the slices copied out, roped and concatenated */
static int32_t rope_thw(clip_graph *c, int32_t x)
{
    gg_graph *g = c->g;
    if (ggfit__llama_has(c->llama_build, LLAMA_CHANGE_MTMD_ROPE_SET_OFFSET))
        return gg_rope(g, gg_rope(g, x, c->pos_a, -1), c->pos_b, -1);
    const gg_tensor *t = &g->t[x];
    int64_t dh = t->ne[0], axd = 2 * ((2 * (dh / 2) / 3) / 2);
    int64_t off[3] = { 0, axd, 2 * axd }, n[3] = { axd, axd, dh - 2 * axd };
    int32_t part[3];
    for (int i = 0; i < 3; i++) {
        t = &g->t[x];
        int64_t ne[3] = { n[i], t->ne[1], t->ne[2] };
        uint64_t nb[2] = { t->nb[1], t->nb[2] };
        part[i] = gg_cont(g, gg_view(g, x, 3, ne, nb, (uint64_t)off[i] * t->nb[0]));
    }
    part[1] = gg_rope(g, part[1], c->pos_a, -1);
    part[2] = gg_rope(g, part[2], c->pos_b, -1);
    return gg_concat(g, gg_concat(g, part[0], part[1], 0), part[2], 0);
}

static void build_minimax_m3(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t E = c->n_embd, m = c->hp->n_merge, px = c->n_patches_x, py = c->n_patches_y;
    int32_t w0 = cg_wreq(c, "v.patch_embd.weight"), w1 = cg_wreq(c, "v.patch_embd.weight.1");
    if (c->missing || m <= 0)
        return;
    int32_t raw = cg_inp_raw(c, 3);
    int P = (int)c->patch_size;
    int32_t inp = cg_add(c, cg_conv_2d(c, w0, raw, P, P), cg_conv_2d(c, w1, raw, P, P));
    inp = gg_permute(g, inp, 1, 2, 0, 3);
    inp = cg_cont(c, inp, E * m, px / m, py, 1);
    inp = cg_reshape(c, inp, E * m, px / m, m, py / m);
    inp = gg_permute(g, inp, 0, 2, 1, 3);
    inp = cg_cont(c, inp, E, px * py, 1, 1);
    c->pos_a = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "minimax_pos_h");
    c->pos_b = cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "minimax_pos_w");
    c->add_pos = rope_thw;
    int32_t emb = cg_vit(c, inp, c->n_patches, CG_NORM_LAYER, CLIP_FFN_GELU_ERF, -1);
    if (emb < 0)
        return;
    emb = cg_ffn(c, emb, cg_wreq(c, "mm.1.weight"), cg_wreq(c, "mm.1.bias"), -1, -1,
                 cg_wreq(c, "mm.2.weight"), cg_wreq(c, "mm.2.bias"), CLIP_FFN_GELU_ERF);
    if (c->missing)
        return;
    emb = cg_reshape(c, emb, g->t[emb].ne[0] * m * m, c->n_patches / (m * m), 1, 1);
    emb = cg_ffn(c, emb, cg_wreq(c, "mm.merger.fc1.weight"), cg_wreq(c, "mm.merger.fc1.bias"), -1,
                 -1, cg_wreq(c, "mm.merger.fc2.weight"), cg_wreq(c, "mm.merger.fc2.bias"),
                 CLIP_FFN_GELU_ERF);
    if (!c->missing)
        gg_expand(g, emb);
}

/* load_hparams MINIMAX_M3: a 2x2 merge unless the file says, 8 to 576
 * tokens, a warmup of 16 x 16 tokens */
static void hparams_minimax_m3(clip_model *m)
{
    clip_hparams *hp = &m->hp;
    hp->n_merge = 2;
    ggfit__clip_u32(m, "clip.vision.spatial_merge_size", &hp->n_merge);
    ggfit__clip_limit_image_tokens(hp, 8, 576);
    ggfit__clip_warmup_n_tokens(hp, 16 * 16);
}

const clip_type ggfit__clip_minimax_m3 = {
    .name = "minimax_m3", .hparams = hparams_minimax_m3, .build = build_minimax_m3,
};
