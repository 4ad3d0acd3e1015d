/*
 * mm_qwen3a.c - tools/mtmd/models/qwen3a.cpp: Qwen3-Omni / Qwen3-ASR's
 * audio encoder: the mel frames cut into chunks of 100, three strided 2D
 * convolutions per chunk, a projection, learned positions that restart
 * in each chunk, a ViT and an MLP.
 */
#include "mtmd/clip.h"

enum { CHUNK = 100 };

static void build_qwen3a(clip_graph *c)
{
    gg_graph *g = c->g;
    int64_t n_frames = c->nx, n_mel = c->ny, n_chunks = n_frames / CHUNK;
    if (n_chunks <= 0 || n_frames % CHUNK) {
        c->missing = true;
        return;
    }
    int32_t inp = cg_inp_raw(c, 1);
    int64_t ne[4] = { CHUNK, n_mel, 1, n_chunks };
    uint64_t nb[3] = { (uint64_t)n_frames * 4, CHUNK * 4, CHUNK * 4 };
    inp = gg_cont(g, gg_view(g, inp, 4, ne, nb, 0));
    for (int i = 1; i <= 3; i++) {
        int32_t w = cg_wreq(c, "a.conv2d.%d.weight", i);
        if (c->missing)
            return;
        inp = cg_conv_2d_pad(c, w, inp, 2, 2, 1, 1);
        int32_t b = cg_w(c, "a.conv2d.%d.bias", i);
        if (b >= 0)
            inp = cg_add(c, inp, cg_reshape(c, b, 1, 1, g->t[inp].ne[2], 1));
        inp = gg_unary_op(g, GGFIT_OP_UNARY, inp);
    }
    inp = gg_cont(g, gg_permute(g, inp, 2, 0, 1, 3));
    const gg_tensor *t = &g->t[inp];
    inp = cg_reshape(c, inp, t->ne[0] * t->ne[1], t->ne[2] * t->ne[3], 1, 1);
    int32_t out = cg_wreq(c, "a.conv_out.weight"), pos = cg_wreq(c, "a.position_embd.weight");
    if (c->missing)
        return;
    inp = gg_mul_mat(g, out, inp);
    int32_t b = cg_w(c, "a.conv_out.bias");
    if (b >= 0)
        inp = cg_add(c, inp, b);
    int64_t n_pos = g->t[inp].ne[1];
    /* positions 0.. of one chunk, repeated over the chunks */
    int64_t pne[2] = { g->t[pos].ne[0], n_pos / n_chunks };
    uint64_t pnb[1] = { g->t[pos].nb[1] };
    int32_t pos_tmp = gg_view(g, pos, 2, pne, pnb, 0);
    int32_t tgt = gg_new_2d(g, GGFIT_TYPE_F32, g->t[pos].ne[0], n_pos);
    inp = cg_add(c, inp, gg_repeat(g, pos_tmp, tgt));
    int32_t cur = cg_vit(c, inp, n_pos, CG_NORM_LAYER, c->hp->ffn_op, -1);
    if (cur < 0)
        return;
    cur = cg_ffn(c, cur, cg_wreq(c, "mm.a.mlp.1.weight"), cg_wreq(c, "mm.a.mlp.1.bias"), -1, -1,
                 cg_wreq(c, "mm.a.mlp.2.weight"), cg_wreq(c, "mm.a.mlp.2.bias"),
                 CLIP_FFN_GELU_ERF);
    if (!c->missing)
        gg_expand(g, cur);
}

/* load_hparams (QWEN3A with the Whisper-style encoders): GELU (erf) */
static void hparams_qwen3a(clip_model *m)
{
    ggfit__clip_u32(m, "clip.audio.projector.stack_factor", &m->hp.proj_stack_factor);
    m->hp.ffn_op = CLIP_FFN_GELU_ERF;
}

const clip_type ggfit__clip_qwen3a = {
    .name = "qwen3a", .hparams = hparams_qwen3a, .build = build_qwen3a,
};
