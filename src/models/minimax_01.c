/*
 * minimax_01.c - src/models/minimax-01.cpp: MiniMax-Text-01 and MiniMax-M1,
 * a hybrid of lightning-attention layers (linear attention with a per-head
 * exponential decay: one fused QKV product through SiLU, a head_dim x
 * head_dim state per head, an RMS norm gated by sigmoid(attn_gate)) and
 * full-attention layers with partial RoPE. The file says which layers
 * are recurrent with attention.recurrent_layers, else every
 * full_attention_interval-th layer (8 by default: the converter writes
 * neither) attends. Both residuals are the normed input scaled by
 * residual_scale; every layer is experts with softmax gating and the
 * weights normalised.
 */
#include "llama/graph.h"
#include "versions/version.h"

static int32_t name_t(bctx *b, int32_t t, const char *name, int il)
{
    gb_cb(b, t, name, il);
    return t;
}

/* llama_hparams::n_embd_r and n_embd_s with n_embd_head_la set: no
 * convolution (the file has no ssm keys, so Mamba's count is 0), and one
 * head_dim x head_dim state per head (head_dim: attention.key_length). */
static void state_size(const ggfit_hparams *hp, uint64_t *r, uint64_t *s)
{
    *r = (uint64_t)(hp->ssm_d_conv ? hp->ssm_d_conv - 1 : 0) *
         (hp->ssm_d_inner + 2ull * hp->ssm_n_group * hp->ssm_d_state);
    *s = (uint64_t)hp->n_embd_head_k * hp->n_embd_head_k * hp->n_head_max;
}

/* llm_graph_input_la: the heads' slopes, and with more than one token a
 * sequence the decays of Q and K (one a head and token) and the
 * token-to-token decay. */
typedef struct la_inputs {
    int32_t slopes, q_decay, k_decay, diag_decay;
} la_inputs;

static la_inputs la_inputs_make(bctx *b, int64_t n_head, int64_t nst, int64_t ns)
{
    gg_graph *g = b->g;
    la_inputs in = { .q_decay = -1, .k_decay = -1, .diag_decay = -1 };
    in.slopes = gg_input(g, gg_new_1d(g, GGFIT_TYPE_F32, n_head), "slopes");
    if (nst != 1) {
        in.q_decay = gg_input(g, gg_new_4d(g, GGFIT_TYPE_F32, 1, n_head, nst, ns), "q_decay_exp");
        in.k_decay = gg_input(g, gg_new_4d(g, GGFIT_TYPE_F32, 1, n_head, nst, ns), "k_decay_exp");
        in.diag_decay = gg_input(g, gg_new_4d(g, GGFIT_TYPE_F32, nst, nst, n_head, ns),
                                 "diag_decay_exp");
    }
    return in;
}

static int32_t exp_of(gg_graph *g, int32_t t)
{
    return gg_unary_op(g, GGFIT_OP_UNARY, t);
}

/* The lightning-attention layer: the state decays by exp(-slope) a token;
 * a prompt runs the block form (the old state against the decayed Q, the
 * in-block products masked by the diagonal decay), one token the step. */
static int32_t lightning_layer(bctx *b, const la_inputs *in, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t hd = hp->n_embd_head_v, nh = hp->n_head_max;
    int64_t ns = b->p->n_seqs, nst = ns ? b->p->n_tokens / ns : 0;

    /* the conv state, unneeded, read all the same */
    int32_t r_all = gb_state(b, il, 'r');
    gg_expand(g, gb_rs(b, r_all, gb_ne(b, r_all, 0), NULL, NULL));
    int32_t slope_rate = name_t(b, gg_scale(g, in->slopes), "slope_rate", il);

    cur = gb_reshape_4d(b, cur, gb_ne(b, cur, 0), nst, 1, ns);
    int32_t qkv = gg_mul_mat(g, gb_required(b, "blk.%d.attn_qkv.weight", il), cur);
    gb_cb(b, qkv, "QKVcur", il);
    qkv = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, qkv), "QKVcur_silu", il);
    qkv = gb_reshape_4d(b, qkv, hd * 3, nh, nst, ns);
    const gg_tensor *t = &g->t[qkv];
    uint64_t nb1 = t->nb[1], nb2 = t->nb[2], nb3 = t->nb[3], es = t->nb[0];
    int32_t q = gb_view_4d(b, qkv, hd, nh, nst, ns, nb1, nb2, nb3, 0);
    int32_t k = gb_view_4d(b, qkv, hd, nh, nst, ns, nb1, nb2, nb3, es * (uint64_t)hd);
    int32_t v = gb_view_4d(b, qkv, hd, nh, nst, ns, nb1, nb2, nb3, es * (uint64_t)(2 * hd));

    int32_t s_all = gb_state(b, il, 's');
    int64_t n_s = gb_ne(b, s_all, 0);
    int32_t state = gb_rs(b, s_all, n_s, NULL, NULL);
    int32_t kv_old = name_t(b, gb_reshape_4d(b, state, hd, hd, nh, ns), "kv_old", il);

    int32_t out, kv_new;
    if (nst == 1) {
        int32_t ratio = exp_of(g, gg_scale(g, slope_rate));
        int32_t ratio_3d = gb_reshape_3d(b, ratio, 1, 1, nh);
        int32_t v_trans = gg_cont(g, gg_permute(g, v, 1, 2, 0, 3));
        int32_t k_trans = gg_cont(g, gg_permute(g, k, 1, 2, 0, 3));
        int32_t kv_cur = gg_mul_mat(g, k_trans, v_trans);
        int32_t kv_old_s = gg_binary(g, GGFIT_OP_MUL, kv_old, ratio_3d);
        kv_new = gg_binary(g, GGFIT_OP_ADD, kv_old_s, kv_cur);
        int32_t q_trans = gg_permute(g, q, 0, 2, 1, 3);
        out = gg_mul_mat(g, kv_new, q_trans);
    } else {
        int32_t q_decay = exp_of(g, gg_scale(g, in->q_decay));
        int32_t k_decay = exp_of(g, gg_scale(g, in->k_decay));
        int32_t diag_decay = exp_of(g, gg_scale(g, in->diag_decay));
        int32_t q_s = gg_binary(g, GGFIT_OP_MUL, q, q_decay);
        int32_t none_diag = gg_mul_mat(g, kv_old, gg_permute(g, q_s, 0, 2, 1, 3));
        int32_t q_trans = gg_permute(g, q, 0, 2, 1, 3);
        int32_t k_trans = gg_permute(g, k, 0, 2, 1, 3);
        int32_t qk = gg_mul_mat(g, k_trans, q_trans);
        qk = gg_binary(g, GGFIT_OP_MUL, qk, diag_decay);
        int32_t v_trans = gg_cont(g, gg_permute(g, v, 1, 2, 0, 3));
        int32_t diag = gg_mul_mat(g, v_trans, qk);
        out = name_t(b, gg_binary(g, GGFIT_OP_ADD, none_diag, diag), "qkv", il);
        gg_expand(g, out);
        int32_t block_decay = exp_of(g, gg_scale(g, slope_rate));
        int32_t block_decay_3d = gb_reshape_3d(b, block_decay, 1, 1, nh);
        int32_t kv_old_s = gg_binary(g, GGFIT_OP_MUL, kv_old, block_decay_3d);
        int32_t k_after = gg_binary(g, GGFIT_OP_MUL, k, k_decay);
        int32_t k_after_trans = gg_cont(g, gg_permute(g, k_after, 1, 2, 0, 3));
        int32_t kv_cur = gg_mul_mat(g, k_after_trans, v_trans);
        kv_new = gg_binary(g, GGFIT_OP_ADD, kv_old_s, kv_cur);
    }
    gb_cb(b, kv_new, "kv_new", il);
    int64_t n_store = n_s * ns;
    gg_expand(g, gg_cpy(g, kv_new, gg_view(g, s_all, 1, &n_store, NULL, 0)));

    out = gg_cont(g, gg_permute(g, out, 0, 2, 1, 3));
    gb_cb(b, out, "qkv_permuted", il);
    const gg_tensor *o = &g->t[out];
    out = gb_reshape_4d(b, out, o->ne[0] * o->ne[1], o->ne[2], 1, o->ne[3]);
    int32_t normed = gb_norm(b, out, gb_required(b, "blk.%d.attn_norm_2.weight", il), il);
    gb_cb(b, normed, "qkv_norm", il);
    int32_t gate = gg_mul_mat(g, gb_required(b, "blk.%d.attn_gate.weight", il), cur);
    gb_cb(b, gate, "g", il);
    gate = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, gate), "g_sigm", il);
    cur = gg_binary(g, GGFIT_OP_MUL, gate, normed);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
    gb_cb(b, cur, "attn_out", il);
    cur = gb_reshape_2d(b, cur, gb_ne(b, cur, 0), nst * ns);
    gb_cb(b, cur, "attn_out", il);
    return cur;
}

/* The full-attention layer: separate Q, K and V, RoPE, the KV cache. */
static int32_t attn_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

/* build_moe_ffn: softmax gating, the weights normalised, never scaled
 * (load_arch_hparams does not read expert_weights_scale); the gate experts
 * optional. */
static int32_t experts(bctx *b, int32_t cur, int il)
{
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_weight(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1, .exp_probs_b = -1, .gate_inp_b = -1,
        .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .act = GB_MOE_SILU, .gating = GB_GATING_SOFTMAX, .norm_w = true,
        .n_expert = b->hp->n_expert, .n_expert_used = b->hp->n_expert_used,
    };
    return gb_moe_ffn_ex(b, cur, &o, il);
}

/* llama_model_minimax_01::graph */
static void build_minimax_01(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int64_t ns = b->p->n_seqs, nst = ns ? b->p->n_tokens / ns : 0;
    if (!ns || hp->n_embd_head_k != hp->n_embd_head_v) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_rs(b);
    gb_inputs_kv(b);
    la_inputs in = la_inputs_make(b, hp->n_head_max, nst, ns);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t residual = cur;
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = lightning_layer(b, &in, cur, il);
        else
            cur = attn_layer(b, cur, il);
        if (b->missing)
            return;
        if (il == n_layer - 1) {
            gb_out_rows(b, &cur, &inpSA);
            residual = gg_get_rows(g, residual, b->inp_out_ids);
        }
        residual = name_t(b, gg_scale(g, residual), "residual_scaled_attn", il);
        int32_t ffn_inp = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, residual), "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        residual = cur;
        cur = name_t(b, experts(b, cur, il), "ffn_moe_out", il);
        residual = name_t(b, gg_scale(g, residual), "residual_scaled_ffn", il);
        cur = name_t(b, gg_binary(g, GGFIT_OP_ADD, cur, residual), "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (b->missing)
        return;
    gb_output(b, inpL);
}

/* load_arch_hparams: which blocks are recurrent (one per block, or one for
 * all). */
static const ggfit_arr_key arr_keys[] = {
    { "attention.recurrent_layers", true, GGFIT_GGUF_UINT32, GGFIT_ARR_BLOCKS, false },
    { NULL },
};

const ggfit_arch ggfit__model_minimax_01 = {
    .name = "minimax-01",
    .added = LLAMA_CHANGE_MINIMAX_01,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "residual_scale", NULL },
    .arr_keys = arr_keys,
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_INTERVAL,
    .rec_interval_default = 8,   /* llama_model_minimax_01::load_arch_hparams */
    .state_size = state_size,
    .build = build_minimax_01,
};
