/*
 * kimi_linear.c - src/models/kimi-linear.cpp: Kimi Linear, a hybrid of KDA
 * layers (Kimi Delta Attention: separate Q, K and V projections, each
 * through its own short causal convolution, per-channel decay gates from a
 * low-rank f_a/f_b pair, the fused gated delta net over a recurrent state,
 * an RMS norm gated by sigmoid(g_b(g_a(x)))) and MLA layers without RoPE
 * (the K-only latent cache of DeepSeek-V2, Q from one projection). Layers
 * with head_count_kv 0 are the KDA ones. The first leading_dense_block_count
 * blocks have a dense FFN, the others routed experts (the file's gating,
 * weights always normalised) plus a shared expert.
 */
#include "llama/graph.h"

static int32_t name_t(bctx *b, int32_t t, const char *name, int il)
{
    gb_cb(b, t, name, il);
    return t;
}

static uint64_t f32_row(int64_t n)
{
    return ggfit_row_bytes(GGFIT_TYPE_F32, (uint64_t)n);
}

/* llama_hparams::n_embd_r and n_embd_s of the KDA layers: the Q, K and V
 * convolutions' last d_conv - 1 inputs (3 by default), and one head_dim x
 * head_dim state per head. */
static void state_size(const ggfit_hparams *hp, uint64_t *r, uint64_t *s)
{
    uint64_t hd = hp->n_embd_head_kda, d_inner = (uint64_t)hp->n_head_max * hd;
    *r = 3ull * (hp->ssm_d_conv ? hp->ssm_d_conv - 1 : 3) * d_inner;
    *s = hd * hd * hp->n_head_max;
}

typedef struct kda {
    int64_t head_dim, n_head, d_conv, d_inner, n_seqs, n_seq_tokens, n_tokens;
} kda;

/* causal_conv1d: Q, K or V (which 0, 1, 2) projected, behind its part of
 * the conv state; the last d_conv - 1 columns are stored back; the
 * convolution, SiLU, heads. */
static int32_t causal_conv1d(bctx *b, const kda *d, int32_t states_all, int32_t state_all,
                             int which, int32_t x, int32_t proj_w, int32_t conv_w)
{
    gg_graph *g = b->g;
    int64_t dc = d->d_conv, di = d->d_inner, ns = d->n_seqs, nst = d->n_seq_tokens;
    int64_t conv_state_size = (dc - 1) * di, r_total = 3 * conv_state_size;
    uint64_t es = g->t[state_all].nb[0];
    int32_t conv_state_x = gb_view_3d(b, state_all, dc - 1, di, ns, (uint64_t)(dc - 1) * es,
                                      (uint64_t)r_total * es,
                                      (uint64_t)(which * conv_state_size) * es);
    int32_t x_proj = gg_mul_mat(g, proj_w, x);
    int32_t x_3d = gb_reshape_3d(b, x_proj, di, nst, ns);
    int32_t conv_x = gg_concat(g, conv_state_x, gg_transpose(g, x_3d), 0);
    const gg_tensor *t = &g->t[conv_x];
    int32_t last = gb_view_3d(b, conv_x, dc - 1, di, ns, t->nb[1], t->nb[2],
                              (uint64_t)nst * t->nb[0]);
    uint64_t es_all = g->t[states_all].nb[0];
    int32_t dst = gb_view_3d(b, states_all, dc - 1, di, ns, (uint64_t)(dc - 1) * es_all,
                             (uint64_t)r_total * es_all,
                             (uint64_t)(which * conv_state_size) * es_all);
    gg_expand(g, gg_cpy(g, last, dst));
    int32_t w = gb_reshape_2d(b, conv_w, dc, di);
    int32_t xc = gg_ssm_conv(g, conv_x, w);
    xc = gb_reshape_2d(b, xc, di, d->n_tokens);
    xc = gg_unary_op(g, GGFIT_OP_UNARY, xc);
    return gb_reshape_4d(b, xc, d->head_dim, d->n_head, nst, ns);
}

/* The KDA layer of llama_model_kimi_linear::graph. */
static int32_t kda_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    kda d = {
        .head_dim = hp->n_embd_head_kda, .n_head = hp->n_head_max, .d_conv = hp->ssm_d_conv,
        .n_seqs = b->p->n_seqs, .n_tokens = b->p->n_tokens,
    };
    d.d_inner = d.head_dim * d.n_head;
    d.n_seq_tokens = d.n_seqs ? d.n_tokens / d.n_seqs : 0;
    if (!d.head_dim || !d.d_conv || !d.n_seqs) {
        b->missing = true;
        return cur;
    }
    int64_t hd = d.head_dim, nh = d.n_head, nst = d.n_seq_tokens, ns = d.n_seqs;

    int32_t r_all = name_t(b, gb_state(b, il, 'r'), "conv_states_all", il);
    int32_t r = gb_rs(b, r_all, gb_ne(b, r_all, 0), NULL, NULL);
    int32_t q = causal_conv1d(b, &d, r_all, r, 0, cur, gb_required(b, "blk.%d.attn_q.weight", il),
                              gb_required(b, "blk.%d.ssm_conv1d_q.weight", il));
    int32_t k = causal_conv1d(b, &d, r_all, r, 1, cur, gb_required(b, "blk.%d.attn_k.weight", il),
                              gb_required(b, "blk.%d.ssm_conv1d_k.weight", il));
    int32_t v = causal_conv1d(b, &d, r_all, r, 2, cur, gb_required(b, "blk.%d.attn_v.weight", il),
                              gb_required(b, "blk.%d.ssm_conv1d_v.weight", il));
    if (b->missing)
        return cur;

    /* g1 = A * softplus(f_b(f_a(x)) + dt_bias), per channel */
    int32_t f_a = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_f_a.weight", il), cur);
    int32_t g1 = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_f_b.weight", il), f_a);
    gb_cb(b, g1, "g1 f_b(f_a(cur))", il);
    g1 = gg_binary(g, GGFIT_OP_ADD, g1, gb_required(b, "blk.%d.ssm_dt.bias", il));
    g1 = gg_unary_op(g, GGFIT_OP_UNARY, g1);
    g1 = gb_reshape_3d(b, g1, hd, nh, d.n_tokens);
    int32_t a = gb_reshape_3d(b, gb_required(b, "blk.%d.ssm_a", il), 1, nh, 1);
    g1 = gg_binary(g, GGFIT_OP_MUL, g1, a);
    gb_cb(b, g1, "kda_g1", il);
    g1 = gb_reshape_4d(b, g1, hd, nh, nst, ns);

    int32_t beta = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_beta.weight", il), cur);
    beta = gb_reshape_4d(b, beta, 1, nh, nst, ns);
    gb_cb(b, beta, "kda_beta", il);
    beta = gg_unary_op(g, GGFIT_OP_UNARY, beta);

    cur = gb_reshape_3d(b, cur, gb_ne(b, cur, 0), nst, ns);
    int32_t s_all = gb_state(b, il, 's');
    int32_t state = gb_rs(b, s_all, gb_ne(b, s_all, 0), NULL, NULL);
    state = gb_reshape_4d(b, state, hd, hd, nh, ns);
    q = gg_unary_op(g, GGFIT_OP_L2_NORM, q);
    k = gg_unary_op(g, GGFIT_OP_L2_NORM, k);

    /* build_delta_net_fused */
    int32_t res = gg_gated_delta_net(g, q, k, v, g1, beta, state, 1);
    uint64_t es = g->t[res].nb[0];
    int64_t sv = gb_ne(b, v, 0), hv = gb_ne(b, v, 1);
    int32_t out = gb_view_4d(b, res, sv, hv, nst, ns, (uint64_t)sv * es,
                             (uint64_t)(sv * hv) * es, (uint64_t)(sv * hv * nst) * es, 0);
    int32_t new_state = gb_view_4d(b, res, sv, sv, hv, ns, (uint64_t)sv * es,
                                   (uint64_t)(sv * sv) * es, (uint64_t)(sv * sv * hv) * es,
                                   (uint64_t)(sv * hv * nst * ns) * es);
    out = gg_cont(g, out);
    gb_cb(b, out, "attn_output", il);
    gb_cb(b, new_state, "new_state", il);
    int64_t n_s = gb_ne(b, s_all, 0) * ns;
    int32_t dst = gg_view(g, s_all, 1, &n_s, NULL, 0);
    gg_expand(g, gg_cpy(g, new_state, dst));

    /* g2 = g_b(g_a(x)); RMSNorm(out) * sigmoid(g2) */
    int32_t cur_2d = gb_reshape_2d(b, cur, gb_ne(b, cur, 0), nst * ns);
    int32_t g_a = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_g_a.weight", il), cur_2d);
    int32_t g2 = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_g_b.weight", il), g_a);
    gb_cb(b, g2, "g2 g_b(g_a(cur_2d))", il);
    g2 = gb_reshape_3d(b, g2, hd, nh, nst * ns);
    int32_t fin = gb_reshape_3d(b, out, hd, nh, nst * ns);
    int32_t normed = gb_norm(b, fin, gb_required(b, "blk.%d.ssm_norm.weight", il), il);
    gb_cb(b, normed, "kda_normed", il);
    int32_t gate = gg_unary_op(g, GGFIT_OP_UNARY, g2);
    int32_t gated = gg_binary(g, GGFIT_OP_MUL, normed, gate);
    gated = gb_cont_4d(b, gated, d.d_inner, d.n_tokens, 1, 1);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), gated);
    gb_cb(b, cur, "kda_out", il);
    return cur;
}

/* The MLA layer: no RoPE, Q from one projection, absorbed into the latent
 * (attn_k_b), attention over the K-only cache, attn_v_b per head. */
static int32_t mla_layer(bctx *b, int32_t cur, int il)
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
        b->missing = true;   /* the MHA fallback has no cache to attend over */
        return cur;
    }
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    int32_t kv_cmpr_pe = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_a_mqa.weight", il), cur);
    uint64_t kb1 = f32_row(rank + n_rope);
    int32_t kv_cmpr = gb_view_2d(b, kv_cmpr_pe, rank, nt, kb1, 0);
    int32_t k_pe = gb_view_3d(b, kv_cmpr_pe, n_rope, 1, nt, kb1, kb1, f32_row(rank));
    kv_cmpr = gb_norm(b, kv_cmpr, gb_required(b, "blk.%d.attn_kv_a_norm.weight", il), il);

    uint64_t qb1 = f32_row(hk), qb2 = qb1 * (uint64_t)n_head;
    int32_t q_nope = gb_view_3d(b, q, n_nope, n_head, nt, qb1, qb2, 0);
    gb_cb(b, q_nope, "q_nope", il);
    int32_t q_pe = gb_view_3d(b, q, n_rope, n_head, nt, qb1, qb2, f32_row(n_nope));
    gb_cb(b, q_pe, "q_pe", il);
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    gb_cb(b, q_nope, "q_nope_perm", il);
    int32_t q_abs = gg_mul_mat(g, wk_b, q_nope);
    gb_cb(b, q_abs, "q_nope_absorbed", il);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    gb_cb(b, q_abs, "q_nope_absorbed_perm", il);
    q = gg_concat(g, q_abs, q_pe, 0);
    gb_cb(b, q, "Qcur", il);
    kv_cmpr = gb_reshape_3d(b, kv_cmpr, rank, 1, nt);
    gb_cb(b, kv_cmpr, "kv_cmpr_reshape", il);
    int32_t k = gg_concat(g, kv_cmpr, k_pe, 0);
    gb_cb(b, k, "Kcur", il);
    int32_t v = kv_cmpr;
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn_k(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, wv_b, il);
    gb_cb(b, cur, "mla_out", il);
    return cur;
}

static int32_t ffn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    if ((uint32_t)il < b->hp->n_layer_dense_lead) {
        cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                       gb_required(b, "blk.%d.ffn_gate.weight", il),
                       gb_required(b, "blk.%d.ffn_down.weight", il), il);
        gb_cb(b, cur, "ffn_out", il);
        return cur;
    }
    gb_moe o;
    gb_moe_layer(b, il, 0, &o);   /* expert_gating_func is required */
    o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
    o.norm_w = true;
    int32_t moe = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe, "ffn_moe_out", il);
    int32_t sh = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                          gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                          gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, sh, "ffn_shexp", il);
    cur = gg_binary(g, GGFIT_OP_ADD, moe, sh);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

/* llama_model_kimi_linear::graph (the MLA cache: build_inp_mem_hybrid_k;
 * no positions, nothing is roped) */
static void build_kimi_linear(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    if (!hp->n_embd_head_k_mla || !hp->n_embd_head_v_mla) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_cb(b, inpL, "model.embed_tokens", -1);
    gb_inputs_rs(b);
    gb_inputs_k(b);   /* its positions stay out of the graph */
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        gg_expand(g, cur);
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = kda_layer(b, cur, il);
        else
            cur = mla_layer(b, cur, il);
        if (b->missing)
            return;
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = ffn(b, cur, il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (b->missing)
        return;
    gb_output(b, inpL);
}

/* KDA layers are those with head_count_kv 0 (load_arch_hparams). */
const ggfit_arch ggfit__model_kimi_linear = {
    .mla_same_kv_types = true,
    .name = "kimi-linear",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.key_length_mla", "attention.value_length_mla", "attention.kv_lora_rank",
            "ssm.conv_kernel", "kda.head_dim", "expert_feed_forward_length", "expert_shared_count",
            "expert_gating_func", NULL },
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
    .state_size = state_size,
    .build = build_kimi_linear,
};
