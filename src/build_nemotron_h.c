/*
 * build_nemotron_h.c - src/models/nemotron-h.cpp: Nemotron-H, a hybrid of
 * Mamba2 layers (llm_build_mamba_base::build_mamba2_layer in
 * mamba-base.cpp), attention layers without RoPE and MLP-only layers.
 */
#include "build_impl.h"

/* What the SSM scan reads besides the states (build_mamba2_layer's
 * get_ssm_rows lambda). */
typedef struct scan_args {
    int32_t x, dt, A, B, C;
    int64_t d_state, head_dim, n_head;
} scan_args;

static int32_t ssm_rows(bctx *b, int32_t states, int32_t ids, void *arg)
{
    const scan_args *a = arg;
    int32_t ssm = gb_reshape_4d(b, states, a->d_state, a->head_dim, a->n_head,
                                gb_ne(b, states, 1));
    return gg_ssm_scan(b->g, ssm, a->x, a->dt, a->A, a->B, a->C, ids);
}

/* The causal conv over the conv state and xBC; stores the last d_conv - 1
 * columns as the new state. Returns silu(conv + bias). */
static int32_t mamba2_conv(bctx *b, int32_t xbc, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t d_conv = hp->ssm_d_conv, n_seqs = b->p->n_seqs;
    int64_t conv_dim = hp->ssm_d_inner + 2 * (int64_t)hp->ssm_n_group * hp->ssm_d_state;
    int64_t n_seq_tokens = gb_ne(b, xbc, 1);
    int32_t state = gb_state(b, il, 'r');
    int32_t conv = gb_rs(b, state, (d_conv - 1) * conv_dim, NULL, NULL);
    conv = gb_reshape_3d(b, conv, d_conv - 1, conv_dim, n_seqs);
    int32_t conv_x = gg_concat(g, conv, gg_transpose(g, xbc), 0);
    const gg_tensor *t = &g->t[conv_x];
    int32_t last = gb_view_3d(b, conv_x, d_conv - 1, conv_dim, n_seqs, t->nb[1], t->nb[2],
                              (uint64_t)n_seq_tokens * t->nb[0]);
    int64_t n_state = (d_conv - 1) * conv_dim * n_seqs;
    gg_expand(g, gg_cpy(g, last, gg_view(g, state, 1, &n_state, NULL, 0)));
    int32_t x = gg_ssm_conv(g, conv_x, gb_required(b, "blk.%d.ssm_conv1d.weight", il));
    x = gg_binary(g, GGFIT_OP_ADD, x, gb_required(b, "blk.%d.ssm_conv1d.bias", il));
    return gg_unary_op(g, GGFIT_OP_UNARY, x);
}

/* llm_build_mamba_base::build_mamba2_layer */
static int32_t mamba2_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t d_inner = hp->ssm_d_inner, d_state = hp->ssm_d_state, n_group = hp->ssm_n_group;
    int64_t n_head = hp->ssm_dt_rank, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = b->p->n_tokens / n_seqs;
    if (n_head == 0 || n_group == 0 || hp->ssm_d_conv < 2) {
        b->missing = true;
        return cur;
    }
    int64_t head_dim = d_inner / n_head;

    cur = gb_reshape_3d(b, cur, gb_ne(b, cur, 0), n_seq_tokens, n_seqs);
    int32_t zxbcdt = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_in.weight", il), cur);
    const gg_tensor *t = &g->t[zxbcdt];
    uint64_t es = t->nb[0], nb1 = t->nb[1], nb2 = t->nb[2];
    int32_t z = gb_view_4d(b, zxbcdt, head_dim, n_head, n_seq_tokens, n_seqs,
                           (uint64_t)head_dim * es, nb1, nb2, 0);
    int32_t xbc = gb_view_3d(b, zxbcdt, d_inner + 2 * n_group * d_state, n_seq_tokens, n_seqs,
                             nb1, nb2, (uint64_t)d_inner * es);
    int32_t dt = gb_view_3d(b, zxbcdt, n_head, n_seq_tokens, n_seqs, nb1, nb2,
                            (uint64_t)(2 * d_inner + 2 * n_group * d_state) * es);

    xbc = mamba2_conv(b, xbc, il);

    /* V, K and Q of the SSM/attention duality */
    t = &g->t[xbc];
    es = t->nb[0], nb1 = t->nb[1], nb2 = t->nb[2];
    scan_args a = { .d_state = d_state, .head_dim = head_dim, .n_head = n_head };
    a.x = gb_view_4d(b, xbc, head_dim, n_head, n_seq_tokens, n_seqs, (uint64_t)head_dim * es,
                     nb1, nb2, 0);
    a.B = gb_view_4d(b, xbc, d_state, n_group, n_seq_tokens, n_seqs, (uint64_t)d_state * es,
                     nb1, nb2, (uint64_t)d_inner * es);
    a.C = gb_view_4d(b, xbc, d_state, n_group, n_seq_tokens, n_seqs, (uint64_t)d_state * es,
                     nb1, nb2, (uint64_t)(d_inner + n_group * d_state) * es);
    a.dt = gg_binary(g, GGFIT_OP_ADD, gb_cont(b, dt), gb_required(b, "blk.%d.ssm_dt.bias", il));
    a.A = gb_required(b, "blk.%d.ssm_a", il);

    int32_t s_all = gb_state(b, il, 's');
    int32_t y_ssm = gb_rs(b, s_all, d_state * d_inner, ssm_rows, &a);

    /* The scan's final states follow its outputs; store them. */
    const gg_tensor *tx = &g->t[a.x];
    int64_t n_x = tx->ne[0] * tx->ne[1] * tx->ne[2] * tx->ne[3];
    int64_t n_s = d_state * d_inner * n_seqs;
    uint64_t xnb1 = tx->nb[1];
    int32_t last = gg_view(g, y_ssm, 1, &n_s, NULL, (uint64_t)n_x * tx->nb[0]);
    gg_expand(g, gg_cpy(g, last, gg_view(g, s_all, 1, &n_s, NULL, 0)));

    int32_t y = gb_view_4d(b, y_ssm, head_dim, n_head, n_seq_tokens, n_seqs, xnb1,
                           (uint64_t)n_head * xnb1, (uint64_t)(n_seq_tokens * n_head) * xnb1, 0);
    int32_t xd = gg_binary(g, GGFIT_OP_MUL, a.x, gb_required(b, "blk.%d.ssm_d", il));
    y = gg_binary(g, GGFIT_OP_ADD, y, xd);
    gb_cb(b, y, "mamba2_y_add_d", il);
    y = gg_glu_split(g, gb_cont(b, z), y);

    int32_t norm = gb_weight(b, "blk.%d.ssm_norm.weight", il);
    if (norm >= 0) {   /* grouped RMS norm */
        y = gb_reshape_4d(b, y, d_inner / n_group, n_group, n_seq_tokens, n_seqs);
        y = gb_norm(b, y, norm, il);
    }
    y = gb_reshape_3d(b, y, d_inner, n_seq_tokens, n_seqs);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_out.weight", il), y);
    cur = gb_reshape_2d(b, cur, gb_ne(b, cur, 0), n_seq_tokens * n_seqs);
    gb_cb(b, cur, "mamba_out", il);
    return cur;
}

/* build_attention_layer: attention without positions. */
static int32_t attention_layer(bctx *b, int32_t cur, int il)
{
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    gb_cb(b, cur, "attn_out", il);
    return cur;
}

/* build_ffn_layer, dense: build_ffn with a squared ReLU and no gate. */
static int32_t ffn_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t w;
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) >= 0) {
        b->missing = true;   /* the MoE variant has no graph here */
        return cur;
    }
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, cur, "ffn_up", il);
    if ((w = gb_weight(b, "blk.%d.ffn_up.bias", il)) >= 0) {
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
        gb_cb(b, cur, "ffn_up_b", il);
    }
    cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);
    gb_cb(b, cur, "ffn_relu", il);
    cur = gg_unary_op(g, GGFIT_OP_SQR, cur);
    gb_cb(b, cur, "ffn_sqr(relu)", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
    if ((w = gb_weight(b, "blk.%d.ffn_down.bias", il)) >= 0) {
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
    }
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_nemotron_h::graph */
void gb_build_nemotron_h(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gg_expand(g, inpL);
    gb_inputs_rs(b);
    gb_inputs_kv(b);   /* positions are made but no layer reads them */
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = mamba2_layer(b, cur, il);
        else if (ggfit_model_layer(b->p->m, (uint32_t)il)->n_ff == 0)
            cur = attention_layer(b, cur, il);
        else
            cur = ffn_layer(b, cur, il);
        if (il == n_layer - 1) {
            cur = gg_get_rows(g, cur, b->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, b->inp_out_ids);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, cur, "nemotron_h_block_out", il);
        inpL = cur;
    }
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}
