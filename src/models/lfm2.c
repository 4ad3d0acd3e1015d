/*
 * lfm2.c - src/models/lfm2.cpp: LFM2, short convolution layers (with
 * a recurrent conv state) and attention layers, on hybrid memory. LFM2-MoE
 * (lfm2moe.cpp) builds the same graph, with routed experts in place of the
 * dense feed-forward after the leading_dense_block_count first layers.
 */
#include <string.h>

#include "llama/graph.h"
#include "versions/version.h"

/* build_attn_block: attention with RMS-normed Q and K and RoPE. */
static int32_t attn_block(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "model.layers.{}.self_attn.q_layernorm", il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, k, "model.layers.{}.self_attn.k_layernorm", il);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
    gb_cb(b, cur, "model.layers.{}.self_attn.out_proj", il);
    return cur;
}

/* build_shortconv_block: in_proj splits into gates b, c and input x; the
 * causal conv runs over the conv state followed by b*x, whose last d_conv
 * columns become the new state. */
static int32_t shortconv_block(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t n_seqs = b->p->n_seqs, n_seq_tokens = b->p->n_tokens / n_seqs;
    int64_t d_conv = (int64_t)hp->shortconv_l_cache - 1, n_embd = hp->n_embd;
    cur = gb_reshape_3d(b, cur, gb_ne(b, cur, 0), n_seq_tokens, n_seqs);
    int32_t bcx = gg_mul_mat(g, gb_required(b, "blk.%d.shortconv.in_proj.weight", il), cur);
    gb_cb(b, bcx, "model.layers.{}.conv.in_proj", il);
    const gg_tensor *t = &g->t[bcx];
    int64_t chunk = t->ne[0] / 3, ne1 = t->ne[1], ne2 = t->ne[2];
    uint64_t nb1 = t->nb[1], nb2 = t->nb[2], es = t->nb[0];
    int32_t gb = gb_view_3d(b, bcx, chunk, ne1, ne2, nb1, nb2, 0);
    int32_t gc = gb_view_3d(b, bcx, chunk, ne1, ne2, nb1, nb2, (uint64_t)chunk * es);
    int32_t x = gb_view_3d(b, bcx, chunk, ne1, ne2, nb1, nb2, 2 * (uint64_t)chunk * es);
    int32_t bx = gg_transpose(g, gg_binary(g, GGFIT_OP_MUL, gb, x));

    int32_t state = gb_state(b, il, 'r');
    int32_t conv = gb_rs(b, state, d_conv * n_embd, NULL, NULL);
    conv = gb_reshape_3d(b, conv, d_conv, n_embd, n_seqs);
    bx = gg_concat(g, conv, bx, 0);
    const gg_tensor *tx = &g->t[bx];
    if (!ggfit__llama_has(b->p->llama_build, LLAMA_CHANGE_ROLLBACK_LFM2)) {
        int32_t new_conv = gb_view_3d(b, bx, d_conv, tx->ne[1], tx->ne[2], tx->nb[1], tx->nb[2],
                                      (uint64_t)(tx->ne[0] - d_conv) * tx->nb[0]);
        const gg_tensor *tn = &g->t[new_conv];
        int64_t n_new = tn->ne[0] * tn->ne[1] * tn->ne[2] * tn->ne[3];
        gg_expand(g, gg_cpy(g, new_conv, gg_view(g, state, 1, &n_new, NULL, 0)));
    } else {
        /* ROLLBACK_LFM2: the states of the last K = n_rs_seq + 1 tokens,
         * slot s the columns s tokens back, each in its slot's rows. */
        int64_t K = (int64_t)b->p->n_rs_seq + 1, n_written = n_seq_tokens < K ? n_seq_tokens : K;
        int64_t mem = gb_ne(b, state, 1) / K;
        uint64_t row = g->t[state].nb[1];
        for (int64_t slot = 0; slot < n_written; slot++) {
            tx = &g->t[bx];
            int32_t snap = gb_view_3d(b, bx, d_conv, tx->ne[1], tx->ne[2], tx->nb[1], tx->nb[2],
                                      (uint64_t)(tx->ne[0] - d_conv - slot) * tx->nb[0]);
            int32_t dst = gb_view_2d(b, state, d_conv * n_embd, n_seqs, row,
                                     (uint64_t)(slot * mem) * row);
            gg_expand(g, gg_cpy(g, snap, dst));
        }
    }

    int32_t conv_out = gg_ssm_conv(g, bx, gb_required(b, "blk.%d.shortconv.conv.weight", il));
    gb_cb(b, conv_out, "model.layers.{}.conv.conv", il);
    int32_t y = gg_binary(g, GGFIT_OP_MUL, gc, conv_out);
    y = gg_mul_mat(g, gb_required(b, "blk.%d.shortconv.out_proj.weight", il), y);
    gb_cb(b, y, "model.layers.{}.conv.out_proj", il);
    return gb_reshape_2d(b, y, gb_ne(b, y, 0), n_seq_tokens * n_seqs);
}

/* build_moe_feed_forward: the experts' weights always sum to 1 and are never
 * scaled (lfm2moe reads no expert_weights_* keys); the gating is the file's
 * expert_gating_func, which llama.cpp requires. */
static int32_t moe_block(bctx *b, int32_t cur, int il)
{
    gb_moe o;
    gb_moe_layer(b, il, 0, &o);
    o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
    o.norm_w = true;
    o.w_scale = 0;
    return gb_moe_ffn_ex(b, cur, &o, il);
}

/* llama_model_lfm2::graph without sliding-window attention (graph<false>),
 * for lfm2 (every layer dense) and lfm2moe (moe). */
static void build(bctx *b, bool moe)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    /* lfm2 sets n_layer_dense_lead to n_layer; lfm2moe reads it (0 if
     * absent). */
    uint32_t n_dense = moe ? hp->n_layer_dense_lead : hp->n_layer;
    /* The iSWA variant and causal-less conv padding have no graph here. */
    if (b->p->swa || hp->shortconv_l_cache < 2) {
        b->missing = true;
        return;
    }
    int32_t cur = gb_inp_embd(b);
    gb_cb(b, cur, "model.embed_tokens", -1);
    gg_expand(g, cur);
    gb_inputs_rs(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        int32_t prev = cur;
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "model.layers.{}.operator_norm", il);
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = shortconv_block(b, cur, il);
        else
            cur = attn_block(b, cur, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &prev);
        cur = gg_binary(g, GGFIT_OP_ADD, prev, cur);
        int32_t ffn_in = gb_norm(b, cur, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, ffn_in, "model.layers.{}.ffn_norm", il);
        int32_t ffn_out = (uint32_t)il < n_dense ? gb_ffn(b, ffn_in, il)
                                                 : moe_block(b, ffn_in, il);
        /* lfm2.cpp names the FFN's input "ffn_out", not its output. */
        gb_cb(b, ffn_in, "model.layers.{}.ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_out);
        gb_cb(b, cur, "l_out", il);
    }
    cur = gb_norm(b, cur, gb_required(b, "token_embd_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    /* with --embedding (cparams.embeddings) there are no logits */
    if (b->p->pooling < 0) {
        cur = gg_mul_mat(g, gb_output_weight(b), cur);
        gb_cb(b, cur, "result_output", -1);
        g->t[cur].flags |= GGFIT_TF_OUTPUT;
    }
    gg_expand(g, cur);
}

/* llama_model_lfm2::graph: dense layers only. */
static void build_lfm2(bctx *b)
{
    build(b, false);
}

/* llama_model_lfm2moe::graph: experts after the leading dense layers. */
static void build_lfm2moe(bctx *b)
{
    build(b, true);
}

/* llama_model_lfm2::load_tensors: the final norm is stored under the name
 * token_embd_norm, and placed with the output layer. */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    if (!strncmp(t->info->name, "token_embd_norm", 15))
        return ggfit_model_hparams(m)->n_layer;
    return -2;
}

/* llama_hparams::n_embd_r and n_embd_s: the short conv's last l_cache - 1
 * inputs, no SSM state. */
static void state_size(const ggfit_hparams *hp, uint64_t *r, uint64_t *s)
{
    *r = (uint64_t)hp->n_embd * (hp->shortconv_l_cache ? hp->shortconv_l_cache - 1 : 0);
    *s = 0;
}

/* The short-conv layers are those without KV heads. */
const ggfit_arch ggfit__model_lfm2 = {
    .name = "lfm2",
    .required_keys = (const char *const[]){ "shortconv.l_cache", "attention.layer_norm_rms_epsilon",
            NULL },
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
    .build = build_lfm2,
    .rs_rollback = true,
    .rs_rollback_since = LLAMA_CHANGE_ROLLBACK_LFM2,
    .tensor_layer = tensor_layer,
    .state_size = state_size,
};

const ggfit_arch ggfit__model_lfm2moe = {
    .name = "lfm2moe",
    .required_keys = (const char *const[]){ "shortconv.l_cache", "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", "expert_gating_func", NULL },
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
    .build = build_lfm2moe,
    .rs_rollback = true,
    .rs_rollback_since = LLAMA_CHANGE_ROLLBACK_LFM2,
    .tensor_layer = tensor_layer,
    .state_size = state_size,
};
