/*
 * minimax_m2.c - src/models/minimax-m2.cpp: MiniMax-M2, a llama-like graph
 * (pre-norm attention with RoPE, then experts) in which Q and K are normed
 * whole (n_head * head rows), before the heads are split; every layer is
 * experts with the file's gating, a required selection bias, the weights
 * always normalised and never scaled (llama.cpp does not read
 * expert_weights_scale).
 */
#include "llama/graph.h"

/* minimax-m2's attention input: three products, norms over whole rows,
 * then the heads. */
static void qkv_minimax(bctx *b, int32_t cur, int il, int32_t *q, int32_t *k, int32_t *v)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = b->hp->n_embd_head_k, nt = b->p->n_tokens;
    *q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, *q, "Qcur", il);
    *k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    gb_cb(b, *k, "Kcur", il);
    *v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    gb_cb(b, *v, "Vcur", il);
    *q = gb_norm(b, *q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, *q, "Qcur_normed", il);
    *k = gb_norm(b, *k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, *k, "Kcur_normed", il);
    *q = gb_reshape_3d(b, *q, hd, li->n_head, nt);
    *k = gb_reshape_3d(b, *k, hd, li->n_head_kv, nt);
    *v = gb_reshape_3d(b, *v, hd, li->n_head_kv, nt);
}

static int32_t attention(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t q, k, v;
    qkv_minimax(b, cur, il, &q, &k, &v);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    /* No output bias. */
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

static int32_t experts(bctx *b, int32_t cur, const gb_moe *o, int il)
{
    int32_t t = gb_moe_ffn_ex(b, cur, o, il);
    gb_cb(b, t, "ffn_moe_out", il);
    return t;
}

/* Every layer is experts: the file's gating, or no graph. */
static int32_t ffn(bctx *b, int32_t cur, int il)
{
    gb_moe o;
    gb_moe_layer(b, il, 0, &o);   /* gating from the file, or no graph */
    o.gate_up_exps = -1;
    o.up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il);
    o.gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il);
    o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
    o.norm_w = true;
    o.w_scale = 0;
    return experts(b, cur, &o, il);
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = attention(b, cur, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = ffn(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_minimax_m2::graph */
static void build_minimax_m2(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    if (b->missing)
        return;
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_minimax_m2 = {
    .name = "minimax-m2",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_minimax_m2,
};
