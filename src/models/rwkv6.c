/*
 * rwkv6.c - src/models/rwkv6.cpp and rwkv6qwen2.cpp on rwkv6-base.cpp:
 * RWKV v6 (Finch), every layer a time mix (the wkv6 recurrence over a
 * wkv state) and a channel mix, each shifted by one token (token shift,
 * carried between ubatches in the r state); RWKV6-Qwen2 keeps the time mix
 * (as QRWKV, gated linear attention, when time_mix_first is absent) with a
 * Qwen2 SwiGLU FFN and RMS norms, one token shift per layer.
 */
#include <string.h>

#include "llama/check.h"
#include "llama/graph.h"

/* A 1-d view of n elements of t from byte offs (ggml_view_1d). */
static int32_t view_1d(bctx *b, int32_t t, int64_t n, uint64_t offs)
{
    return gg_view(b->g, t, 1, &n, NULL, offs);
}

/* n_embd x n x n_seqs of t (3-d), from token `from` of each sequence. */
static int32_t tokens_view(bctx *b, int32_t t, int64_t n, int64_t from)
{
    const gg_tensor *x = &b->g->t[t];
    return gb_view_3d(b, t, b->hp->n_embd, n, b->p->n_seqs, x->nb[1], x->nb[2],
                      (uint64_t)from * b->hp->n_embd * 4);
}

static int32_t binop(bctx *b, int op, int32_t x, int32_t y)
{
    return gg_binary(b->g, (uint8_t)op, x, y);
}

static int32_t unop(bctx *b, int op, int32_t x)
{
    return gg_unary_op(b->g, (uint8_t)op, x);
}

/* x + (x_prev - x) * lerp, the interpolation every mix starts with. */
static int32_t lerp(bctx *b, int32_t sx, int32_t w, int32_t x)
{
    return binop(b, GGFIT_OP_ADD, binop(b, GGFIT_OP_MUL, sx, w), x);
}

/* llm_build_rwkv6_base::build_rwkv6_time_mix. */
static int32_t time_mix(bctx *b, int32_t cur, int32_t x_prev, int32_t s_all, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t n_tokens = b->p->n_tokens, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = n_tokens / n_seqs, n_embd = hp->n_embd;
    /* a whole number of heads, at least one: hc_wkv_heads() */
    int64_t head_size = hp->wkv_head_size, n_head = n_embd / head_size;
    int64_t n_head_kv = ggfit_model_layer(b->p->m, (uint32_t)il)->n_head_kv;
    int32_t first = gb_weight(b, "blk.%d.time_mix_first.weight", il);
    bool qrwkv = first < 0;

    int32_t sx = binop(b, GGFIT_OP_SUB, x_prev, cur);
    sx = gb_reshape_2d(b, sx, n_embd, n_tokens);
    cur = gb_reshape_2d(b, cur, n_embd, n_tokens);
    int32_t xxx = lerp(b, sx, gb_required(b, "blk.%d.time_mix_lerp_x.weight", il), cur);
    int32_t w1 = gb_required(b, "blk.%d.time_mix_w1.weight", il);
    xxx = unop(b, GGFIT_OP_UNARY, gg_mul_mat(g, w1, xxx));
    xxx = gb_reshape_4d(b, xxx, gb_ne(b, w1, 1) / 5, 1, 5, n_tokens);
    xxx = gb_cont(b, gg_permute(g, xxx, 0, 1, 3, 2));
    int32_t w2 = gb_required(b, "blk.%d.time_mix_w2.weight", il);
    if (b->missing)
        return cur;
    xxx = gg_mul_mat(g, gb_reshape_4d(b, w2, gb_ne(b, w2, 0), gb_ne(b, w2, 1), 1, 5), xxx);

    int32_t x5[5];   /* w, k, v, r, g */
    int32_t fused = gb_weight(b, "blk.%d.time_mix_lerp_fused.weight", il);
    uint64_t step = (uint64_t)n_embd * n_tokens * 4;
    if (fused >= 0) {
        sx = gb_reshape_3d(b, sx, n_embd, 1, n_tokens);
        cur = gb_reshape_3d(b, cur, n_embd, 1, n_tokens);
        xxx = lerp(b, binop(b, GGFIT_OP_ADD, xxx, fused), sx, cur);
        for (int i = 0; i < 5; i++)
            x5[i] = gb_view_2d(b, xxx, n_embd, n_tokens, g->t[xxx].nb[1], i * step);
    } else {
        static const char *const names[5] = {
            "blk.%d.time_mix_lerp_w.weight", "blk.%d.time_mix_lerp_k.weight",
            "blk.%d.time_mix_lerp_v.weight", "blk.%d.time_mix_lerp_r.weight",
            "blk.%d.time_mix_lerp_g.weight",
        };
        for (int i = 0; i < 5; i++)
            x5[i] = gb_view_2d(b, xxx, n_embd, n_tokens, g->t[xxx].nb[1], i * step);
        for (int i = 0; i < 5; i++)
            x5[i] = lerp(b, binop(b, GGFIT_OP_ADD, x5[i], gb_required(b, names[i], il)), sx,
                         cur);
    }
    int32_t r = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_receptance.weight", il), x5[3]);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_key.weight", il), x5[1]);
    int32_t v = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_value.weight", il), x5[2]);
    int32_t bias;
    if ((bias = gb_weight(b, "blk.%d.time_mix_receptance.bias", il)) >= 0)
        r = binop(b, GGFIT_OP_ADD, r, bias);
    if ((bias = gb_weight(b, "blk.%d.time_mix_key.bias", il)) >= 0)
        k = binop(b, GGFIT_OP_ADD, k, bias);
    if ((bias = gb_weight(b, "blk.%d.time_mix_value.bias", il)) >= 0)
        v = binop(b, GGFIT_OP_ADD, v, bias);
    int32_t gate = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_gate.weight", il), x5[4]);
    gate = unop(b, GGFIT_OP_UNARY, gate);   /* sigmoid (QRWKV) or SiLU */
    if (n_head_kv != 0 && n_head_kv != n_head) {
        if (n_head % n_head_kv) {
            b->missing = true;
            return cur;
        }
        k = gb_reshape_4d(b, k, head_size, 1, n_head_kv, n_tokens);
        v = gb_reshape_4d(b, v, head_size, 1, n_head_kv, n_tokens);
        int64_t ne[4] = { head_size, n_head / n_head_kv, n_head_kv, n_tokens };
        k = gg_op_shape(g, GGFIT_OP_REPEAT, GGFIT_TYPE_F32, 4, ne, 1, &k);
        v = gg_op_shape(g, GGFIT_OP_REPEAT, GGFIT_TYPE_F32, 4, ne, 1, &v);
    }
    k = gb_reshape_3d(b, k, head_size, n_head, n_tokens);
    v = gb_reshape_3d(b, v, head_size, n_head, n_tokens);
    r = gb_reshape_3d(b, r, head_size, n_head, n_tokens);

    int32_t w = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_decay_w1.weight", il), x5[0]);
    w = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_decay_w2.weight", il),
                   unop(b, GGFIT_OP_UNARY, w));
    w = binop(b, GGFIT_OP_ADD, w, gb_required(b, "blk.%d.time_mix_decay.weight", il));
    w = unop(b, GGFIT_OP_UNARY, unop(b, GGFIT_OP_UNARY, unop(b, GGFIT_OP_UNARY, w)));
    w = gb_reshape_3d(b, w, head_size, n_head, n_tokens);
    if (qrwkv)
        k = binop(b, GGFIT_OP_SUB, k, binop(b, GGFIT_OP_MUL, k, w));

    int64_t n_embd_s = n_embd * head_size;
    int32_t state = gb_rs(b, s_all, n_embd_s, NULL, NULL);
    int64_t ne[4] = { n_embd, n_tokens + head_size * n_seqs, 1, 1 };
    int32_t out;
    if (qrwkv) {
        int32_t src[5] = { k, v, r, w, state };
        out = gg_op_shape(g, GGFIT_OP_GATED_LINEAR_ATTN, GGFIT_TYPE_F32, 4, ne, 5, src);
    } else {
        int32_t src[6] = { k, v, r, first, w, state };
        out = gg_op_shape(g, GGFIT_OP_RWKV_WKV6, GGFIT_TYPE_F32, 4, ne, 6, src);
    }
    cur = view_1d(b, out, n_embd * n_tokens, 0);
    state = view_1d(b, out, n_embd * head_size * n_seqs, (uint64_t)n_embd * n_tokens * 4);
    gg_expand(g, gg_cpy(g, state, view_1d(b, s_all, n_embd_s * n_seqs, 0)));

    if (!qrwkv) {
        /* group norm with one group per head */
        cur = gb_reshape_3d(b, cur, n_embd / n_head, n_head, n_tokens);
        cur = gg_norm(g, cur);
        cur = gb_reshape_2d(b, cur, n_embd, n_tokens);
        cur = lerp(b, cur, gb_required(b, "blk.%d.time_mix_ln.weight", il),
                   gb_required(b, "blk.%d.time_mix_ln.bias", il));
    } else {
        cur = gb_reshape_2d(b, cur, n_embd, n_tokens);
    }
    cur = binop(b, GGFIT_OP_MUL, cur, gate);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_output.weight", il), cur);
    return gb_reshape_3d(b, cur, n_embd, n_seq_tokens, n_seqs);
}

/* llm_build_rwkv6_base::build_rwkv6_channel_mix. */
static int32_t channel_mix(bctx *b, int32_t cur, int32_t x_prev, int il)
{
    gg_graph *g = b->g;
    int32_t sx = binop(b, GGFIT_OP_SUB, x_prev, cur);
    int32_t xk = lerp(b, sx, gb_required(b, "blk.%d.channel_mix_lerp_k.weight", il), cur);
    int32_t xr = lerp(b, sx, gb_required(b, "blk.%d.channel_mix_lerp_r.weight", il), cur);
    int32_t r = gg_mul_mat(g, gb_required(b, "blk.%d.channel_mix_receptance.weight", il), xr);
    r = unop(b, GGFIT_OP_UNARY, r);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.channel_mix_key.weight", il), xk);
    k = unop(b, GGFIT_OP_SQR, unop(b, GGFIT_OP_UNARY, k));
    return binop(b, GGFIT_OP_MUL, r,
                 gg_mul_mat(g, gb_required(b, "blk.%d.channel_mix_value.weight", il), k));
}

/* The inputs after the embeddings: the state copies, then the output ids. */
static void inputs(bctx *b)
{
    gb_inputs_rs(b);
    b->inp_out_ids = gg_input(b->g, gg_new_1d(b->g, GGFIT_TYPE_I32, b->p->n_outputs), NULL);
}

/* The end: output_norm (layer norm with bias, or RMS with an optional
 * bias), then the output matrix. */
static void output(bctx *b, int32_t cur, bool rms)
{
    gg_graph *g = b->g;
    int32_t w = gb_required(b, "output_norm.weight", 0);
    int32_t bias = gb_weight(b, "output_norm.bias", 0);
    if (rms) {
        cur = gb_norm(b, cur, w, -1);
        if (bias >= 0) {
            gb_cb(b, cur, "norm_w", -1);
            cur = binop(b, GGFIT_OP_ADD, cur, bias);
        }
    } else {
        cur = gb_layer_norm(b, cur, w, bias, -1);
    }
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* llama_model_rwkv6::graph: two token shifts per layer (time and channel
 * mix), layer norms with biases, rescale_every_n_layers halving. */
static void build_rwkv6(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int64_t n_embd = hp->n_embd, n_tokens = b->p->n_tokens, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = n_tokens / n_seqs;
    uint32_t rescale = (uint32_t)gb_key(b, "rescale_every_n_layers", 0);
    if (hp->token_shift_count != 2) {
        b->missing = true;   /* llama.cpp asserts */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    inpL = gb_layer_norm(b, inpL, gb_required(b, "token_embd_norm.weight", 0),
                         gb_required(b, "token_embd_norm.bias", 0), 0);
    inputs(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        inpL = gb_reshape_3d(b, inpL, n_embd, n_seq_tokens, n_seqs);
        int32_t r_all = gb_state(b, il, 'r');
        int32_t ts = gb_rwkv_shift_load(b, r_all);
        const gg_tensor *t = &g->t[ts];
        int32_t att_shift = gb_view_3d(b, ts, n_embd, 1, n_seqs, t->nb[1], t->nb[2], 0);
        int32_t ffn_shift = gb_view_3d(b, ts, n_embd, 1, n_seqs, t->nb[1], t->nb[2],
                                       (uint64_t)n_embd * 4);
        int32_t att_norm = gb_layer_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il),
                                         gb_required(b, "blk.%d.attn_norm.bias", il), il);
        gb_cb(b, att_norm, "attn_norm", il);
        int32_t x_prev = gg_concat(g, att_shift, tokens_view(b, att_norm, n_seq_tokens - 1, 0), 1);
        int32_t cur = time_mix(b, att_norm, x_prev, gb_state(b, il, 's'), il);
        if (b->missing)
            return;
        int32_t ffn_inp = binop(b, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        int32_t ffn_norm = gb_layer_norm(b, ffn_inp,
                                         gb_required(b, "blk.%d.attn_norm_2.weight", il),
                                         gb_required(b, "blk.%d.attn_norm_2.bias", il), il);
        gb_cb(b, ffn_norm, "ffn_norm", il);
        x_prev = gg_concat(g, ffn_shift, tokens_view(b, ffn_norm, n_seq_tokens - 1, 0), 1);
        ts = gg_concat(g, tokens_view(b, att_norm, 1, n_seq_tokens - 1),
                       tokens_view(b, ffn_norm, 1, n_seq_tokens - 1), 1);
        gb_rwkv_shift_store(b, ts, r_all);

        ffn_inp = gb_reshape_2d(b, ffn_inp, n_embd, n_tokens);
        ffn_norm = gb_reshape_2d(b, ffn_norm, n_embd, n_tokens);
        x_prev = gb_reshape_2d(b, x_prev, n_embd, n_tokens);
        if (il == n_layer - 1) {
            ffn_inp = gg_get_rows(g, ffn_inp, b->inp_out_ids);
            ffn_norm = gg_get_rows(g, ffn_norm, b->inp_out_ids);
            x_prev = gg_get_rows(g, x_prev, b->inp_out_ids);
        }
        cur = channel_mix(b, ffn_norm, x_prev, il);
        cur = binop(b, GGFIT_OP_ADD, cur, ffn_inp);
        if (rescale && (uint32_t)(il + 1) % rescale == 0)
            cur = gg_scale(g, cur);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (!b->missing)
        output(b, inpL, false);
}

/* llama_model_rwkv6qwen2::graph: one token shift per layer (the time
 * mix's), RMS norms, a SwiGLU FFN. */
static void build_rwkv6qwen2(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int64_t n_embd = hp->n_embd, n_tokens = b->p->n_tokens, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = n_tokens / n_seqs;
    if (hp->token_shift_count != 1) {
        b->missing = true;   /* llama.cpp asserts n_embd == n_embd_r() */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    inputs(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        inpL = gb_reshape_3d(b, inpL, n_embd, n_seq_tokens, n_seqs);
        int32_t r_all = gb_state(b, il, 'r');
        int32_t ts = gb_rwkv_shift_load(b, r_all);
        int32_t att_norm = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, att_norm, "attn_norm", il);
        int32_t x_prev = gg_concat(g, ts, tokens_view(b, att_norm, n_seq_tokens - 1, 0), 1);
        int32_t cur = time_mix(b, att_norm, x_prev, gb_state(b, il, 's'), il);
        if (b->missing)
            return;
        gb_rwkv_shift_store(b, tokens_view(b, att_norm, 1, n_seq_tokens - 1), r_all);
        int32_t ffn_inp = binop(b, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        ffn_inp = gb_reshape_2d(b, ffn_inp, n_embd, n_tokens);
        if (il == n_layer - 1)
            ffn_inp = gg_get_rows(g, ffn_inp, b->inp_out_ids);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = binop(b, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (!b->missing)
        output(b, inpL, true);
}

/* llama_hparams::n_embd_r and n_embd_s for RWKV: token_shift_count token
 * shifts of n_embd, and the wkv state, head_size values per channel. */
static void state_size(const ggfit_hparams *hp, uint64_t *r, uint64_t *s)
{
    *r = (uint64_t)hp->token_shift_count * hp->n_embd;
    *s = (uint64_t)hp->n_embd * hp->wkv_head_size;
}

/* load_tensors: the embeddings' norm (rwkv6, rwkv7) is done on the first
 * layer (LLM_TENSOR_TOKEN_EMBD_NORM is a repeating-layer tensor of block 0). */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    if (!strncmp(t->info->name, "token_embd_norm.", 16))
        return 0;
    return -2;
}

/* RWKV6 also converts rescale_every_n_layers to an integer. */
static void check_rwkv6(hp_check *c)
{
    hc_wkv_heads(c);
    hc_key_int(c, "rescale_every_n_layers", 0, UINT32_MAX, 0, NULL,
               "llama.cpp reads it as an unsigned 32-bit count");
}

/* Recurrent memory only, a state in every layer. */
const ggfit_arch ggfit__model_rwkv6 = {
    .name = "rwkv6",
    .required_keys = (const char *const[]){ "wkv.head_size", "time_mix_extra_dim",
            "time_decay_extra_dim", NULL },
    .mem = GGFIT_MEM_RECURRENT,
    .rec = GGFIT_REC_ALL,
    .check = check_rwkv6,
    .build = build_rwkv6,
    .tensor_layer = tensor_layer,
    .state_size = state_size,
};

const ggfit_arch ggfit__model_rwkv6qwen2 = {
    .name = "rwkv6qwen2",
    .required_keys = (const char *const[]){ "wkv.head_size", "time_mix_extra_dim",
            "time_decay_extra_dim", NULL },
    .mem = GGFIT_MEM_RECURRENT,
    .rec = GGFIT_REC_ALL,
    .check = hc_wkv_heads,
    .build = build_rwkv6qwen2,
    .state_size = state_size,
};
