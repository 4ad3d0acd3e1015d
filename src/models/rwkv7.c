/*
 * rwkv7.c - src/models/rwkv7.cpp and arwkv7.cpp on rwkv7-base.cpp: RWKV v7
 * (Goose), every layer a time mix (the wkv7 recurrence over a wkv state,
 * with the first layer's values mixed into the later ones) and a channel
 * mix, each shifted by one token; ARWKV7 keeps the time mix (its gate and
 * group norm optional) with a SwiGLU FFN and RMS norms, one token shift per
 * layer.
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

/* x + (x_prev - x) * lerp. */
static int32_t lerp(bctx *b, int32_t sx, int32_t w, int32_t x)
{
    return binop(b, GGFIT_OP_ADD, binop(b, GGFIT_OP_MUL, sx, w), x);
}

/* w2 x (w1 x x), a LoRA-style pair of products. */
static int32_t lora(bctx *b, const char *w2, const char *w1, int32_t x, int il)
{
    int32_t t = gg_mul_mat(b->g, gb_required(b, w1, il), x);
    return gg_mul_mat(b->g, gb_required(b, w2, il), t);
}

/* llm_build_rwkv7_base::build_rwkv7_time_mix; *v_first is the first
 * layer's values (-1 before it). */
static int32_t time_mix(bctx *b, int32_t cur, int32_t x_prev, int32_t *v_first,
                        int32_t s_all, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t n_tokens = b->p->n_tokens, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = n_tokens / n_seqs, n_embd = hp->n_embd;
    /* a whole number of heads, at least one: hc_wkv_heads() */
    int64_t head_size = hp->wkv_head_size, head_count = n_embd / head_size;
    int32_t g1 = gb_weight(b, "blk.%d.time_mix_g1.weight", il);
    int32_t g2 = gb_weight(b, "blk.%d.time_mix_g2.weight", il);
    bool gating = g1 >= 0 && g2 >= 0;

    int32_t sx = binop(b, GGFIT_OP_SUB, x_prev, cur);
    int64_t ne[4] = { n_embd, n_seq_tokens, n_seqs, gating ? 6 : 5 };
    sx = gg_op_shape(g, GGFIT_OP_REPEAT, GGFIT_TYPE_F32, 4, ne, 1, &sx);
    int32_t xxx = lerp(b, sx, gb_required(b, "blk.%d.time_mix_lerp_fused.weight", il), cur);
    uint64_t step = (uint64_t)n_embd * n_tokens * 4, nb1 = g->t[xxx].nb[1];
    int32_t xr = gb_view_2d(b, xxx, n_embd, n_tokens, nb1, 0);
    int32_t xw = gb_view_2d(b, xxx, n_embd, n_tokens, nb1, step);
    int32_t xk = gb_view_2d(b, xxx, n_embd, n_tokens, nb1, 2 * step);
    int32_t xv = gb_view_2d(b, xxx, n_embd, n_tokens, nb1, 3 * step);
    int32_t xa = gb_view_2d(b, xxx, n_embd, n_tokens, nb1, 4 * step);
    int32_t xg = gating ? gb_view_2d(b, xxx, n_embd, n_tokens, nb1, 5 * step) : -1;

    int32_t r = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_receptance.weight", il), xr);
    int32_t w = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_w1.weight", il), xw);
    w = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_w2.weight", il), unop(b, GGFIT_OP_UNARY, w));
    w = binop(b, GGFIT_OP_ADD, w, gb_required(b, "blk.%d.time_mix_w0.weight", il));
    w = unop(b, GGFIT_OP_UNARY, gg_scale(g, unop(b, GGFIT_OP_UNARY, w)));   /* exp(-0.6 sigmoid) */

    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_key.weight", il), xk);
    int32_t v = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_value.weight", il), xv);
    if (*v_first < 0) {
        *v_first = v;
    } else {
        /* the first layer's values as a residual */
        int32_t mix = lora(b, "blk.%d.time_mix_v2.weight", "blk.%d.time_mix_v1.weight", xv, il);
        mix = binop(b, GGFIT_OP_ADD, mix, gb_required(b, "blk.%d.time_mix_v0.weight", il));
        mix = unop(b, GGFIT_OP_UNARY, mix);
        v = binop(b, GGFIT_OP_ADD, v,
                  binop(b, GGFIT_OP_MUL, binop(b, GGFIT_OP_SUB, *v_first, v), mix));
    }
    int32_t gate = -1;
    if (gating)
        gate = gg_mul_mat(g, g2, unop(b, GGFIT_OP_UNARY, gg_mul_mat(g, g1, xg)));
    int32_t a = lora(b, "blk.%d.time_mix_a2.weight", "blk.%d.time_mix_a1.weight", xa, il);
    a = unop(b, GGFIT_OP_UNARY,
             binop(b, GGFIT_OP_ADD, a, gb_required(b, "blk.%d.time_mix_a0.weight", il)));

    int32_t kk = binop(b, GGFIT_OP_MUL, k, gb_required(b, "blk.%d.time_mix_k_k.weight", il));
    kk = gb_reshape_3d(b, kk, head_size, head_count, n_tokens);
    kk = unop(b, GGFIT_OP_L2_NORM, kk);
    int32_t ka = binop(b, GGFIT_OP_MUL, k, gb_required(b, "blk.%d.time_mix_k_a.weight", il));
    k = binop(b, GGFIT_OP_ADD, k,
              binop(b, GGFIT_OP_SUB, binop(b, GGFIT_OP_MUL, a, ka), ka));
    if (b->missing)
        return cur;

    r = gb_reshape_3d(b, r, head_size, head_count, n_tokens);
    w = gb_reshape_3d(b, w, head_size, head_count, n_tokens);
    k = gb_reshape_3d(b, k, head_size, head_count, n_tokens);
    v = gb_reshape_3d(b, v, head_size, head_count, n_tokens);
    a = gb_reshape_3d(b, a, head_size, head_count, n_tokens);

    int64_t n_embd_s = n_embd * head_size;
    int32_t state = gb_rs(b, s_all, n_embd_s, NULL, NULL);
    int32_t neg_kk = unop(b, GGFIT_OP_UNARY, kk);
    int32_t kka = binop(b, GGFIT_OP_MUL, kk, a);
    int64_t ne_out[4] = { n_embd, n_tokens + head_size * n_seqs, 1, 1 };
    int32_t src[7] = { r, w, k, v, neg_kk, kka, state };
    int32_t out = gg_op_shape(g, GGFIT_OP_RWKV_WKV7, GGFIT_TYPE_F32, 4, ne_out, 7, src);
    cur = view_1d(b, out, n_embd * n_tokens, 0);
    state = view_1d(b, out, n_embd * head_size * n_seqs, (uint64_t)n_embd * n_tokens * 4);
    gg_expand(g, gg_cpy(g, state, view_1d(b, s_all, n_embd_s * n_seqs, 0)));

    int32_t ln = gb_weight(b, "blk.%d.time_mix_ln.weight", il);
    int32_t ln_b = gb_weight(b, "blk.%d.time_mix_ln.bias", il);
    if (ln >= 0 && ln_b >= 0) {
        /* group norm with one group per head */
        cur = gb_reshape_3d(b, cur, n_embd / head_count, head_count, n_tokens);
        cur = gg_norm(g, cur);
        cur = gb_reshape_2d(b, cur, n_embd, n_tokens);
        cur = lerp(b, cur, ln, ln_b);
    } else {
        cur = gb_reshape_2d(b, cur, n_embd, n_tokens);
    }
    int32_t r_k = gb_required(b, "blk.%d.time_mix_r_k.weight", il);
    int32_t rk = binop(b, GGFIT_OP_MUL, binop(b, GGFIT_OP_MUL, k, r),
                       gb_reshape_2d(b, r_k, head_size, head_count));
    rk = gg_sum_rows(g, rk);
    cur = binop(b, GGFIT_OP_ADD, cur,
                gb_reshape_2d(b, binop(b, GGFIT_OP_MUL, v, rk), n_embd, n_tokens));
    if (gating)
        cur = binop(b, GGFIT_OP_MUL, cur, gate);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.time_mix_output.weight", il), cur);
    return gb_reshape_3d(b, cur, n_embd, n_seq_tokens, n_seqs);
}

/* llm_build_rwkv7_base::build_rwkv7_channel_mix. */
static int32_t channel_mix(bctx *b, int32_t cur, int32_t x_prev, int il)
{
    gg_graph *g = b->g;
    int32_t sx = binop(b, GGFIT_OP_SUB, x_prev, cur);
    int32_t xk = lerp(b, sx, gb_required(b, "blk.%d.channel_mix_lerp_k.weight", il), cur);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.channel_mix_key.weight", il), xk);
    k = unop(b, GGFIT_OP_SQR, unop(b, GGFIT_OP_UNARY, k));
    return gg_mul_mat(g, gb_required(b, "blk.%d.channel_mix_value.weight", il), k);
}

/* The inputs after the embeddings: the state copies, then the output ids. */
static void inputs(bctx *b)
{
    gb_inputs_rs(b);
    b->inp_out_ids = gg_input(b->g, gg_new_1d(b->g, GGFIT_TYPE_I32, b->p->n_outputs), NULL);
}

/* The end: output_norm (a layer norm with bias, or RMS), the output matrix. */
static void output(bctx *b, int32_t cur, bool rms)
{
    gg_graph *g = b->g;
    int32_t w = gb_required(b, "output_norm.weight", 0);
    if (rms)
        cur = gb_norm(b, cur, w, -1);
    else
        cur = gb_layer_norm(b, cur, w, gb_required(b, "output_norm.bias", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* llama_model_rwkv7::graph: two token shifts per layer (time and channel
 * mix), layer norms with biases. */
static void build_rwkv7(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int64_t n_embd = hp->n_embd, n_tokens = b->p->n_tokens, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = n_tokens / n_seqs;
    int32_t v_first = -1;
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
        int32_t cur = time_mix(b, att_norm, x_prev, &v_first, gb_state(b, il, 's'), il);
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
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (!b->missing)
        output(b, inpL, false);
}

/* llama_model_arwkv7::graph: one token shift per layer (the time mix's),
 * RMS norms, a SwiGLU FFN. */
static void build_arwkv7(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int64_t n_embd = hp->n_embd, n_tokens = b->p->n_tokens, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = n_tokens / n_seqs;
    int32_t v_first = -1;
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
        int32_t cur = time_mix(b, att_norm, x_prev, &v_first, gb_state(b, il, 's'), il);
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

/* load_tensors: rwkv7's embeddings' norm is done on the first layer
 * (LLM_TENSOR_TOKEN_EMBD_NORM is a repeating-layer tensor of block 0). */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    if (!strncmp(t->info->name, "token_embd_norm.", 16))
        return 0;
    return -2;
}

/* Recurrent memory only, a state in every layer. */
const ggfit_arch ggfit__model_rwkv7 = {
    .name = "rwkv7",
    .required_keys = (const char *const[]){ "wkv.head_size", "attention.decay_lora_rank",
            "attention.iclr_lora_rank", "attention.value_residual_mix_lora_rank", NULL },
    .mem = GGFIT_MEM_RECURRENT,
    .rec = GGFIT_REC_ALL,
    .check = hc_wkv_heads,
    .build = build_rwkv7,
    .tensor_layer = tensor_layer,
    .state_size = state_size,
};

const ggfit_arch ggfit__model_arwkv7 = {
    .name = "arwkv7",
    .required_keys = (const char *const[]){ "wkv.head_size", "attention.decay_lora_rank",
            "attention.iclr_lora_rank", "attention.value_residual_mix_lora_rank", NULL },
    .mem = GGFIT_MEM_RECURRENT,
    .rec = GGFIT_REC_ALL,
    .check = hc_wkv_heads,
    .build = build_arwkv7,
    .state_size = state_size,
};
