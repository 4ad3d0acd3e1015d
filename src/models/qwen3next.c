/*
 * qwen3next.c - src/models/qwen3next.cpp: Qwen3-Next, gated delta net
 * layers (linear attention over a recurrent state, delta-net-base.cpp) and
 * gated full attention layers, each followed by an MoE with a gated shared
 * expert. The NextN (MTP) blocks at the end are not part of this graph:
 * an MTP context (--spec-type draft-mtp) runs them (build_qwen3next_mtp).
 */
#include "llama/graph.h"

/* The linear attention layers' dimensions (build_layer_attn_linear). */
typedef struct gdn_dims {
    int64_t head_k_dim, num_k_heads, num_v_heads, head_v_dim;
    int64_t n_seqs, n_seq_tokens;
} gdn_dims;

static gdn_dims dims_of(const bctx *b)
{
    const ggfit_hparams *hp = b->hp;
    gdn_dims d = {
        .head_k_dim = hp->ssm_d_state, .num_k_heads = hp->ssm_n_group,
        .num_v_heads = hp->ssm_dt_rank, .n_seqs = b->p->n_seqs,
    };
    d.head_v_dim = d.num_v_heads ? hp->ssm_d_inner / d.num_v_heads : 0;
    d.n_seq_tokens = b->p->n_tokens / d.n_seqs;
    return d;
}

/* gb_cb that hands t back, so that a step and its name fit one line. */
static int32_t name_t(bctx *b, int32_t t, const char *name, int il)
{
    gb_cb(b, t, name, il);
    return t;
}

/* build_layer_attn: one projection gives the query and a gate; RMS-normed
 * Q and K with RoPE; the attention output is gated by sigmoid(gate). */
static int32_t attn_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = b->hp->n_embd_head_v, n_head = li->n_head, nkv = li->n_head_kv;
    int64_t nt = b->p->n_tokens;
    int32_t qfull = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, qfull, "Qcur_full", il);
    qfull = gb_reshape_4d(b, qfull, hd * 2, n_head, nt, 1);
    const gg_tensor *t = &g->t[qfull];
    uint64_t nb1 = t->nb[1], nb2 = t->nb[2], nb3 = t->nb[3], es = t->nb[0];
    int32_t q = name_t(b, gb_view_4d(b, qfull, hd, n_head, nt, 1, nb1, nb2, nb3, 0),
                       "Qcur_view", il);
    int32_t gate = name_t(b, gb_view_4d(b, qfull, hd, n_head, nt, 1, nb1, nb2, nb3,
                                        (uint64_t)hd * es), "gate", il);
    int32_t k = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur),
                       "Kcur", il);
    int32_t v = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur),
                       "Vcur", il);
    k = gb_reshape_3d(b, k, hd, nkv, nt);
    v = gb_reshape_3d(b, v, hd, nkv, nt);
    q = name_t(b, gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il),
               "Qcur_normed", il);
    k = name_t(b, gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il),
               "Kcur_normed", il);
    q = name_t(b, gg_rope(g, q, b->inp_pos, -1), "Qcur", il);
    k = name_t(b, gg_rope(g, k, b->inp_pos, -1), "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = name_t(b, gb_attn(b, -1, -1, q, k, v, -1, il), "attn_pregate", il);
    gate = gb_cont_4d(b, gate, hd * n_head, nt, 1, 1);
    gate = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, gate), "gate_sigmoid", il);
    cur = name_t(b, gg_binary(g, GGFIT_OP_MUL, cur, gate), "attn_gated", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
    return name_t(b, cur, "attn_output", il);
}

/* build_qkvz: the mixed Q, K, V (conv input) and the output gate z, from
 * fused projections or, in older files, split out of ssm_in. */
static void qkvz(bctx *b, const gdn_dims *d, int32_t in, int il, int32_t *qkv, int32_t *z)
{
    gg_graph *g = b->g;
    int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (wqkv >= 0) {
        *qkv = gg_mul_mat(g, wqkv, in);
        *qkv = gb_reshape_3d(b, *qkv, gb_ne(b, *qkv, 0), d->n_seq_tokens, d->n_seqs);
        gb_cb(b, *qkv, "linear_attn_qkv_mixed", il);
        *z = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_gate.weight", il), in), "z",
                    il);
        return;
    }
    int64_t kd = d->head_k_dim, nk = d->num_k_heads, nst = d->n_seq_tokens, ns = d->n_seqs;
    int64_t vd = d->head_v_dim * d->num_v_heads / nk;
    int32_t mixed = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_in.weight", il), in);
    gb_cb(b, mixed, "linear_attn_mixed_qkvz", il);
    mixed = gb_reshape_4d(b, mixed, 2 * kd + 2 * vd, nk, nst, ns);
    const gg_tensor *t = &g->t[mixed];
    uint64_t nb1 = t->nb[1], nb2 = t->nb[2], nb3 = t->nb[3], es = t->nb[0];
    int32_t q = name_t(b, gb_view_4d(b, mixed, kd, nk, nst, ns, nb1, nb2, nb3, 0), "q", il);
    int32_t k = name_t(b, gb_view_4d(b, mixed, kd, nk, nst, ns, nb1, nb2, nb3,
                                     (uint64_t)kd * es), "k", il);
    int32_t v = name_t(b, gb_view_4d(b, mixed, vd, nk, nst, ns, nb1, nb2, nb3,
                                     (uint64_t)(2 * kd) * es), "v", il);
    *z = gb_view_4d(b, mixed, vd, nk, nst, ns, nb1, nb2, nb3, (uint64_t)(2 * kd + vd) * es);
    *z = name_t(b, gb_cont(b, *z), "z", il);
    q = name_t(b, gb_cont_4d(b, q, kd * nk, nst, ns, 1), "query_flat", il);
    k = name_t(b, gb_cont_4d(b, k, kd * nk, nst, ns, 1), "key_flat", il);
    v = name_t(b, gb_cont_4d(b, v, d->head_v_dim * d->num_v_heads, nst, ns, 1), "value_flat",
               il);
    *qkv = gg_concat(g, gg_concat(g, q, k, 0), v, 0);
    gb_cb(b, *qkv, "qkv_mixed", il);
}

/* build_conv_state: the conv state read back, followed by the new inputs;
 * the last kernel - 1 columns are stored as the next state. */
static int32_t conv_state(bctx *b, int32_t state, int32_t qkv, int64_t kernel,
                          int64_t channels, int il)
{
    gg_graph *g = b->g;
    int64_t n_seqs = b->p->n_seqs, rows = (kernel - 1) * channels;
    int32_t conv = gb_rs(b, state, gb_ne(b, state, 0), NULL, NULL);
    gb_cb(b, conv, "conv_states", il);
    conv = name_t(b, gb_reshape_3d(b, conv, kernel - 1, channels, n_seqs),
                  "conv_states_reshaped", il);
    qkv = name_t(b, gg_transpose(g, qkv), "qkv_mixed_transposed", il);
    int32_t in = name_t(b, gg_concat(g, conv, qkv, 0), "conv_input", il);
    const gg_tensor *t = &g->t[in];
    int32_t last = gb_view_3d(b, in, kernel - 1, channels, n_seqs, t->nb[1], t->nb[2],
                              (uint64_t)(t->ne[0] - (kernel - 1)) * t->nb[0]);
    gb_cb(b, last, "conv_state_last", il);
    int32_t update = gb_view_2d(b, state, rows, n_seqs, g->t[state].nb[1], 0);
    gb_cb(b, update, "conv_state_update", il);
    gg_expand(g, gg_cpy(g, last, update));
    return in;
}

/* build_recurrent_attn with the fused gated delta net (one state snapshot):
 * stores the final state, returns the outputs. */
static int32_t recurrent_attn(bctx *b, int32_t s_all, int32_t q, int32_t k, int32_t v,
                              int32_t gate, int32_t beta, int32_t s, int il)
{
    gg_graph *g = b->g;
    const gg_tensor *tv = &g->t[v];
    int64_t sv = tv->ne[0], hv = tv->ne[1], nt = tv->ne[2], ns = tv->ne[3];
    int32_t r = gg_gated_delta_net(g, q, k, v, gate, beta, s, 1);
    uint64_t es = g->t[r].nb[0];
    int32_t out = gb_view_4d(b, r, sv, hv, nt, ns, (uint64_t)sv * es, (uint64_t)(sv * hv) * es,
                             (uint64_t)(sv * hv * nt) * es, 0);
    int32_t state = gb_view_4d(b, r, sv, sv, hv, ns, (uint64_t)sv * es,
                               (uint64_t)(sv * sv) * es, (uint64_t)(sv * sv * hv) * es,
                               (uint64_t)(sv * hv * nt * ns) * es);
    gb_cb(b, out, "attn_output", il);
    gb_cb(b, state, "new_state", il);
    int32_t dst = gb_view_2d(b, s_all, gb_ne(b, s_all, 0), ns, g->t[s_all].nb[1], 0);
    gg_expand(g, gg_cpy(g, state, dst));
    return out;
}

/* Q or K of every key head, repeated for the value heads it serves. */
static int32_t repeat_heads(bctx *b, const gdn_dims *d, int32_t t)
{
    int64_t kd = d->head_k_dim, nk = d->num_k_heads, n = d->n_seq_tokens * d->n_seqs;
    int64_t f = d->num_v_heads / nk;
    t = gb_reshape_4d(b, t, kd, 1, nk, n);
    int64_t ne[4] = { kd, f, nk, n };
    t = gg_op_shape(b->g, GGFIT_OP_REPEAT, b->g->t[t].type, 4, ne, 1, &t);
    return gb_reshape_4d(b, t, kd, nk * f, d->n_seq_tokens, d->n_seqs);
}

/* The decay gate and beta of each value head, from ssm_ba. */
static void gate_beta(bctx *b, const gdn_dims *d, int32_t cur, int il, int32_t *gate,
                      int32_t *beta)
{
    gg_graph *g = b->g;
    int64_t nk = d->num_k_heads, nv = d->num_v_heads, nst = d->n_seq_tokens, ns = d->n_seqs;
    int32_t ba = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_ba.weight", il), cur);
    gb_cb(b, ba, "linear_attn_mixed_ba", il);
    ba = gb_reshape_4d(b, ba, 2 * nv / nk, nk, nst, ns);
    const gg_tensor *t = &g->t[ba];
    uint64_t nb1 = t->nb[1], nb2 = t->nb[2], nb3 = t->nb[3], es = t->nb[0];
    int32_t vb = name_t(b, gb_view_4d(b, ba, nv / nk, nk, nst, ns, nb1, nb2, nb3, 0), "b", il);
    int32_t va = name_t(b, gb_view_4d(b, ba, nv / nk, nk, nst, ns, nb1, nb2, nb3,
                                      (uint64_t)(nv / nk) * es), "a", il);
    *beta = gg_unary_op(g, GGFIT_OP_UNARY, gb_cont(b, vb));
    int32_t alpha = gb_cont_4d(b, va, nv, nst, ns, 1);
    alpha = gg_binary(g, GGFIT_OP_ADD, alpha, gb_required(b, "blk.%d.ssm_dt.bias", il));
    alpha = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, alpha), "a_softplus", il);
    *gate = gg_binary(g, GGFIT_OP_MUL, alpha, gb_required(b, "blk.%d.ssm_a", il));
    gb_cb(b, *gate, "gate", il);
    *beta = gb_reshape_4d(b, *beta, 1, nv, nst, ns);
    *gate = gb_reshape_4d(b, *gate, 1, nv, nst, ns);
}

/* build_layer_attn_linear */
static int32_t linear_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    gdn_dims d = dims_of(b);
    if (!d.num_k_heads || !d.num_v_heads || d.num_v_heads % d.num_k_heads) {
        b->missing = true;
        return cur;
    }
    int32_t qkv, z, gate, beta;
    qkvz(b, &d, cur, il, &qkv, &z);
    gate_beta(b, &d, cur, il, &gate, &beta);

    int32_t r_all = gb_state(b, il, 'r'), s_all = gb_state(b, il, 's');
    int32_t kernel = gb_required(b, "blk.%d.ssm_conv1d.weight", il);
    int64_t channels = hp->ssm_d_inner + 2 * (int64_t)hp->ssm_n_group * hp->ssm_d_state;
    int32_t conv_in = conv_state(b, r_all, qkv, gb_ne(b, kernel, 0), channels, il);
    int32_t state = gb_rs(b, s_all, gb_ne(b, s_all, 0), NULL, NULL);
    state = gb_reshape_4d(b, state, d.head_v_dim, d.head_v_dim, d.num_v_heads, d.n_seqs);
    gb_cb(b, state, "state_predelta", il);
    int32_t conv = name_t(b, gg_ssm_conv(g, conv_in, kernel), "conv_output_raw", il);
    conv = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, conv), "conv_output_silu", il);

    /* Q, K and V of the convolved channels */
    int64_t kd = d.head_k_dim, nk = d.num_k_heads, vd = d.head_v_dim, nv = d.num_v_heads;
    uint32_t ct = g->t[conv].type;
    uint64_t es = g->t[conv].nb[0], nb1 = ggfit_row_bytes(ct, (uint64_t)(kd * nk * 2 + vd * nv));
    uint64_t nb2 = nb1 * (uint64_t)d.n_seq_tokens;
    int32_t q = gb_view_4d(b, conv, kd, nk, d.n_seq_tokens, d.n_seqs,
                           ggfit_row_bytes(ct, (uint64_t)kd), nb1, nb2, 0);
    int32_t k = gb_view_4d(b, conv, kd, nk, d.n_seq_tokens, d.n_seqs,
                           ggfit_row_bytes(ct, (uint64_t)kd), nb1, nb2, (uint64_t)(kd * nk) * es);
    int32_t v = gb_view_4d(b, conv, vd, nv, d.n_seq_tokens, d.n_seqs,
                           ggfit_row_bytes(ct, (uint64_t)vd), nb1, nb2,
                           ggfit_row_bytes(ct, (uint64_t)(2 * kd * nk)));
    gb_cb(b, q, "q_conv", il);
    gb_cb(b, k, "k_conv", il);
    gb_cb(b, v, "v_conv", il);
    q = gg_unary_op(g, GGFIT_OP_L2_NORM, q);
    k = gg_unary_op(g, GGFIT_OP_L2_NORM, k);
    if (nk != nv) {
        q = repeat_heads(b, &d, q);
        k = repeat_heads(b, &d, k);
    }
    gb_cb(b, q, "q_conv_predelta", il);
    gb_cb(b, k, "k_conv_predelta", il);
    gb_cb(b, v, "v_conv_predelta", il);

    int32_t out = recurrent_attn(b, s_all, q, k, v, gate, beta, state, il);
    z = gb_reshape_4d(b, z, vd, nv, d.n_seq_tokens, d.n_seqs);
    /* build_norm_gated: RMS norm times silu(z) */
    out = gb_norm(b, out, gb_required(b, "blk.%d.ssm_norm.weight", il), il);
    out = gg_binary(g, GGFIT_OP_MUL, out, gg_unary_op(g, GGFIT_OP_UNARY, z));
    out = gb_reshape_3d(b, out, vd * nv, d.n_seq_tokens, d.n_seqs);
    gb_cb(b, out, "final_output", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_out.weight", il), out);
    gb_cb(b, cur, "linear_attn_out", il);
    return gb_reshape_2d(b, cur, hp->n_embd, d.n_seq_tokens * d.n_seqs);
}

/* build_layer_ffn: the experts plus the shared expert scaled by its own
 * sigmoid gate; a dense SwiGLU where there are no experts. */
static int32_t ffn_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        cur = gb_ffn(b, cur, il);
        return name_t(b, cur, "ffn_out", il);
    }
    int32_t moe = name_t(b, gb_moe_ffn(b, cur, il, true), "ffn_moe_out", il);
    if (gb_weight(b, "blk.%d.ffn_up_shexp.weight", il) < 0)
        return moe;
    int32_t sh = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                          gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                          gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, sh, "ffn_shexp", il);
    int32_t gate = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate_inp_shexp.weight", il), cur);
    gb_cb(b, gate, "shared_expert_gate", il);
    gate = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, gate), "shared_expert_gate_sigmoid", il);
    sh = name_t(b, gg_binary(g, GGFIT_OP_MUL, sh, gate), "ffn_shexp_gated", il);
    return name_t(b, gg_binary(g, GGFIT_OP_ADD, moe, sh), "ffn_out", il);
}

/* llama_model_qwen3next::graph, with embeddings_nextn_masked off: the
 * output rows are picked after the final norm, not in the last layer. */
static void build_qwen3next(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    int32_t inpL = gb_inp_embd(b);
    gb_cb(b, inpL, "model.embed_tokens", -1);
    gb_inputs_rs(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        gg_expand(g, cur);
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = linear_layer(b, cur, il);
        else
            cur = attn_layer(b, cur, il);
        cur = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, inpSA), "attn_residual", il);
        int32_t ffn_residual = cur;
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
        gb_cb(b, cur, "attn_post_norm", il);
        cur = name_t(b, ffn_layer(b, cur, il), "ffn_out", il);
        cur = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, ffn_residual), "post_moe", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_mtp_trunk_output(b, inpL);
}

/* llama_model_qwen3next::graph_mtp (LLM_GRAPH_TYPE_DECODER_MTP), the MTP
 * context's graph: the first NextN block on the token's embedding and the
 * target's hidden state (an input), through gated attention on its own
 * cache and the MoE (the output rows picked before it), then the head. */
static void build_qwen3next_mtp(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int il = (int)(hp->n_layer - hp->n_nextn);
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = hp->n_embd_head_v, n_head = li->n_head, nkv = li->n_head_kv;
    int64_t nt = b->p->n_tokens;
    int32_t emb, h;
    gb_mtp_embd(b, il, &emb, &h);
    gb_inputs_kv(b);
    int32_t cur = gb_mtp_eh_proj(b, il, emb, h);
    int32_t inpSA = cur;
    cur = name_t(b, gb_norm(b, cur, gb_required(b, "blk.%d.attn_norm.weight", il), il),
                 "mtp_attn_norm", il);
    int32_t qfull = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur),
                           "mtp_Qcur_full", il);
    uint64_t es = g->t[qfull].nb[0];
    uint64_t nb1 = es * (uint64_t)(hd * 2), nb2 = nb1 * (uint64_t)n_head;
    int32_t q = gb_view_3d(b, qfull, hd, n_head, nt, nb1, nb2, 0);
    q = name_t(b, gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il),
               "mtp_Qcur_normed", il);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    k = gb_reshape_3d(b, k, hd, nkv, nt);
    k = name_t(b, gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il),
               "mtp_Kcur_normed", il);
    int32_t v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    v = gb_reshape_3d(b, v, hd, nkv, nt);
    q = name_t(b, gg_rope(g, q, b->inp_pos, -1), "mtp_Qcur", il);
    k = name_t(b, gg_rope(g, k, b->inp_pos, -1), "mtp_Kcur", il);
    gb_cb(b, v, "mtp_Vcur", il);
    cur = name_t(b, gb_attn(b, -1, -1, q, k, v, -1, il), "mtp_attn_pregate", il);
    int32_t gate = gb_view_3d(b, qfull, hd, n_head, nt, nb1, nb2, es * (uint64_t)hd);
    gate = name_t(b, gb_cont_4d(b, gate, hd * n_head, nt, 1, 1), "mtp_gate", il);
    cur = gg_binary(g, GGFIT_OP_MUL, cur, gg_unary_op(g, GGFIT_OP_UNARY, gate));
    cur = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur),
                 "mtp_attn_out", il);
    cur = gg_get_rows(g, cur, b->inp_out_ids);
    inpSA = gg_get_rows(g, inpSA, b->inp_out_ids);
    cur = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, inpSA), "mtp_attn_residual", il);
    int32_t ffn_residual = cur;
    cur = name_t(b, gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il),
                            il), "mtp_attn_post_norm", il);
    cur = ffn_layer(b, cur, il);
    cur = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, ffn_residual), "mtp_post_ffn", il);
    gb_mtp_head(b, cur, il, GB_MTP_ROWS_NONE, -1);
}

/* Every full_attention_interval-th layer attends; the others are delta nets. */
/* load_arch_hparams: which blocks are recurrent (one per block, MTP blocks
 * included, or one for all). */
static const ggfit_arr_key arr_keys[] = {
    { "attention.recurrent_layers", true, GGFIT_GGUF_UINT32, GGFIT_ARR_BLOCKS, false },
    { NULL },
};

const ggfit_arch ggfit__model_qwen3next = {
    .name = "qwen3next",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "ssm.conv_kernel",
            "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL },
    .arr_keys = arr_keys,
    .mtp = true,   /* load_mtp loads the NextN blocks */
    .mtp_kv_nextn = true,
    .build_mtp = build_qwen3next_mtp,
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_INTERVAL,
    .rec_interval_default = 4,   /* llama_model_qwen3next::load_arch_hparams */
    .build = build_qwen3next,
};
