/*
 * graph_mamba.c - the Mamba1 and Mamba2 mixers, build_mamba_layer and
 * build_mamba2_layer, which llama.cpp keeps apart from the architectures
 * in a base of their graphs (llm_build_mamba_base in src/models/
 * mamba-base.cpp; llm_graph_context_mamba in graph-context-mamba.cpp in
 * some versions). Mamba itself, Jamba, the Granite 4.0 hybrids,
 * Nemotron-H and Falcon-H1 use them.
 */
#include "llama/graph.h"
#include "versions/version.h"

/* What the SSM scan reads besides the states (the get_ssm_rows lambdas). */
typedef struct scan_args {
    int32_t x, dt, A, B, C;
    int64_t d_state, head_dim, n_head;
    int64_t K;                  /* states the scan returns (rollback snapshots) */
} scan_args;

static int32_t ssm_rows(bctx *b, int32_t states, int32_t ids, void *arg)
{
    const scan_args *a = arg;
    int32_t ssm = gb_reshape_4d(b, states, a->d_state, a->head_dim, a->n_head,
                                gb_ne(b, states, 1));
    return gg_ssm_scan_k(b->g, ssm, a->x, a->dt, a->A, a->B, a->C, ids, a->K);
}

/* The causal conv of both mixers: the conv state (read by build_rs before
 * the input projection, as llama.cpp does) followed by the channels xbc;
 * the last d_conv - 1 columns are stored back: one flat copy (K 0), or
 * (Mamba2 from ROLLBACK_NEMOTRON_H on) min(tokens, K) copies of rows a
 * sequence, slot s the columns s tokens back, in the slot's rows.
 * Returns silu(conv + bias). */
static int32_t causal_conv(bctx *b, int32_t conv, int32_t state, int32_t xbc, int64_t conv_dim,
                           int64_t K, int il)
{
    gg_graph *g = b->g;
    int64_t d_conv = b->hp->ssm_d_conv, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = gb_ne(b, xbc, 1);
    int32_t conv_x = gg_concat(g, conv, gg_transpose(g, xbc), 0);
    const gg_tensor *t = &g->t[conv_x];
    if (K == 0) {
        int32_t last = gb_view_3d(b, conv_x, d_conv - 1, conv_dim, n_seqs, t->nb[1], t->nb[2],
                                  (uint64_t)n_seq_tokens * t->nb[0]);
        int64_t n_state = (d_conv - 1) * conv_dim * n_seqs;
        gg_expand(g, gg_cpy(g, last, gg_view(g, state, 1, &n_state, NULL, 0)));
    }
    int64_t n_written = n_seq_tokens < K ? n_seq_tokens : K;
    int64_t mem = K ? gb_ne(b, state, 1) / K : 0;
    uint64_t row = g->t[state].nb[1];
    for (int64_t slot = 0; slot < n_written; slot++) {
        t = &g->t[conv_x];
        int32_t last = gb_view_3d(b, conv_x, d_conv - 1, conv_dim, n_seqs, t->nb[1], t->nb[2],
                                  (uint64_t)(n_seq_tokens - slot) * t->nb[0]);
        int32_t dst = gb_view_2d(b, state, (d_conv - 1) * conv_dim, n_seqs, row,
                                 (uint64_t)(slot * mem) * row);
        gg_expand(g, gg_cpy(g, last, dst));
    }
    int32_t x = gg_ssm_conv(g, conv_x, gb_required(b, "blk.%d.ssm_conv1d.weight", il));
    x = gg_binary(g, GGFIT_OP_ADD, x, gb_required(b, "blk.%d.ssm_conv1d.bias", il));
    return gg_unary_op(g, GGFIT_OP_UNARY, x);
}

/* The scan's final states follow its n_x outputs; stores them. */
static void store_states(bctx *b, int32_t y_ssm, int32_t s_all, int32_t x, int64_t n_s)
{
    gg_graph *g = b->g;
    const gg_tensor *tx = &g->t[x];
    int64_t n_x = tx->ne[0] * tx->ne[1] * tx->ne[2] * tx->ne[3];
    int32_t last = gg_view(g, y_ssm, 1, &n_s, NULL, (uint64_t)n_x * tx->nb[0]);
    gg_expand(g, gg_cpy(g, last, gg_view(g, s_all, 1, &n_s, NULL, 0)));
}

/* Mamba2 from ROLLBACK_NEMOTRON_H on: the scan's K states a sequence
 * follow its outputs; the last min(tokens, K) are stored, slot s in the
 * rows of slot s. */
static void store_states_k(bctx *b, int32_t y_ssm, int32_t s_all, int32_t x, int64_t K)
{
    gg_graph *g = b->g;
    const gg_tensor *tx = &g->t[x];
    int64_t n_x = tx->ne[0] * tx->ne[1] * tx->ne[2] * tx->ne[3];
    int64_t d = gb_ne(b, s_all, 0), n_seqs = b->p->n_seqs, n_tokens = tx->ne[2];
    int64_t n_written = n_tokens < K ? n_tokens : K, mem = gb_ne(b, s_all, 1) / K;
    uint64_t y_row = (uint64_t)d * g->t[y_ssm].nb[0], row = g->t[s_all].nb[1];
    int32_t src = gb_view_3d(b, y_ssm, d, n_seqs, n_written, y_row, y_row * (uint64_t)n_seqs,
                             (uint64_t)n_x * tx->nb[0]);
    int32_t dst = gb_view_3d(b, s_all, d, n_seqs, n_written, row, (uint64_t)mem * row, 0);
    gg_expand(g, gg_cpy(g, src, dst));
}

/* llm_build_mamba_base::build_mamba_layer: Mamba1, one head per channel,
 * one group; dt, B and C come from x through ssm_x. */
int32_t gb_mamba_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t d_conv = hp->ssm_d_conv, d_inner = hp->ssm_d_inner, d_state = hp->ssm_d_state;
    int64_t dt_rank = hp->ssm_dt_rank, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = b->p->n_tokens / n_seqs;
    if (d_conv < 2 || d_inner == 0 || d_state == 0 || dt_rank == 0) {
        b->missing = true;
        return cur;
    }

    int32_t r_all = gb_state(b, il, 'r');
    int32_t conv = gb_rs(b, r_all, (d_conv - 1) * d_inner, NULL, NULL);
    conv = gb_reshape_3d(b, conv, d_conv - 1, d_inner, n_seqs);

    cur = gb_reshape_3d(b, cur, gb_ne(b, cur, 0), n_seq_tokens, n_seqs);
    int32_t xz = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_in.weight", il), cur);
    const gg_tensor *t = &g->t[xz];
    uint64_t es = t->nb[0], nb1 = t->nb[1], nb2 = t->nb[2];
    int64_t ne1 = t->ne[1], ne2 = t->ne[2];
    int32_t x = gb_view_3d(b, xz, d_inner, ne1, ne2, nb1, nb2, 0);
    int32_t z = gb_view_3d(b, xz, d_inner, ne1, ne2, nb1, nb2, (uint64_t)d_inner * es);

    x = causal_conv(b, conv, r_all, x, d_inner, 0, il);

    int32_t x_db = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_x.weight", il), x);
    t = &g->t[x_db];
    es = t->nb[0], nb1 = t->nb[1], nb2 = t->nb[2];
    scan_args a = { .d_state = d_state, .head_dim = 1, .n_head = d_inner, .K = 1 };
    int32_t dt = gb_view_3d(b, x_db, dt_rank, n_seq_tokens, n_seqs, nb1, nb2, 0);
    a.B = gb_view_4d(b, x_db, d_state, 1, n_seq_tokens, n_seqs, (uint64_t)d_state * es, nb1,
                     nb2, (uint64_t)dt_rank * es);
    a.C = gb_view_4d(b, x_db, d_state, 1, n_seq_tokens, n_seqs, (uint64_t)d_state * es, nb1,
                     nb2, (uint64_t)(dt_rank + d_state) * es);

    /* FalconMamba (dt_b_c_rms) and Jamba (the three norm weights) norm them. */
    int32_t dt_norm = gb_weight(b, "blk.%d.ssm_dt_norm.weight", il);
    int32_t b_norm = gb_weight(b, "blk.%d.ssm_b_norm.weight", il);
    int32_t c_norm = gb_weight(b, "blk.%d.ssm_c_norm.weight", il);
    if (gb_key(b, "ssm.dt_b_c_rms", 0) != 0 || (dt_norm >= 0 && b_norm >= 0 && c_norm >= 0)) {
        dt = gb_norm(b, dt, dt_norm, il);
        a.B = gb_norm(b, a.B, b_norm, il);
        a.C = gb_norm(b, a.C, c_norm, il);
    }
    dt = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_dt.weight", il), dt);
    a.dt = gg_binary(g, GGFIT_OP_ADD, dt, gb_required(b, "blk.%d.ssm_dt.bias", il));

    int32_t xin = x;
    a.x = gb_reshape_4d(b, x, 1, d_inner, n_seq_tokens, n_seqs);
    a.A = gb_required(b, "blk.%d.ssm_a", il);

    int32_t s_all = gb_state(b, il, 's');
    int32_t y_ssm = gb_rs(b, s_all, d_state * d_inner, ssm_rows, &a);
    store_states(b, y_ssm, s_all, a.x, d_state * d_inner * n_seqs);

    const gg_tensor *tx = &g->t[a.x];
    int32_t y = gb_view_3d(b, y_ssm, d_inner, n_seq_tokens, n_seqs, tx->nb[2], tx->nb[3], 0);
    int32_t xd = gg_binary(g, GGFIT_OP_MUL, xin, gb_required(b, "blk.%d.ssm_d", il));
    y = gg_binary(g, GGFIT_OP_ADD, y, xd);
    y = gg_glu_split(g, gb_cont(b, z), y);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_out.weight", il), y);
    return gb_reshape_2d(b, cur, gb_ne(b, cur, 0), n_seq_tokens * n_seqs);
}

/* llm_build_mamba_base::build_mamba2_layer: heads of head_dim channels,
 * n_group groups of B and C, a grouped RMS norm before the output. */
int32_t gb_mamba2_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t d_conv = hp->ssm_d_conv, d_inner = hp->ssm_d_inner, d_state = hp->ssm_d_state;
    int64_t n_group = hp->ssm_n_group, n_head = hp->ssm_dt_rank, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = b->p->n_tokens / n_seqs;
    if (n_head == 0 || n_group == 0 || d_conv < 2 || d_inner % n_head || d_inner % n_group) {
        b->missing = true;   /* llama.cpp asserts these */
        return cur;
    }
    int64_t head_dim = d_inner / n_head, conv_dim = d_inner + 2 * n_group * d_state;

    int32_t r_all = gb_state(b, il, 'r');
    int32_t conv = gb_rs(b, r_all, (d_conv - 1) * conv_dim, NULL, NULL);
    conv = gb_reshape_3d(b, conv, d_conv - 1, conv_dim, n_seqs);

    cur = gb_reshape_3d(b, cur, gb_ne(b, cur, 0), n_seq_tokens, n_seqs);
    int32_t zxbcdt = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_in.weight", il), cur);
    const gg_tensor *t = &g->t[zxbcdt];
    uint64_t es = t->nb[0], nb1 = t->nb[1], nb2 = t->nb[2];
    int32_t z = gb_view_4d(b, zxbcdt, head_dim, n_head, n_seq_tokens, n_seqs,
                           (uint64_t)head_dim * es, nb1, nb2, 0);
    int32_t xbc = gb_view_3d(b, zxbcdt, conv_dim, n_seq_tokens, n_seqs, nb1, nb2,
                             (uint64_t)d_inner * es);
    int32_t dt = gb_view_3d(b, zxbcdt, n_head, n_seq_tokens, n_seqs, nb1, nb2,
                            (uint64_t)(d_inner + conv_dim) * es);

    /* ROLLBACK_NEMOTRON_H: the states of the last K = n_rs_seq + 1 tokens
     * are kept (n_rs_seq is 0 where the architecture has no rollback);
     * before, the final state alone (K 0 here: its flat copies). */
    int64_t K = ggfit__llama_has(b->p->llama_build, LLAMA_CHANGE_ROLLBACK_NEMOTRON_H)
                    ? (int64_t)b->p->n_rs_seq + 1 : 0;
    xbc = causal_conv(b, conv, r_all, xbc, conv_dim, K, il);

    /* V, K and Q of the SSM/attention duality */
    t = &g->t[xbc];
    es = t->nb[0], nb1 = t->nb[1], nb2 = t->nb[2];
    scan_args a = { .d_state = d_state, .head_dim = head_dim, .n_head = n_head,
                    .K = K ? K : 1 };
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
    if (K)
        store_states_k(b, y_ssm, s_all, a.x, K);
    else
        store_states(b, y_ssm, s_all, a.x, d_state * d_inner * n_seqs);

    uint64_t xnb1 = g->t[a.x].nb[1];
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
