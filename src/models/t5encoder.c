/*
 * t5encoder.c - src/models/t5encoder.cpp: T5's encoder alone, which runs
 * llama_model_t5::graph<true>. Its blocks are named "enc.blk.N." and its
 * final norm "enc.output_norm" (an output-layer tensor). create_memory
 * gives it a plain KV cache all the same (the default branch), which the
 * graph never touches: attention runs over the ubatch's own tokens
 * (build_attn_inp_no_cache) with a relative position bias added to KQ, so
 * never with flash attention; the graph ends at the normed embeddings (the
 * output matrix, or token_embd's tied copy, is loaded but unused).
 */
#include <string.h>

#include "llama/graph.h"

/* build_pos_bias: the relative position buckets' bias per head,
 * n_tokens x n_tokens x n_head. */
static int32_t pos_bias(bctx *b, int32_t pos_bucket, int32_t rel_b)
{
    gg_graph *g = b->g;
    int64_t n0 = gb_ne(b, pos_bucket, 0), n1 = gb_ne(b, pos_bucket, 1);
    int64_t ne1[1] = { n0 * n1 };
    int32_t p1 = gg_reshape(g, pos_bucket, 1, ne1);
    gb_cb(b, p1, "pos_bucket_1d", -1);
    int32_t bias = gg_get_rows(g, rel_b, p1);
    bias = gb_reshape_3d(b, bias, gb_ne(b, bias, 0), n0, n1);
    bias = gg_permute(g, bias, 2, 0, 1, 3);
    bias = gg_cont(g, bias);
    gb_cb(b, bias, "pos_bias", -1);
    return bias;
}

/* build_attn on build_attn_inp_no_cache with a KQ bias: build_attn_mha
 * never uses flash attention then. */
static int32_t attn_bias(bctx *b, int32_t wo, int32_t q, int32_t k, int32_t v, int32_t kq_b,
                         int il)
{
    gg_graph *g = b->g;
    gg_expand(g, q);
    gg_expand(g, k);
    gg_expand(g, v);
    const gg_tensor *tq = &g->t[q], *tv = &g->t[v];
    bool v_trans = tv->nb[1] > tv->nb[2];
    int64_t n_stream = gb_ne(b, k, 3);
    q = gb_view_4d(b, q, tq->ne[0], tq->ne[1], tq->ne[2] / n_stream, n_stream, tq->nb[1],
                   tq->nb[2], tq->nb[3] / (uint64_t)n_stream, 0);
    q = gg_permute(g, q, 0, 2, 1, 3);
    k = gg_permute(g, k, 0, 2, 1, 3);
    v = gg_permute(g, v, 0, 2, 1, 3);
    int32_t kq = gg_mul_mat(g, k, q);
    gb_cb(b, kq, "kq", il);
    kq = gg_binary(g, GGFIT_OP_ADD, kq, kq_b);
    gb_cb(b, kq, "kq_plus_kq_b", il);
    kq = gg_soft_max(g, kq, b->kq_mask, -1);
    gb_cb(b, kq, "kq_soft_max", il);
    if (!v_trans) {
        v = gg_cont(g, gg_transpose(g, v));
        gb_cb(b, v, "v_cont", il);
    }
    int32_t kqv = gg_mul_mat(g, v, kq);
    gb_cb(b, kqv, "kqv", il);
    int32_t cur = gg_permute(g, kqv, 0, 2, 1, 3);
    int64_t ne[2] = { gb_ne(b, cur, 0) * gb_ne(b, cur, 1), gb_ne(b, cur, 2) * gb_ne(b, cur, 3) };
    cur = gg_cont_shape(g, cur, 2, ne);
    if (b->p->no_kv_offload)
        g->t[cur].backend = b->p->cpu_backend;
    gg_expand(g, cur);
    gb_cb(b, cur, "kqv_out", il);
    return gg_mul_mat(g, wo, cur);
}

/* llama_model_t5::graph<true> */
static void build_t5encoder(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const gb_params *p = b->p;
    int n_layer = (int)hp->n_layer;
    int64_t hd = hp->n_embd_head_v, nt = p->n_tokens;
    if (hd != hp->n_embd_head_k) {
        b->missing = true;   /* llama.cpp asserts it */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    int32_t pos_bucket = gg_input(g, gg_new_2d(g, GGFIT_TYPE_I32, nt, nt), NULL);
    gb_inputs_no_cache(b);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "enc.blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q = gg_mul_mat(g, gb_required(b, "enc.blk.%d.attn_q.weight", il), cur);
        gb_cb(b, q, "Qcur", il);
        int32_t k = gg_mul_mat(g, gb_required(b, "enc.blk.%d.attn_k.weight", il), cur);
        gb_cb(b, k, "Kcur", il);
        int32_t v = gg_mul_mat(g, gb_required(b, "enc.blk.%d.attn_v.weight", il), cur);
        gb_cb(b, v, "Vcur", il);
        q = gb_reshape_3d(b, q, hd, li->n_head, nt);
        k = gb_reshape_3d(b, k, hd, li->n_head_kv, nt);
        v = gb_reshape_3d(b, v, hd, li->n_head_kv, nt);
        /* the layer's own bias, else the first layer's (which must be there) */
        int32_t rel_b = gb_weight(b, "enc.blk.%d.attn_rel_b.weight", il);
        if (rel_b < 0)
            rel_b = gb_required(b, "enc.blk.%d.attn_rel_b.weight", 0);
        int32_t kq_b = pos_bias(b, pos_bucket, rel_b);
        cur = attn_bias(b, gb_required(b, "enc.blk.%d.attn_o.weight", il), q, k, v, kq_b, il);
        gb_cb(b, cur, "kqv_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "enc.blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        /* T5: ReLU; flan-T5: GEGLU over a parallel gate */
        int32_t gate = gb_weight(b, "enc.blk.%d.ffn_gate.weight", il);
        cur = gb_build_ffn(b, cur, gb_required(b, "enc.blk.%d.ffn_up.weight", il), -1, gate, -1,
                           gb_required(b, "enc.blk.%d.ffn_down.weight", il), -1,
                           gate >= 0 ? GB_FFN_GELU : GB_FFN_RELU, gate >= 0, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_cb(b, inpL, "result_embd", -1);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "enc.output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_tensors: enc.output_norm is an output-layer tensor. */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    if (!strncmp(t->info->name, "enc.output_norm.", 16))
        return ggfit_model_hparams(m)->n_layer;
    return -2;
}

const ggfit_arch ggfit__model_t5encoder = {
    .name = "t5encoder",
    .has_encoder = true,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.relative_buckets_count", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_t5encoder,
    .tensor_layer = tensor_layer,
};
