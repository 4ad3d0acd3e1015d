/*
 * mm_llava.c - tools/mtmd/models/llava.cpp: the CLIP ViT of LLaVA 1.5 /
 * 1.6 and those derived from it (a [CLS] token, looked-up learned
 * positions, layers up to the feature layer: by default the one before
 * the last; with clip.vision.feature_layer (Granite Vision), the deepest
 * listed, the listed layers' inputs stacked), the patches picked out
 * (dropping [CLS]), then the projector: "mlp" (two matmuls around a
 * GELU) or, when the file has mm.3, the Yi-style MLP with layer norms;
 * MobileVLM's "ldp" and "ldpv2" (depthwise convolutions over the 24 x 24
 * patches).
 */
#include <stdio.h>
#include <string.h>

#include "mtmd/clip.h"

enum { MAX_FEATURE_LAYERS = 16 };

/* clip.vision.feature_layer, in the file's order; their count */
static int feature_layers(const clip_graph *c, int32_t out[MAX_FEATURE_LAYERS])
{
    int64_t k = ggfit_gguf_find_key(c->m->g, "clip.vision.feature_layer");
    ggfit_value arr, v;
    ggfit_value_iter it = { 0 };
    int n = 0;
    if (k < 0 || !ggfit_gguf_value(c->m->g, (uint64_t)k, &arr) || arr.type != GGFIT_GGUF_ARRAY)
        return 0;
    while (n < MAX_FEATURE_LAYERS && ggfit_value_next(&arr, &it, &v))
        out[n++] = (int32_t)(v.type == GGFIT_GGUF_INT32 ? v.i : (int64_t)v.u);
    return n;
}

static bool listed(const int32_t *fl, int n, int il)
{
    for (int i = 0; i < n; i++)
        if (fl[i] == il)
            return true;
    return false;
}

static int32_t clip_layer(clip_graph *c, int32_t inpL, int il, int64_t n_pos)
{
    int32_t cur = cg_norm(c, inpL, cg_w(c, "v.blk.%d.ln1.weight", il),
                          cg_w(c, "v.blk.%d.ln1.bias", il), CG_NORM_LAYER);
    static const char *const n[3] = { "q", "k", "v" };
    int32_t qkv[3], b;
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
    inpL = cg_add(c, cur, inpL);
    cur = cg_norm(c, inpL, cg_w(c, "v.blk.%d.ln2.weight", il), cg_w(c, "v.blk.%d.ln2.bias", il),
                  CG_NORM_LAYER);
    cur = cg_ffn(c, cur, cg_wreq(c, "v.blk.%d.ffn_up.weight", il),
                 cg_w(c, "v.blk.%d.ffn_up.bias", il), cg_w(c, "v.blk.%d.ffn_gate.weight", il),
                 cg_w(c, "v.blk.%d.ffn_gate.bias", il), cg_wreq(c, "v.blk.%d.ffn_down.weight", il),
                 cg_w(c, "v.blk.%d.ffn_down.bias", il), c->hp->ffn_op);
    return cg_add(c, inpL, cur);
}

/* mm.N's matmul plus its bias */
static int32_t linear(clip_graph *c, int i, int32_t x)
{
    return cg_add(c, cg_mm(c, cg_wreq(c, "mm.%d.weight", i), x), cg_wreq(c, "mm.%d.bias", i));
}

/* a layer norm with mm.N's weight and bias */
static int32_t mm_norm(clip_graph *c, int i, int32_t x)
{
    return cg_add(c, cg_mul(c, gg_norm(c->g, x), cg_wreq(c, "mm.%d.weight", i)),
                  cg_wreq(c, "mm.%d.bias", i));
}

static int32_t unary(clip_graph *c, int32_t a)
{
    return gg_unary_op(c->g, GGFIT_OP_UNARY, a);
}

/* mm.model.mlp.N: a matmul and its bias */
static int32_t mvlm_linear(clip_graph *c, const char *name, int32_t x)
{
    return cg_add(c, cg_mm(c, cg_wreq(c, "mm.model.%s.weight", name), x),
                  cg_wreq(c, "mm.model.%s.bias", name));
}

/* [D, 576] as a 24 x 24 grid [24, 24, D] */
static int32_t grid24(clip_graph *c, int32_t x)
{
    int32_t p = gg_permute(c->g, x, 1, 0, 2, 3);
    const gg_tensor *t = &c->g->t[p];
    return cg_cont(c, p, 24, 24, t->ne[1], t->ne[2]);
}

/* a LayerNorm over the channels of a [W, H, C] grid, back to [W, H, C] */
static int32_t norm_channels(clip_graph *c, int32_t x, const char *w, const char *b)
{
    gg_graph *g = c->g;
    x = gg_cont(g, gg_permute(g, x, 1, 2, 0, 3));
    x = cg_add(c, cg_mul(c, gg_norm(g, x), cg_wreq(c, "%s", w)), cg_wreq(c, "%s", b));
    return gg_cont(g, gg_permute(g, x, 2, 0, 1, 3));
}

/* MobileVLM's LDP block (blk 1: stride 1 and a residual; 2: stride 2) */
static int32_t ldp_block(clip_graph *c, int32_t x, int blk)
{
    gg_graph *g = c->g;
    char n0w[64], n0nw[64], n0nb[64], f1[64], f2[64], p0[64], pnw[64], pnb[64];
    snprintf(n0w, sizeof n0w, "mm.model.mb_block.%d.block.0.0.weight", blk);
    snprintf(n0nw, sizeof n0nw, "mm.model.mb_block.%d.block.0.1.weight", blk);
    snprintf(n0nb, sizeof n0nb, "mm.model.mb_block.%d.block.0.1.bias", blk);
    snprintf(f1, sizeof f1, "mb_block.%d.block.1.fc1", blk);
    snprintf(f2, sizeof f2, "mb_block.%d.block.1.fc2", blk);
    snprintf(p0, sizeof p0, "mm.model.mb_block.%d.block.2.0.weight", blk);
    snprintf(pnw, sizeof pnw, "mm.model.mb_block.%d.block.2.1.weight", blk);
    snprintf(pnb, sizeof pnb, "mm.model.mb_block.%d.block.2.1.bias", blk);
    int32_t k = cg_wreq(c, "%s", n0w);
    if (c->missing)
        return -1;
    int32_t y = cg_conv_2d_dw(c, k, x, blk == 1 ? 1 : 2, 1);
    y = norm_channels(c, y, n0nw, n0nb);
    int32_t hw = gg_unary_op(g, GGFIT_OP_UNARY, y);   /* hardswish */
    const gg_tensor *t = &g->t[hw];
    int64_t pne[4] = { 1, 1, t->ne[2], t->ne[3] };   /* a global average pool */
    y = gg_op_shape(g, GGFIT_OP_POOL_2D, GGFIT_TYPE_F32, 4, pne, 1, &hw);
    y = cg_reshape(c, y, g->t[y].ne[2], g->t[y].ne[3], 1, 1);
    y = unary(c, mvlm_linear(c, f1, y));   /* relu */
    y = unary(c, mvlm_linear(c, f2, y));   /* hardsigmoid */
    y = cg_reshape(c, y, 1, 1, g->t[y].ne[0], g->t[y].ne[1]);
    y = cg_mul(c, hw, y);
    int64_t w = g->t[y].ne[0], h = g->t[y].ne[1];
    y = cg_reshape(c, y, w * h, g->t[y].ne[2], g->t[y].ne[3], 1);
    y = gg_cont(g, gg_permute(g, y, 1, 0, 2, 3));
    y = cg_mm(c, cg_wreq(c, "%s", p0), y);
    if (c->missing)
        return -1;
    y = cg_reshape(c, y, g->t[y].ne[0], w, h, g->t[y].ne[3]);
    y = cg_add(c, cg_mul(c, gg_norm(g, y), cg_wreq(c, "%s", pnw)), cg_wreq(c, "%s", pnb));
    if (blk == 1)
        return cg_add(c, x, gg_cont(g, gg_permute(g, y, 2, 0, 1, 3)));
    return cg_reshape(c, y, g->t[y].ne[0], g->t[y].ne[1] * g->t[y].ne[2], g->t[y].ne[3], 1);
}

/* the MobileVLM projectors, on the 24 x 24 patches */
static int32_t ldp(clip_graph *c, int32_t emb, bool v2)
{
    gg_graph *g = c->g;
    if (!v2) {
        int32_t x = mvlm_linear(c, "mlp.3", unary(c, mvlm_linear(c, "mlp.1", emb)));
        x = ldp_block(c, grid24(c, x), 1);
        return x < 0 ? -1 : ldp_block(c, x, 2);
    }
    int32_t x = mvlm_linear(c, "mlp.2", unary(c, mvlm_linear(c, "mlp.0", emb)));
    x = grid24(c, x);
    const gg_tensor *t = &g->t[x];
    int64_t ne[4] = { t->ne[0] / 2, t->ne[1] / 2, t->ne[2], t->ne[3] };
    x = gg_op_shape(g, GGFIT_OP_POOL_2D, GGFIT_TYPE_F32, 4, ne, 1, &x);
    int32_t k = cg_wreq(c, "mm.model.peg.0.weight");
    if (c->missing)
        return -1;
    int32_t peg = gg_cont(g, gg_permute(g, cg_conv_2d_dw(c, k, x, 1, 1), 1, 2, 0, 3));
    peg = cg_add(c, peg, cg_wreq(c, "mm.model.peg.0.bias"));
    peg = cg_add(c, peg, gg_cont(g, gg_permute(g, x, 1, 2, 0, 3)));
    t = &g->t[peg];
    return cg_reshape(c, peg, t->ne[0], t->ne[1] * t->ne[2], t->ne[3], 1);
}

static void build_llava(clip_graph *c)
{
    gg_graph *g = c->g;
    int32_t fl[MAX_FEATURE_LAYERS];
    int n_fl = feature_layers(c, fl), max_layer = -1;
    for (int i = 0; i < n_fl; i++)
        if (fl[i] > max_layer)
            max_layer = fl[i];
    if (max_layer < 0)
        max_layer = (int)c->n_layer - 1;
    if (c->n_patches_x != c->n_patches_y || max_layer > c->n_layer) {
        c->missing = true;
        return;
    }
    int32_t cls = cg_w(c, "v.class_embd"), pos = cg_wreq(c, "v.position_embd.weight");
    int64_t n_pos = c->n_patches + (cls >= 0);
    int32_t inp = cg_inp(c);
    if (inp < 0 || c->missing)
        return;
    if (cls >= 0)
        inp = gg_concat(g, inp, cls, 1);
    int32_t positions = cg_input(c, GGFIT_TYPE_I32, n_pos, 1, 1, 1, "positions");
    int32_t inpL = cg_add(c, inp, gg_get_rows(g, pos, positions)), w;
    if ((w = cg_w(c, "v.pre_ln.weight")) >= 0)
        inpL = cg_norm(c, inpL, w, cg_w(c, "v.pre_ln.bias"), CG_NORM_LAYER);
    int32_t stack[MAX_FEATURE_LAYERS + 1];
    int n_stack = 0;
    for (int il = 0; il < max_layer && inpL >= 0; il++) {
        if (listed(fl, n_fl, il))
            stack[n_stack++] = inpL;
        inpL = clip_layer(c, inpL, il, n_pos);
    }
    if (inpL < 0)
        return;
    if ((w = cg_w(c, "v.post_ln.weight")) >= 0)
        inpL = cg_norm(c, inpL, w, cg_w(c, "v.post_ln.bias"), CG_NORM_LAYER);
    if (listed(fl, n_fl, max_layer))
        stack[n_stack++] = inpL;
    int32_t emb = n_stack ? stack[0] : inpL;
    for (int i = 1; i < n_stack; i++)
        emb = gg_concat(g, emb, stack[i], 0);
    emb = cg_reshape(c, emb, g->t[emb].ne[0], g->t[emb].ne[1], 1, 1);
    emb = gg_get_rows(g, emb, cg_input(c, GGFIT_TYPE_I32, c->n_patches, 1, 1, 1, "patches"));
    const char *type = c->m->type->name;
    if (!strcmp(type, "ldp") || !strcmp(type, "ldpv2")) {
        if (c->n_patches != 24 * 24) {   /* the projector is for 24 x 24 patches */
            c->missing = true;
            return;
        }
        emb = ldp(c, emb, type[3] == 'v');
    } else if (cg_w(c, "mm.3.weight") >= 0) {   /* Yi-type: PROJECTOR_TYPE_MLP_NORM */
        emb = gg_unary_op(g, GGFIT_OP_UNARY, mm_norm(c, 1, linear(c, 0, emb)));
        emb = mm_norm(c, 4, linear(c, 3, emb));
    } else {
        emb = gg_unary_op(g, GGFIT_OP_UNARY, linear(c, 0, emb));
        if (cg_w(c, "mm.2.weight") >= 0)
            emb = linear(c, 2, emb);
    }
    if (!c->missing)
        gg_expand(g, emb);
}

const clip_type ggfit__clip_mlp = { .name = "mlp", .build = build_llava };
const clip_type ggfit__clip_ldp = { .name = "ldp", .build = build_llava };
const clip_type ggfit__clip_ldpv2 = { .name = "ldpv2", .build = build_llava };
