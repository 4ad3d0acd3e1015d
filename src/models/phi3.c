/*
 * build_phi3.c - src/models/phi3.cpp: fused QKV (or separate Q/K/V), RoPE
 * with the long or short frequency factors of LongRoPE, Q scaled before
 * attention, and a fused gate_up FFN (one up matrix of 2 n_ff rows, SwiGLU
 * over its halves). llama.cpp turns Phi-3's sliding window off, so there is
 * one KV cache.
 */
#include "llama/graph.h"

int32_t gb_rope_factors_ls(bctx *b, int il, int32_t *leaf)
{
    /* n_ctx_seq > n_ctx_orig_yarn picks the long factors; a stream's
     * cells stand for n_ctx_seq. Both have the same shape. */
    double orig = gb_key(b, "rope.scaling.original_context_length",
                         gb_key(b, "context_length", 0));
    const char *name = (double)b->p->n_kv > orig ? "rope_factors_long.weight"
                                                  : "rope_factors_short.weight";
    return gb_layer_copy(b, name, il, leaf);
}

/* build_qkv's fused path: Q, K and V are views of one product. */
void gb_qkv_fused(bctx *b, int32_t cur, int32_t wqkv, int il, int64_t n_head,
                  int64_t n_head_kv, int32_t *q, int32_t *k, int32_t *v)
{
    gg_graph *g = b->g;
    int64_t hd = b->hp->n_embd_head_v, nt = b->p->n_tokens;
    int32_t qkv = gg_mul_mat(g, wqkv, cur);
    gb_cb(b, qkv, "wqkv", il);
    int32_t bias = gb_weight(b, "blk.%d.attn_qkv.bias", il);
    if (bias >= 0) {
        qkv = gg_binary(g, GGFIT_OP_ADD, qkv, bias);
        gb_cb(b, qkv, "wqkv_b", il);
    }
    uint32_t type = g->t[qkv].type;
    uint64_t head = ggfit_row_bytes(type, (uint64_t)hd), nb1 = g->t[qkv].nb[1];
    *q = gb_view_3d(b, qkv, hd, n_head, nt, head, nb1, 0);
    *k = gb_view_3d(b, qkv, hd, n_head_kv, nt, head, nb1,
                    ggfit_row_bytes(type, (uint64_t)(hd * n_head)));
    *v = gb_view_3d(b, qkv, hd, n_head_kv, nt, head, nb1,
                    ggfit_row_bytes(type, (uint64_t)(hd * (n_head + n_head_kv))));
    gb_cb(b, *q, "Qcur", il);
    gb_cb(b, *k, "Kcur", il);
    gb_cb(b, *v, "Vcur", il);
}

/* build_ffn with LLM_FFN_SWIGLU, LLM_FFN_SEQ and no gate: SwiGLU over the
 * two halves of the up product. */
int32_t gb_ffn_gate_up(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t up = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, up, "ffn_up", il);
    const gg_tensor *t = &g->t[up];
    int64_t ne[4] = { t->ne[0] / 2, t->ne[1], t->ne[2], t->ne[3] };
    cur = gg_op_shape(g, GGFIT_OP_GLU, t->type, 4, ne, 1, &up);
    gb_cb(b, cur, "ffn_swiglu", il);
    return gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last, int32_t *rf_leaf)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t residual = inpL;
    int32_t rf = gb_rope_factors_ls(b, il, rf_leaf);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (wqkv >= 0)
        gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
    else
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    q = gb_rope(b, q, rf, il);
    k = gb_rope(b, k, rf, il);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    q = gg_scale(g, q);   /* 1/sqrt(n_embd_head); kq_scale stays 1 */
    gb_cb(b, q, "Qcur", il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &residual);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, residual);
    residual = cur;
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = gb_ffn_gate_up(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, residual, cur);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_phi3::graph<false> */
void gb_build_phi3(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    int32_t rf_leaf[GGFIT_MAX_BUFTS];
    for (int i = 0; i < GGFIT_MAX_BUFTS; i++)
        rf_leaf[i] = -1;
    if (b->hp->n_embd_head_k != b->hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp asserts they are equal */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1, rf_leaf);
    gb_output(b, inpL);
}
