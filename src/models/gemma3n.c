/*
 * gemma3n.c - src/models/gemma3n.cpp: Gemma 3n. Each token carries
 * n_altup streams (AltUp) of which one goes through the block; the block
 * adds a low-rank residual (LAuReL) and a per-layer embedding of the token;
 * the first layers sparsify the FFN gate; iSWA, and the layers from
 * kv_from_start on attend over an earlier layer's cache without keys or
 * values of their own.
 */
#include <string.h>

#include "llama/graph.h"

/* llama_hparams: fixed for gemma3n, whatever the file says. */
enum {
    N_ALTUP = 4,             /* altup_num_inputs */
    I_ALTUP_ACT = 0,         /* altup_active_idx */
    N_EMBD_ALTUP = 256,      /* per-layer embedding width */
    N_LAYER_SPARSITY = 10,   /* layers whose FFN gate keeps the top 5% */
};

/* Slice idx of the last dimension of a 3-d tensor, as a 2-d view. */
static int32_t slice(bctx *b, int32_t x, int64_t idx)
{
    const gg_tensor *t = &b->g->t[x];
    uint64_t row = ggfit_row_bytes(t->type, (uint64_t)t->ne[0]);
    return gb_view_2d(b, x, t->ne[0], t->ne[1], row, (uint64_t)idx * row * (uint64_t)t->ne[1]);
}

/* Slices 1.. of the last dimension, as a 3-d view. */
static int32_t slices_rest(bctx *b, int32_t x)
{
    const gg_tensor *t = &b->g->t[x];
    uint64_t row = ggfit_row_bytes(t->type, (uint64_t)t->ne[0]);
    return gb_view_3d(b, x, t->ne[0], t->ne[1], t->ne[2] - 1, row, row * (uint64_t)t->ne[1],
                      row * (uint64_t)t->ne[1]);
}

static int32_t repeat_3d(bctx *b, int32_t x, int64_t ne0, int64_t ne1, int64_t ne2)
{
    int64_t ne[4] = { ne0, ne1, ne2, 1 };
    return gg_op_shape(b->g, GGFIT_OP_REPEAT, b->g->t[x].type, 4, ne, 1, &x);
}

/* calc_magnitude: the L2 norm of each row. */
static int32_t magnitude(bctx *b, int32_t x)
{
    gg_graph *g = b->g;
    return gg_unary_op(g, GGFIT_OP_SQRT, gg_sum_rows(g, gg_unary_op(g, GGFIT_OP_SQR, x)));
}

/* x * target / magnitude(x): the extra streams scaled to the active one. */
static int32_t match_magnitude(bctx *b, int32_t x, int32_t target)
{
    gg_graph *g = b->g;
    int32_t m = magnitude(b, x);
    return gg_binary(g, GGFIT_OP_DIV, gg_binary(g, GGFIT_OP_MUL, x, target), m);
}

/* build_inp_per_layer: the token's per-layer embeddings, n_embd_altup by
 * n_layer by n_tokens. */
static int32_t inp_per_layer(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_tokens = b->p->n_tokens;
    int32_t tokens = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, n_tokens), NULL);
    int32_t cur = gg_get_rows(g, gb_required(b, "per_layer_token_embd.weight", 0), tokens);
    cur = gb_reshape_3d(b, cur, N_EMBD_ALTUP, b->hp->n_layer, n_tokens);
    cur = gg_scale(g, cur);
    gb_cb(b, cur, "inp_per_layer_selected", -1);
    return cur;
}

/* project_per_layer_inputs: n_embd_altup by n_tokens by n_layer. */
static int32_t project_per_layer(bctx *b, int32_t inpL, int32_t per_layer)
{
    gg_graph *g = b->g;
    int32_t cur = gg_mul_mat(g, gb_required(b, "per_layer_model_proj.weight", 0), inpL);
    cur = gg_scale(g, cur);
    cur = gb_reshape_3d(b, cur, N_EMBD_ALTUP, b->hp->n_layer, b->p->n_tokens);
    cur = gb_norm(b, cur, gb_required(b, "per_layer_proj_norm.weight", 0), -1);
    gb_cb(b, cur, "per_layer_proj", -1);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, per_layer);
    cur = gg_scale(g, cur);
    gb_cb(b, cur, "inp_per_layer", -1);
    return gb_cont(b, gg_permute(g, cur, 0, 2, 1, 3));
}

/* laurel: a low-rank residual. */
static int32_t laurel(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t t = gg_mul_mat(g, gb_required(b, "blk.%d.laurel_l.weight", il), cur);
    t = gg_mul_mat(g, gb_required(b, "blk.%d.laurel_r.weight", il), t);
    t = gb_norm(b, t, gb_required(b, "blk.%d.laurel_post_norm.weight", il), il);
    t = gg_binary(g, GGFIT_OP_ADD, t, cur);
    gb_cb(b, t, "laurel_out", il);
    return t;
}

/* gaussian_topk: the gate less its mean plus 1.645 standard deviations,
 * through a ReLU. */
static int32_t gaussian_topk(bctx *b, int32_t x)
{
    gg_graph *g = b->g;
    const gg_tensor *t = &g->t[x];
    int64_t ne[4] = { 1, t->ne[1], t->ne[2], t->ne[3] };
    int32_t mean = gg_op_shape(g, GGFIT_OP_MEAN, GGFIT_TYPE_F32, 4, ne, 1, &x);
    int32_t var = gg_sum_rows(g, gg_unary_op(g, GGFIT_OP_SQR, gg_binary(g, GGFIT_OP_SUB, x, mean)));
    int32_t sd = gg_unary_op(g, GGFIT_OP_SQRT, gg_scale(g, var));
    int32_t cutoff = gg_binary(g, GGFIT_OP_ADD, mean, gg_scale(g, sd));
    return gg_unary_op(g, GGFIT_OP_UNARY, gg_binary(g, GGFIT_OP_SUB, x, cutoff));   /* relu */
}

/* altup_compute_router_modalities: n_altup weights a token. */
static int32_t router(bctx *b, int32_t x, int il)
{
    gg_graph *g = b->g;
    int32_t cur = gb_norm(b, x, gb_required(b, "blk.%d.altup_router_norm.weight", il), il);
    cur = gg_scale(g, cur);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.altup_router.weight", il), cur);
    return gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* tanh */
}

/* altup_predict: each stream as a mix of all, plus itself. */
static int32_t altup_predict(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int64_t n_tokens = b->p->n_tokens;
    int32_t modalities = router(b, slice(b, cur, I_ALTUP_ACT), il);
    gb_cb(b, modalities, "modalities", il);
    int32_t coefs = gg_mul_mat(g, gb_required(b, "blk.%d.altup_predict_coef.weight", il),
                               modalities);
    gb_cb(b, coefs, "all_coefs", il);
    coefs = gb_reshape_3d(b, coefs, N_ALTUP, N_ALTUP, n_tokens);
    int32_t permuted = gb_cont(b, gg_permute(g, cur, 1, 2, 0, 3));
    int32_t pred = gg_mul_mat(g, permuted, coefs);
    pred = gb_cont(b, gg_permute(g, pred, 0, 2, 1, 3));
    pred = gg_binary(g, GGFIT_OP_ADD, pred, cur);
    gb_cb(b, pred, "predictions", il);
    return pred;
}

/* altup_correct: the predictions plus the active stream's innovation,
 * weighted per stream. */
static int32_t altup_correct(bctx *b, int32_t pred, int32_t activated, int il)
{
    gg_graph *g = b->g;
    int64_t n_tokens = b->p->n_tokens, n_embd = b->hp->n_embd;
    int32_t modalities = router(b, activated, il);
    gb_cb(b, modalities, "modalities", il);
    int32_t innovation = gg_binary(g, GGFIT_OP_SUB, activated, slice(b, pred, I_ALTUP_ACT));
    gb_cb(b, innovation, "innovation", il);
    int32_t coefs = gg_mul_mat(g, gb_required(b, "blk.%d.altup_correct_coef.weight", il),
                               modalities);
    coefs = gg_scale(g, coefs);   /* ggml_scale_bias: + 1 */
    gb_cb(b, coefs, "all_coefs", il);
    coefs = gg_transpose(g, coefs);
    coefs = gb_cont_4d(b, coefs, 1, n_tokens, N_ALTUP, 1);
    innovation = repeat_3d(b, innovation, n_embd, n_tokens, N_ALTUP);
    int32_t corrected = gg_binary(g, GGFIT_OP_MUL, innovation, coefs);
    corrected = gg_binary(g, GGFIT_OP_ADD, corrected, pred);
    gb_cb(b, corrected, "corrected", il);
    return corrected;
}

/* Self-attention: Q, K, V with norms (V's without weights), or Q alone
 * over the shared cache. */
static int32_t attention(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
    uint32_t from = b->p->arch->kv_from_start;
    if (!from || (uint32_t)il < from) {
        int32_t q, k, v;
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        v = gb_norm(b, v, -1, il);
        gb_cb(b, q, "Qcur_normed", il);
        gb_cb(b, k, "Kcur_normed", il);
        gb_cb(b, v, "Vcur_normed", il);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur_pos", il);
        gb_cb(b, k, "Kcur_pos", il);
        return gb_attn_iswa(b, wo, -1, q, k, v, -1, il);
    }
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, q, "Qcur", il);
    q = gb_reshape_3d(b, q, b->hp->n_embd_head_k, li->n_head, b->p->n_tokens);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    q = gg_rope(g, q, b->inp_pos, -1);
    gb_cb(b, q, "Qcur_pos", il);
    /* llama.cpp's reuse callback: the last layer of the same kind */
    int il_kv = (int)from - ((b->p->layer_flags[il] & GB_LAYER_SWA) ? 2 : 1);
    return gb_attn_iswa_shared(b, wo, q, il, il_kv);
}

/* One block over the n_altup streams in inpL. */
static int32_t layer(bctx *b, int32_t inpL, int32_t per_layer, int il)
{
    gg_graph *g = b->g;
    int32_t pred = altup_predict(b, inpL, il);
    int32_t active = slice(b, pred, I_ALTUP_ACT);
    gb_cb(b, active, "active_prediction", il);
    int32_t cur = gb_norm(b, active, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t laurel_out = laurel(b, cur, il);
    cur = attention(b, cur, il);
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
    gb_cb(b, cur, "attn_post_norm", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, active);
    gb_cb(b, cur, "attn_gated", il);
    int32_t attn_laurel = gg_scale(g, gg_binary(g, GGFIT_OP_ADD, cur, laurel_out));
    gb_cb(b, attn_laurel, "attn_laurel", il);
    cur = gb_norm(b, attn_laurel, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);

    int32_t up = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    int32_t gate = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate.weight", il), cur);
    if (il < N_LAYER_SPARSITY)
        gate = gaussian_topk(b, gate);
    gate = gg_unary_op(g, GGFIT_OP_UNARY, gate);   /* gelu */
    cur = gg_binary(g, GGFIT_OP_MUL, up, gate);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
    gb_cb(b, cur, "ffn_out", il);
    /* llama.cpp norms the FFN output as layer -1: its "norm" is not pinned. */
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm.weight", il), -1);
    gb_cb(b, cur, "ffn_post_norm", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, attn_laurel);
    gb_cb(b, cur, "attn_ffw_laurel_gated", il);

    int32_t corrected = altup_correct(b, pred, cur, il);
    int32_t first = slice(b, corrected, I_ALTUP_ACT);
    first = gg_binary(g, GGFIT_OP_MUL, first,
                      gb_required(b, "blk.%d.altup_correct_scale.weight", il));
    first = gg_mul_mat(g, gb_required(b, "blk.%d.inp_gate.weight", il), first);
    first = gg_unary_op(g, GGFIT_OP_UNARY, first);   /* gelu */
    gb_cb(b, first, "first_prediction_gated", il);
    first = gg_binary(g, GGFIT_OP_MUL, first, slice(b, per_layer, il));
    gb_cb(b, first, "first_prediction_scaled", il);
    first = gg_mul_mat(g, gb_required(b, "blk.%d.proj.weight", il), first);
    first = gb_norm(b, first, gb_required(b, "blk.%d.post_norm.weight", il), il);
    gb_cb(b, first, "first_prediction_out", il);

    /* corrected[1:] += first */
    int32_t head = slice(b, corrected, 0);
    int32_t rest = gg_binary(g, GGFIT_OP_ADD, slices_rest(b, corrected), first);
    cur = gg_concat(g, head, rest, 2);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_gemma3n::graph */
static void build_gemma3n(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int64_t n_tokens = b->p->n_tokens, n_embd = b->hp->n_embd;
    if (!b->p->swa) {   /* llama.cpp always builds gemma3n on iSWA caches */
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    inpL = gg_scale(g, inpL);   /* by sqrt(n_embd) */
    gb_cb(b, inpL, "inp_scaled", -1);
    gb_inputs_kv_iswa(b);
    int32_t per_layer = inp_per_layer(b);
    gg_expand(g, per_layer);
    per_layer = project_per_layer(b, inpL, per_layer);

    /* The other streams: the embeddings projected, at the same magnitude. */
    int32_t target = magnitude(b, inpL);
    int32_t added = gg_mul_mat(g, gb_required(b, "altup_proj.weight", 0),
                               repeat_3d(b, inpL, n_embd, n_tokens, N_ALTUP - 1));
    added = match_magnitude(b, added, target);
    inpL = gg_concat(g, inpL, added, 2);
    gb_cb(b, inpL, "inp_stacked", -1);

    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, per_layer, il);

    /* The streams merged back into one: their mean. */
    target = magnitude(b, slice(b, inpL, I_ALTUP_ACT));
    int32_t unembd = gg_mul_mat(g, gb_required(b, "altup_unembd_proj.weight", 0),
                                slices_rest(b, inpL));
    unembd = match_magnitude(b, unembd, target);
    gb_cb(b, unembd, "altup_unembd", -1);
    int32_t cur = slice(b, inpL, 0);
    for (int i = 0; i < N_ALTUP - 1; i++)
        cur = gg_binary(g, GGFIT_OP_ADD, cur, slice(b, unembd, i));
    cur = gg_scale(g, cur);
    gb_cb(b, cur, "unembd_merged", -1);

    cur = gg_get_rows(g, cur, b->inp_out_ids);
    cur = gb_norm(b, cur, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    cur = gg_scale(g, cur);   /* final logit soft-capping */
    cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* tanh */
    cur = gg_scale(g, cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* llama_model_gemma3n::load_tensors: the per-layer projection and its norm
 * are repeating tensors outside the blocks, created for block 0. */
static int64_t tensor_layer_gemma3n(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    const char *n = t->info->name;
    if (!strncmp(n, "per_layer_model_proj.", 21) || !strncmp(n, "per_layer_proj_norm.", 20))
        return 0;
    return -2;
}

/* The blocks from the 20th on reuse the caches of blocks 18 (sliding
 * window) and 19 (llama_hparams::n_layer_kv_from_start); the tied output's
 * copy of token_embd is made before token_embd itself. */
const ggfit_arch ggfit__model_gemma3n = {
    .name = "gemma3n",
    .required_keys = (const char *const[]){ "attention.sliding_window",
            "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 5,
    .kv_from_start = 20,
    .tied_output_copied = true,
    .build = build_gemma3n,
    .tensor_layer = tensor_layer_gemma3n,
};
