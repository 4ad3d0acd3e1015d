/*
 * graph_kda.c - the KDA layer (Kimi Delta Attention) that Kimi Linear,
 * Kimi-K3 and BailingMoE3 build, each in its own file in llama.cpp
 * (src/models/kimi-linear.cpp, kimi-k3.cpp, bailingmoe3.cpp): Q, K and V
 * each projected and through its own short causal convolution, a per-
 * channel decay gate, beta, the fused gated delta net over a recurrent
 * state, and an RMS norm gated by a sigmoid before the output projection.
 * gb_kda says where the three differ; graph.h documents it.
 */
#include "llama/graph.h"

void gb_kda_state_size(const ggfit_hparams *hp, uint64_t *r, uint64_t *s)
{
    uint64_t hd = hp->n_embd_head_kda, d_inner = (uint64_t)hp->n_head_max * hd;
    *r = 3ull * (hp->ssm_d_conv ? hp->ssm_d_conv - 1 : 3) * d_inner;
    *s = hd * hd * hp->n_head_max;
}

typedef struct kda {
    int64_t head_dim, n_head, d_conv, d_inner, n_seqs, n_seq_tokens, n_tokens;
    bool rollback;
} kda;

static int32_t name_t(bctx *b, const gb_kda *o, int which, int32_t t, int il)
{
    if (o->names[which])
        gb_cb(b, t, o->names[which], il);
    return t;
}

/* causal_conv1d: Q, K or V (which 0, 1, 2) projected, behind its part of
 * the conv state; the last d_conv - 1 columns are stored back (with
 * rollback the window ending at each of the last min(tokens, n_rs_seq + 1)
 * tokens, one slot of rows each); the convolution, SiLU, heads. */
static int32_t causal_conv1d(bctx *b, const kda *d, int32_t states_all, int32_t state_all,
                             int which, int32_t x, int32_t proj_w, int32_t conv_w)
{
    gg_graph *g = b->g;
    int64_t dc = d->d_conv, di = d->d_inner, ns = d->n_seqs, nst = d->n_seq_tokens;
    int64_t conv_state_size = (dc - 1) * di, r_total = 3 * conv_state_size;
    uint64_t es = g->t[state_all].nb[0];
    int32_t conv_state = gb_view_3d(b, state_all, dc - 1, di, ns, (uint64_t)(dc - 1) * es,
                                    (uint64_t)r_total * es,
                                    (uint64_t)(which * conv_state_size) * es);
    int32_t x_proj = gg_mul_mat(g, proj_w, x);
    x_proj = gb_reshape_3d(b, x_proj, di, nst, ns);
    int32_t conv_x = gg_concat(g, conv_state, gg_transpose(g, x_proj), 0);
    int64_t K = d->rollback ? (int64_t)b->p->n_rs_seq + 1 : 1;
    int64_t n_written = d->rollback && nst < K ? nst : K;
    uint64_t es_all = g->t[states_all].nb[0];
    for (int64_t slot = 0; slot < n_written; slot++) {
        const gg_tensor *t = &g->t[conv_x];
        int32_t snap = gb_view_3d(b, conv_x, dc - 1, di, ns, t->nb[1], t->nb[2],
                                  (uint64_t)(t->ne[0] - (dc - 1) - slot) * t->nb[0]);
        int32_t dst = gb_view_3d(b, states_all, dc - 1, di, ns, (uint64_t)(dc - 1) * es_all,
                                 (uint64_t)r_total * es_all,
                                 (uint64_t)(slot * ns * r_total + which * conv_state_size) *
                                     es_all);
        gg_expand(g, gg_cpy(g, snap, dst));
    }
    int32_t w = gb_reshape_2d(b, conv_w, dc, di);
    int32_t out = gg_ssm_conv(g, conv_x, w);
    out = gg_unary_op(g, GGFIT_OP_UNARY, gb_reshape_2d(b, out, di, d->n_tokens));
    return gb_reshape_4d(b, out, d->head_dim, d->n_head, nst, ns);
}

/* Kimi's own fused delta net: one state, stored back through a flat view
 * of the layer's states; returns the outputs, made contiguous. */
static int32_t delta_net(bctx *b, const gb_kda *o, int32_t s_all, int32_t q, int32_t k,
                         int32_t v, int32_t gate, int32_t beta, int32_t s, int il)
{
    gg_graph *g = b->g;
    int64_t nst = gb_ne(b, v, 2), ns = gb_ne(b, v, 3);
    int32_t res = gg_gated_delta_net(g, q, k, v, gate, beta, s, 1);
    uint64_t es = g->t[res].nb[0];
    int64_t sv = gb_ne(b, v, 0), hv = gb_ne(b, v, 1);
    int32_t out = gb_view_4d(b, res, sv, hv, nst, ns, (uint64_t)sv * es,
                             (uint64_t)(sv * hv) * es, (uint64_t)(sv * hv * nst) * es, 0);
    int32_t new_state = gb_view_4d(b, res, sv, sv, hv, ns, (uint64_t)sv * es,
                                   (uint64_t)(sv * sv) * es, (uint64_t)(sv * sv * hv) * es,
                                   (uint64_t)(sv * hv * nst * ns) * es);
    out = name_t(b, o, GB_KDA_N_SCAN_CONT, gg_cont(g, out), il);
    name_t(b, o, GB_KDA_N_NEW_STATE, new_state, il);
    int64_t n_s = gb_ne(b, s_all, 0) * ns;
    gg_expand(g, gg_cpy(g, new_state, gg_view(g, s_all, 1, &n_s, NULL, 0)));
    return out;
}

int32_t gb_kda_layer(bctx *b, int32_t cur, int il, const gb_kda *o)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    kda d = {
        .head_dim = hp->n_embd_head_kda, .n_head = hp->n_head_max, .d_conv = hp->ssm_d_conv,
        .n_seqs = b->p->n_seqs, .n_tokens = b->p->n_tokens, .rollback = o->rollback,
    };
    d.d_inner = d.head_dim * d.n_head;
    d.n_seq_tokens = d.n_seqs ? d.n_tokens / d.n_seqs : 0;
    if (!d.head_dim || !d.d_conv || !d.n_seqs) {
        b->missing = true;
        return cur;
    }
    int64_t hd = d.head_dim, nh = d.n_head, nst = d.n_seq_tokens, ns = d.n_seqs;
    int64_t nt = d.n_tokens, rows = o->flat ? nt : nst * ns;

    int32_t r_all = name_t(b, o, GB_KDA_N_CONV_STATES, gb_state(b, il, 'r'), il);
    int32_t r = gb_rs(b, r_all, gb_ne(b, r_all, 0), NULL, NULL);
    int32_t q = causal_conv1d(b, &d, r_all, r, 0, cur, gb_required(b, "blk.%d.attn_q.weight", il),
                              gb_required(b, "blk.%d.ssm_conv1d_q.weight", il));
    int32_t k = causal_conv1d(b, &d, r_all, r, 1, cur, gb_required(b, "blk.%d.attn_k.weight", il),
                              gb_required(b, "blk.%d.ssm_conv1d_k.weight", il));
    int32_t v = causal_conv1d(b, &d, r_all, r, 2, cur, gb_required(b, "blk.%d.attn_v.weight", il),
                              gb_required(b, "blk.%d.ssm_conv1d_v.weight", il));
    if (b->missing)
        return cur;

    /* the decay gate from f_a(x) or f_b(f_a(x)), plus dt_bias */
    int32_t g1 = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_f_a.weight", il), cur);
    if (o->f_b) {
        g1 = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_f_b.weight", il), g1);
        name_t(b, o, GB_KDA_N_F_B, g1, il);
    }
    g1 = gg_binary(g, GGFIT_OP_ADD, g1, gb_required(b, "blk.%d.ssm_dt.bias", il));
    int32_t a = gb_reshape_3d(b, gb_required(b, "blk.%d.ssm_a", il), 1, nh, 1);
    if (o->gate == GB_KDA_SOFTPLUS) {
        g1 = gb_reshape_3d(b, gg_unary_op(g, GGFIT_OP_UNARY, g1), hd, nh, nt);
        g1 = gg_binary(g, GGFIT_OP_MUL, g1, a);
    } else {
        g1 = gg_binary(g, GGFIT_OP_MUL, gb_reshape_3d(b, g1, hd, nh, nt), a);
        if (o->gate == GB_KDA_BOUNDED_NEG)
            g1 = gg_scale(g, g1);
        g1 = gg_scale(g, gg_unary_op(g, GGFIT_OP_UNARY, g1));
    }
    name_t(b, o, GB_KDA_N_G1, g1, il);
    g1 = name_t(b, o, GB_KDA_N_GATE, gb_reshape_4d(b, g1, hd, nh, nst, ns), il);

    int32_t beta = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_beta.weight", il), cur);
    beta = name_t(b, o, GB_KDA_N_BETA_RAW, gb_reshape_4d(b, beta, 1, nh, nst, ns), il);
    beta = name_t(b, o, GB_KDA_N_BETA, gg_unary_op(g, GGFIT_OP_UNARY, beta), il);

    int32_t s_all = gb_state(b, il, 's');
    int32_t state = gb_rs(b, s_all, gb_ne(b, s_all, 0), NULL, NULL);
    state = gb_reshape_4d(b, state, hd, hd, nh, ns);
    q = gg_unary_op(g, GGFIT_OP_L2_NORM, q);
    k = gg_unary_op(g, GGFIT_OP_L2_NORM, k);
    int32_t out = o->rollback
                      ? gg_cont(g, gb_recurrent_attn(b, s_all, q, k, v, g1, beta, state, il))
                      : delta_net(b, o, s_all, q, k, v, g1, beta, state, il);

    /* RMSNorm(out) * sigmoid(g_b(g_a(x)) or g_a(x)) */
    int32_t x = cur;
    if (!o->flat) {   /* the input reshaped to [n_embd, n_seq_tokens, n_seqs] and back */
        x = gb_reshape_3d(b, cur, gb_ne(b, cur, 0), nst, ns);
        x = gb_reshape_2d(b, x, gb_ne(b, x, 0), nst * ns);
    }
    int32_t g2 = gg_mul_mat(g, gb_required(b, o->g_a, il), x);
    if (o->g_b)
        g2 = gg_mul_mat(g, gb_required(b, o->g_b, il), g2);
    name_t(b, o, GB_KDA_N_G2_RAW, g2, il);
    g2 = name_t(b, o, GB_KDA_N_G2, gb_reshape_3d(b, g2, hd, nh, rows), il);
    out = gb_reshape_3d(b, out, hd, nh, rows);
    out = gb_norm(b, out, gb_required(b, "blk.%d.ssm_norm.weight", il), il);
    name_t(b, o, GB_KDA_N_NORMED, out, il);
    out = gg_binary(g, GGFIT_OP_MUL, out, gg_unary_op(g, GGFIT_OP_UNARY, g2));
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il),
                     gb_cont_4d(b, out, d.d_inner, nt, 1, 1));
    gb_cb(b, cur, "kda_out", il);
    return cur;
}

/* ggml's row of n f32 values */
static uint64_t f32_row(int64_t n)
{
    return ggfit_row_bytes(GGFIT_TYPE_F32, (uint64_t)n);
}

static void name_if(bctx *b, bool named, int32_t t, const char *name, int il)
{
    if (named)
        gb_cb(b, t, name, il);
}

int32_t gb_kimi_mla_layer(bctx *b, int32_t cur, int il, bool named)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t n_head = li->n_head, nt = b->p->n_tokens;
    int64_t hk = hp->n_embd_head_k_mla, n_rope = hp->n_rot, n_nope = hk - n_rope;
    int64_t rank = hp->n_lora_kv;
    int32_t wk_b = gb_weight(b, "blk.%d.attn_k_b.weight", il);
    int32_t wv_b = gb_weight(b, "blk.%d.attn_v_b.weight", il);
    if (wk_b < 0 || wv_b < 0 || n_nope <= 0) {
        b->missing = true;   /* the wkv_b path asks for a KV cache the model has not */
        return cur;
    }
    int32_t inp_gate = cur, q;
    if (gb_weight(b, "blk.%d.attn_q_a_norm.weight", il) >= 0) {
        q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_a.weight", il), cur);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_a_norm.weight", il), il);
        q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_b.weight", il), q);
    } else {
        q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    }
    int32_t kv_cmpr_pe = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_a_mqa.weight", il), cur);
    uint64_t kb1 = f32_row(rank + n_rope);
    int32_t kv_cmpr = gb_view_2d(b, kv_cmpr_pe, rank, nt, kb1, 0);
    int32_t k_pe = gb_view_3d(b, kv_cmpr_pe, n_rope, 1, nt, kb1, kb1, f32_row(rank));
    kv_cmpr = gb_norm(b, kv_cmpr, gb_required(b, "blk.%d.attn_kv_a_norm.weight", il), il);

    uint64_t qb1 = f32_row(hk), qb2 = qb1 * (uint64_t)n_head;
    int32_t q_nope = gb_view_3d(b, q, n_nope, n_head, nt, qb1, qb2, 0);
    name_if(b, named, q_nope, "q_nope", il);
    int32_t q_pe = gb_view_3d(b, q, n_rope, n_head, nt, qb1, qb2, f32_row(n_nope));
    name_if(b, named, q_pe, "q_pe", il);
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    name_if(b, named, q_nope, "q_nope_perm", il);
    int32_t q_abs = gg_mul_mat(g, wk_b, q_nope);
    name_if(b, named, q_abs, "q_nope_absorbed", il);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    name_if(b, named, q_abs, "q_nope_absorbed_perm", il);
    q = gg_concat(g, q_abs, q_pe, 0);
    name_if(b, named, q, "Qcur", il);
    int32_t kv_3d = gb_reshape_3d(b, kv_cmpr, rank, 1, nt);
    name_if(b, named, kv_3d, "kv_cmpr_reshape", il);
    int32_t k = gg_concat(g, kv_3d, k_pe, 0);
    name_if(b, named, k, "Kcur", il);
    name_if(b, named, kv_3d, "Vcur", il);
    if (b->missing)
        return cur;
    int32_t out = gb_attn_k(b, -1, -1, q, k, kv_3d, wv_b, il);
    int32_t wg = gb_weight(b, "blk.%d.attn_gate.weight", il);
    if (wg >= 0) {
        int32_t gate = gg_unary_op(g, GGFIT_OP_UNARY, gg_mul_mat(g, wg, inp_gate));
        out = gg_binary(g, GGFIT_OP_MUL, out, gate);
        gb_cb(b, out, "mla_gated", il);
    }
    out = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), out);
    gb_cb(b, out, "mla_out", il);
    return out;
}

int32_t gb_kimi_inputs(bctx *b, const char *embd_name)
{
    const ggfit_hparams *hp = b->hp;
    if (!hp->n_embd_head_k_mla || !hp->n_embd_head_v_mla) {
        b->missing = true;
        return -1;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_cb(b, inpL, embd_name, -1);
    gb_inputs_rs(b);
    gb_inputs_k(b);   /* its positions stay out of the graph */
    return inpL;
}

int32_t gb_kimi_mixer(bctx *b, int32_t x, int il, const gb_kda *o, bool mla_named)
{
    int32_t cur = gb_norm(b, x, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    gg_expand(b->g, cur);
    if (b->p->layer_flags[il] & GB_LAYER_STATE)
        return gb_kda_layer(b, cur, il, o);
    return gb_kimi_mla_layer(b, cur, il, mla_named);
}
