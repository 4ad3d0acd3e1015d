/*
 * qwen35.c - src/models/qwen35.cpp and qwen35moe.cpp: Qwen3.5 / Qwen3.6,
 * Qwen3-Next's hybrid of gated delta net layers (delta-net-base.cpp) and
 * gated full attention every full_attention_interval-th layer, with a dense
 * SwiGLU FFN (qwen35) or experts plus a gated shared expert (qwen35moe).
 * Unlike Qwen3-Next: separate beta and alpha projections (ssm_beta,
 * ssm_alpha) instead of ssm_ba, fused qkv and gate projections only,
 * interleaved M-RoPE (four positions a token), the query and gate taken as
 * 3-D views, and no repeat of the key heads for the value heads (the fused
 * gated delta net broadcasts them). The NextN (MTP) blocks at the end are
 * not part of this graph: an MTP context runs them (build_qwen35_mtp).
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

/* build_layer_attn: one projection gives the query and a gate (3-D views
 * of it); RMS-normed Q and K with M-RoPE; the attention output is gated by
 * sigmoid(gate). */
static int32_t attn_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = b->hp->n_embd_head_v, n_head = li->n_head, nkv = li->n_head_kv;
    int64_t nt = b->p->n_tokens;
    int32_t qfull = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, qfull, "Qcur_full", il);
    uint64_t es = g->t[qfull].nb[0];
    uint64_t nb1 = es * (uint64_t)(hd * 2), nb2 = nb1 * (uint64_t)n_head;
    int32_t q = name_t(b, gb_view_3d(b, qfull, hd, n_head, nt, nb1, nb2, 0), "Qcur_reshaped", il);
    q = name_t(b, gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il),
               "Qcur_normed", il);
    int32_t k = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur),
                       "Kcur", il);
    int32_t v = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur),
                       "Vcur", il);
    k = gb_reshape_3d(b, k, hd, nkv, nt);
    k = name_t(b, gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il),
               "Kcur_normed", il);
    int32_t gate = gb_view_3d(b, qfull, hd, n_head, nt, nb1, nb2, (uint64_t)hd * es);
    gate = name_t(b, gb_cont_4d(b, gate, hd * n_head, nt, 1, 1), "gate_reshaped", il);
    v = gb_reshape_3d(b, v, hd, nkv, nt);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = name_t(b, gb_attn(b, -1, -1, q, k, v, -1, il), "attn_pregate", il);
    gate = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, gate), "gate_sigmoid", il);
    cur = name_t(b, gg_binary(g, GGFIT_OP_MUL, cur, gate), "attn_gated", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
    return name_t(b, cur, "attn_output", il);
}

/* build_conv_state (delta-net-base.cpp): the conv state read back,
 * followed by the new inputs; the last kernel - 1 columns are stored as
 * the next state, and with n_rs_seq snapshots (rollback) the columns
 * ending at each of the last n_rs_seq + 1 tokens, in slots of one row a
 * sequence (slot 0 the newest). */
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
    uint64_t nb1 = g->t[state].nb[1];
    int64_t K = (int64_t)b->p->n_rs_seq + 1, mem = n_seqs ? n_seqs : 1;
    if (K == 1) {
        int32_t last = gb_view_3d(b, in, kernel - 1, channels, n_seqs, t->nb[1], t->nb[2],
                                  (uint64_t)(t->ne[0] - (kernel - 1)) * t->nb[0]);
        gb_cb(b, last, "conv_state_last", il);
        int32_t update = gb_view_2d(b, state, rows, n_seqs, nb1, 0);
        gb_cb(b, update, "conv_state_update", il);
        gg_expand(g, gg_cpy(g, last, update));
        return in;
    }
    for (int64_t s = 1; s <= K; s++) {
        int64_t idx = t->ne[0] - (kernel - 1) - K + s;
        uint64_t offs = (uint64_t)(idx > 0 ? idx : 0) * t->nb[0];
        int32_t last = gb_view_3d(b, in, kernel - 1, channels, n_seqs, t->nb[1], t->nb[2], offs);
        int32_t update = gb_view_2d(b, state, rows, n_seqs, nb1,
                                    (uint64_t)((K - s) * mem) * nb1);
        gg_expand(g, gg_cpy(g, last, update));
        t = &g->t[in];
    }
    return in;
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
    int64_t kd = d.head_k_dim, nk = d.num_k_heads, vd = d.head_v_dim, nv = d.num_v_heads;
    int64_t nst = d.n_seq_tokens, ns = d.n_seqs;

    /* build_qkvz: the fused projections */
    int32_t qkv = gg_mul_mat(g, gb_required(b, "blk.%d.attn_qkv.weight", il), cur);
    qkv = gb_reshape_3d(b, qkv, gb_ne(b, qkv, 0), nst, ns);
    gb_cb(b, qkv, "linear_attn_qkv_mixed", il);
    int32_t z = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_gate.weight", il), cur),
                       "z", il);

    int32_t beta = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_beta.weight", il), cur);
    beta = name_t(b, gb_reshape_4d(b, beta, 1, nv, nst, ns), "beta", il);
    beta = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, beta), "beta_sigmoid", il);
    int32_t alpha = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_alpha.weight", il), cur);
    alpha = name_t(b, gb_reshape_3d(b, alpha, nv, nst, ns), "alpha", il);
    alpha = gg_binary(g, GGFIT_OP_ADD, alpha, gb_required(b, "blk.%d.ssm_dt.bias", il));
    alpha = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, alpha), "a_softplus", il);
    int32_t gate = gg_binary(g, GGFIT_OP_MUL, alpha, gb_required(b, "blk.%d.ssm_a", il));
    gb_cb(b, gate, "gate", il);
    gate = gb_reshape_4d(b, gate, 1, nv, nst, ns);

    int32_t r_all = gb_state(b, il, 'r'), s_all = gb_state(b, il, 's');
    int32_t kernel = gb_required(b, "blk.%d.ssm_conv1d.weight", il);
    if (b->missing)
        return cur;
    int64_t channels = hp->ssm_d_inner + 2 * (int64_t)hp->ssm_n_group * hp->ssm_d_state;
    int32_t conv_in = conv_state(b, r_all, qkv, gb_ne(b, kernel, 0), channels, il);
    int32_t state = gb_rs(b, s_all, gb_ne(b, s_all, 0), NULL, NULL);
    state = gb_reshape_4d(b, state, vd, vd, nv, ns);
    gb_cb(b, state, "state_predelta", il);
    int32_t conv = name_t(b, gg_ssm_conv(g, conv_in, kernel), "conv_output_raw", il);
    conv = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, conv), "conv_output_silu", il);

    /* Q, K and V of the convolved channels */
    uint32_t ct = g->t[conv].type;
    uint64_t es = g->t[conv].nb[0], nb1 = ggfit_row_bytes(ct, (uint64_t)(kd * nk * 2 + vd * nv));
    uint64_t nb2 = nb1 * (uint64_t)nst;
    int32_t q = gb_view_4d(b, conv, kd, nk, nst, ns, ggfit_row_bytes(ct, (uint64_t)kd), nb1,
                           nb2, 0);
    int32_t k = gb_view_4d(b, conv, kd, nk, nst, ns, ggfit_row_bytes(ct, (uint64_t)kd), nb1,
                           nb2, (uint64_t)(kd * nk) * es);
    int32_t v = gb_view_4d(b, conv, vd, nv, nst, ns, ggfit_row_bytes(ct, (uint64_t)vd), nb1,
                           nb2, ggfit_row_bytes(ct, (uint64_t)(2 * kd * nk)));
    gb_cb(b, q, "q_conv", il);
    gb_cb(b, k, "k_conv", il);
    gb_cb(b, v, "v_conv", il);
    q = gg_unary_op(g, GGFIT_OP_L2_NORM, q);
    k = gg_unary_op(g, GGFIT_OP_L2_NORM, k);
    /* With the fused gated delta net (fused_gdn_ar and _ch, which ggfit's
     * backends always take) the key heads are not repeated. */
    gb_cb(b, q, "q_conv_predelta", il);
    gb_cb(b, k, "k_conv_predelta", il);
    gb_cb(b, v, "v_conv_predelta", il);

    int32_t out = gb_recurrent_attn(b, s_all, q, k, v, gate, beta, state, il);
    z = gb_reshape_4d(b, z, vd, nv, nst, ns);
    /* build_norm_gated: RMS norm times silu(z) */
    out = gb_norm(b, out, gb_required(b, "blk.%d.ssm_norm.weight", il), il);
    out = gg_binary(g, GGFIT_OP_MUL, out, gg_unary_op(g, GGFIT_OP_UNARY, z));
    out = gb_reshape_3d(b, out, vd * nv, nst, ns);
    gb_cb(b, out, "final_output", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_out.weight", il), out);
    gb_cb(b, cur, "linear_attn_out", il);
    return gb_reshape_2d(b, cur, hp->n_embd, nst * ns);
}

/* build_layer_ffn of qwen35moe: the experts plus the shared expert scaled
 * by its own sigmoid gate. */
static int32_t moe_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    gb_required(b, "blk.%d.ffn_gate_inp.weight", il);
    if (b->missing)
        return cur;
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

/* llama_model_qwen35::graph and llama_model_qwen35moe::graph, with
 * embeddings_nextn_masked off: the output rows are picked after the final
 * norm, not in the last layer. */
static void build_qwen35_graph(bctx *b, bool moe)
{
    gg_graph *g = b->g;
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    b->n_pos_per_embd = 4;   /* LLAMA_ROPE_TYPE_IMROPE */
    int32_t inpL = gb_inp_embd(b);
    gb_cb(b, inpL, "model.input_embed", -1);
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
        if (b->missing)
            return;
        cur = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, inpSA), "attn_residual", il);
        int32_t ffn_residual = cur;
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
        gb_cb(b, cur, "attn_post_norm", il);
        if (moe) {
            cur = moe_layer(b, cur, il);
        } else {
            cur = name_t(b, gb_ffn_gated(b, cur, il), "ffn_out", il);
        }
        if (b->missing)
            return;
        gb_cb(b, cur, "ffn_out", il);
        cur = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, ffn_residual),
                     moe ? "post_moe" : "post_ffn", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (b->missing)
        return;
    gb_mtp_trunk_output(b, inpL);
}

static void build_qwen35(bctx *b)
{
    build_qwen35_graph(b, false);
}

static void build_qwen35moe(bctx *b)
{
    build_qwen35_graph(b, true);
}

/* llama_model_qwen35{,moe}::graph_mtp (LLM_GRAPH_TYPE_DECODER_MTP), the
 * MTP context's graph: the first NextN block on the token's embedding and
 * the target's hidden state (an input), gated attention with M-RoPE on its
 * own cache, the block's FFN, then the head on the output rows. */
static void build_qwen35_mtp_graph(bctx *b, bool moe)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int il = (int)(hp->n_layer - hp->n_nextn);
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = hp->n_embd_head_v, n_head = li->n_head, nkv = li->n_head_kv;
    int64_t nt = b->p->n_tokens;
    b->n_pos_per_embd = 4;   /* LLAMA_ROPE_TYPE_IMROPE */
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
    int32_t gate = gb_view_3d(b, qfull, hd, n_head, nt, nb1, nb2, es * (uint64_t)hd);
    gate = name_t(b, gb_cont_4d(b, gate, hd * n_head, nt, 1, 1), "mtp_gate", il);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    k = gb_reshape_3d(b, k, hd, nkv, nt);
    k = name_t(b, gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il),
               "mtp_Kcur_normed", il);
    int32_t v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    v = name_t(b, gb_reshape_3d(b, v, hd, nkv, nt), "mtp_Vcur", il);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    cur = name_t(b, gb_attn(b, -1, -1, q, k, v, -1, il), "mtp_attn_pregate", il);
    cur = gg_binary(g, GGFIT_OP_MUL, cur, gg_unary_op(g, GGFIT_OP_UNARY, gate));
    cur = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur),
                 "mtp_attn_out", il);
    cur = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, inpSA), "mtp_attn_residual", il);
    int32_t ffn_residual = cur;
    cur = name_t(b, gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il),
                            il), "mtp_attn_post_norm", il);
    cur = moe ? moe_layer(b, cur, il) : gb_ffn_gated(b, cur, il);
    if (b->missing)
        return;
    gb_cb(b, cur, "mtp_ffn_out", il);
    cur = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, ffn_residual), "mtp_post_ffn", il);
    gb_mtp_head(b, cur, il, GB_MTP_ROWS_NORMED, -1);
}

static void build_qwen35_mtp(bctx *b)
{
    build_qwen35_mtp_graph(b, false);
}

static void build_qwen35moe_mtp(bctx *b)
{
    build_qwen35_mtp_graph(b, true);
}

/* Every full_attention_interval-th layer (default 4) attends; the others
 * are delta nets. */
/* load_arch_hparams: the rope sections (required) and which blocks are
 * recurrent (one per block, MTP blocks included, or one for all). */
static const ggfit_arr_key arr_keys[] = {
    GGFIT_ARR_ROPE_SECTIONS(true),
    { "attention.recurrent_layers", true, GGFIT_GGUF_UINT32, GGFIT_ARR_BLOCKS, false },
    { NULL },
};

const ggfit_arch ggfit__model_qwen35 = {
    .name = "qwen35",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "ssm.conv_kernel",
            "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL },
    .arr_keys = arr_keys,
    .rs_rollback = true,   /* llm_arch_supports_rs_rollback */
    .mtp = true,   /* load_mtp loads the NextN blocks */
    .mtp_kv_nextn = true,
    .build_mtp = build_qwen35_mtp,
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_INTERVAL,
    .rec_interval_default = 4,   /* load_arch_hparams */
    .build = build_qwen35,
};

/* qwen35moe: the same layers, whose FFNs are experts and a shared expert. */
const ggfit_arch ggfit__model_qwen35moe = {
    .name = "qwen35moe",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "ssm.conv_kernel",
            "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL },
    .arr_keys = arr_keys,
    .rs_rollback = true,   /* llm_arch_supports_rs_rollback */
    .mtp = true,
    .mtp_kv_nextn = true,
    .build_mtp = build_qwen35moe_mtp,
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_INTERVAL,
    .rec_interval_default = 4,
    .build = build_qwen35moe,
};
