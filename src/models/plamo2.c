/*
 * plamo2.c - src/models/plamo2.cpp: PLaMo 2, Mamba layers (those without
 * KV heads: PLaMo's own mixer, with RMS-normed dt, B and C and a SwiGLU
 * gate) and attention layers (fused QKV, RMS-normed Q and K, RoPE) on
 * hybrid memory, every mixer and FFN between two RMS norms.
 */
#include "llama/graph.h"

/* What the SSM scan reads besides the states (get_ssm_rows). */
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

/* llama_model_plamo2::graph::build_plamo2_attn_layer */
static int32_t attn_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v;
    gb_qkv_fused(b, cur, gb_required(b, "blk.%d.attn_qkv.weight", il), il, li->n_head,
                 li->n_head_kv, &q, &k, &v);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, k, "Kcur_normed", il);
    k = gg_rope(g, k, b->inp_pos, -1);
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

/* llama_model_plamo2::graph::build_plamo2_mamba_layer (no groups). */
static int32_t mamba_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t d_conv = hp->ssm_d_conv, d_inner = hp->ssm_d_inner, d_state = hp->ssm_d_state;
    int64_t n_heads = hp->ssm_dt_rank, n_seqs = b->p->n_seqs;
    int64_t n_seq_tokens = b->p->n_tokens / n_seqs;
    int64_t dt_dim = hp->n_embd / 16 > 64 ? hp->n_embd / 16 : 64;
    if (d_conv < 2 || !d_inner || !d_state || !n_heads || d_inner % n_heads ||
        hp->ssm_n_group) {
        b->missing = true;   /* llama.cpp asserts */
        return cur;
    }
    int64_t head_dim = d_inner / n_heads;

    int32_t r_all = gb_state(b, il, 'r');
    int32_t s_all = gb_state(b, il, 's');
    int32_t conv = gb_rs(b, r_all, (d_conv - 1) * d_inner, NULL, NULL);
    conv = gb_reshape_3d(b, conv, d_conv - 1, d_inner, n_seqs);
    cur = gb_reshape_3d(b, cur, gb_ne(b, cur, 0), n_seq_tokens, n_seqs);

    int32_t zx = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_in.weight", il), cur);
    gb_cb(b, zx, "mamba_in_proj", il);
    zx = gg_permute(g, zx, 0, 2, 1, 3);
    zx = gb_cont_4d(b, zx, head_dim * 2, n_heads, n_seq_tokens, n_seqs);
    const gg_tensor *tz = &g->t[zx];
    uint64_t nb1 = tz->nb[1], nb2 = tz->nb[2], nb3 = tz->nb[3];
    int32_t x = gb_view_4d(b, zx, head_dim, n_heads, n_seq_tokens, n_seqs, nb1, nb2, nb3,
                           (uint64_t)head_dim * 4);
    x = gb_cont_4d(b, x, head_dim * n_heads, n_seq_tokens, n_seqs, 1);
    int32_t z = gb_view_4d(b, zx, head_dim, n_heads, n_seq_tokens, n_seqs, nb1, nb2, nb3, 0);

    /* conv1d over the state followed by x; the last d_conv - 1 columns
     * are stored back */
    int32_t conv_x = gg_concat(g, conv, gg_transpose(g, x), 0);
    const gg_tensor *tc = &g->t[conv_x];
    int32_t last = gb_view_3d(b, conv_x, d_conv - 1, d_inner, n_seqs, tc->nb[1], tc->nb[2],
                              (uint64_t)n_seq_tokens * tc->nb[0]);
    int64_t n_state = (d_conv - 1) * d_inner * n_seqs;
    gg_expand(g, gg_cpy(g, last, gg_view(g, r_all, 1, &n_state, NULL, 0)));
    x = gg_ssm_conv(g, conv_x, gb_required(b, "blk.%d.ssm_conv1d.weight", il));
    x = gg_unary_op(g, GGFIT_OP_UNARY, x);

    int32_t bcdt = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_x.weight", il), x);
    const gg_tensor *tb = &g->t[bcdt];
    int32_t B = gb_view_3d(b, bcdt, d_state, n_seq_tokens, n_seqs, tb->nb[1], tb->nb[2], 0);
    int32_t C = gb_view_3d(b, bcdt, d_state, n_seq_tokens, n_seqs, tb->nb[1], tb->nb[2],
                           (uint64_t)d_state * 4);
    int32_t dt = gb_view_3d(b, bcdt, dt_dim, n_seq_tokens, n_seqs, tb->nb[1], tb->nb[2],
                            (uint64_t)d_state * 8);
    B = gb_norm(b, B, gb_required(b, "blk.%d.ssm_b_norm", il), il);
    C = gb_norm(b, C, gb_required(b, "blk.%d.ssm_c_norm", il), il);
    dt = gb_norm(b, dt, gb_required(b, "blk.%d.ssm_dt_norm", il), il);
    dt = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_dt.weight", il), dt);
    dt = gg_binary(g, GGFIT_OP_ADD, dt, gb_required(b, "blk.%d.ssm_dt.bias", il));
    int32_t A = gb_reshape_2d(b, gb_required(b, "blk.%d.ssm_a", il), 1, n_heads);
    if (b->missing)
        return cur;

    x = gb_view_4d(b, x, head_dim, n_heads, n_seq_tokens, n_seqs, (uint64_t)head_dim * 4,
                   (uint64_t)head_dim * n_heads * 4,
                   (uint64_t)head_dim * n_heads * n_seq_tokens * 4, 0);
    const gg_tensor *tB = &g->t[B];
    B = gb_view_4d(b, B, d_state, 1, n_seq_tokens, n_seqs, (uint64_t)d_state * tB->nb[0],
                   tB->nb[1], tB->nb[2], 0);
    const gg_tensor *tC = &g->t[C];
    C = gb_view_4d(b, C, d_state, 1, n_seq_tokens, n_seqs, (uint64_t)d_state * tC->nb[0],
                   tC->nb[1], tC->nb[2], 0);

    scan_args a = { x, dt, A, B, C, d_state, head_dim, n_heads };
    int32_t y_ssm = gb_rs(b, s_all, d_state * d_inner, ssm_rows, &a);
    gb_cb(b, y_ssm, "mamba_ssm_scan", il);
    int64_t n_s = n_heads * head_dim * d_state * n_seqs;
    int32_t fin = gg_view(g, y_ssm, 1, &n_s, NULL,
                          (uint64_t)n_heads * head_dim * n_seq_tokens * n_seqs * 4);
    gg_expand(g, gg_cpy(g, fin, gg_view(g, s_all, 1, &n_s, NULL, 0)));

    int32_t y = gb_view_4d(b, y_ssm, head_dim, n_heads, n_seq_tokens, n_seqs,
                           (uint64_t)head_dim * 4, (uint64_t)head_dim * n_heads * 4,
                           (uint64_t)head_dim * n_heads * n_seq_tokens * 4, 0);
    int32_t D = gb_reshape_2d(b, gb_required(b, "blk.%d.ssm_d", il), 1, n_heads);
    y = gg_binary(g, GGFIT_OP_ADD, y, gg_binary(g, GGFIT_OP_MUL, x, D));
    y = gg_glu_split(g, gb_cont(b, z), y);
    const gg_tensor *ty = &g->t[y];
    y = gb_view_3d(b, y, head_dim * n_heads, n_seq_tokens, n_seqs, ty->nb[2], ty->nb[3], 0);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ssm_out.weight", il), y);
    gb_cb(b, cur, "mamba_out_proj", il);
    cur = gb_reshape_2d(b, cur, gb_ne(b, cur, 0), n_seq_tokens * n_seqs);
    gb_cb(b, cur, "mamba_out", il);
    return cur;
}

/* llama_model_plamo2::graph */
static void build_plamo2(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_rs(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t residual = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = mamba_layer(b, cur, il);
        else
            cur = attn_layer(b, cur, il);
        if (b->missing)
            return;
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm", il), il);
        gb_cb(b, cur, "attn_post_norm", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, residual);
        gb_cb(b, cur, "attn_residual", il);
        residual = cur;
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_pre_norm", il);
        cur = gb_ffn_gate_up(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm", il), il);
        gb_cb(b, cur, "ffn_post_norm", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &residual);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, residual);
        gb_cb(b, cur, "ffn_residual", il);
        inpL = cur;
    }
    if (!b->missing)
        gb_output(b, inpL);
}

const ggfit_arch ggfit__model_plamo2 = {
    .name = "plamo2",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "ssm.conv_kernel",
            "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count", NULL },
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
    .build = build_plamo2,
};
