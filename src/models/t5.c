/*
 * t5.c - src/models/t5.cpp: T5, encoder and decoder. llama_context
 * reserves the default graph type, which is the decoder's
 * (llama_model_t5::graph<false>); the encoder's graph is never reserved.
 * The decoder attends to its own tokens through a plain KV cache (the
 * default branch of create_memory: n_layer layers, the encoder's block
 * count, whatever decoder_block_count says), with a relative position bias
 * over the cache's cells added to KQ, so never with flash attention; then
 * to the encoder's output, which before any encode is n_ctx_train rows of
 * n_embd (build_inp_cross_embd, build_attn_inp_cross), with flash attention
 * as asked. n_outputs_max is n_batch (llama_model_has_encoder).
 */
#include <string.h>

#include "llama/check.h"
#include "llama/graph.h"

/* build_pos_bias: the relative position buckets' bias per head,
 * pos_bucket's ne0 x ne1 x n_head. */
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

/* build_qkv's separate path on the decoder's self-attention weights. */
static void dec_qkv(bctx *b, int32_t cur, int il, int64_t n_head, int64_t n_head_kv,
                    int32_t *q, int32_t *k, int32_t *v)
{
    gg_graph *g = b->g;
    int64_t hd = b->hp->n_embd_head_k, nt = b->p->n_tokens;
    *q = gg_mul_mat(g, gb_required(b, "dec.blk.%d.attn_q.weight", il), cur);
    gb_cb(b, *q, "Qcur", il);
    *k = gg_mul_mat(g, gb_required(b, "dec.blk.%d.attn_k.weight", il), cur);
    gb_cb(b, *k, "Kcur", il);
    *v = gg_mul_mat(g, gb_required(b, "dec.blk.%d.attn_v.weight", il), cur);
    gb_cb(b, *v, "Vcur", il);
    *q = gb_reshape_3d(b, *q, hd, n_head, nt);
    *k = gb_reshape_3d(b, *k, hd, n_head_kv, nt);
    *v = gb_reshape_3d(b, *v, b->hp->n_embd_head_v, n_head_kv, nt);
    gb_cb(b, *q, "Qcur", il);
    gb_cb(b, *k, "Kcur", il);
    gb_cb(b, *v, "Vcur", il);
}

/* llama_model_t5::graph<false> */
static void build_t5(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const gb_params *p = b->p;
    int64_t hd = hp->n_embd_head_v, nt = p->n_tokens;
    double dec_n = gb_key(b, "decoder_block_count", hp->n_layer);
    /* llama.cpp asserts equal heads; the KV cache holds only n_layer layers */
    if (hd != hp->n_embd_head_k || dec_n < 1 || dec_n > hp->n_layer || hp->n_ctx_train == 0) {
        b->missing = true;
        return;
    }
    int n_dec = (int)dec_n;
    int32_t inpL = gb_inp_embd(b);
    int32_t embd_enc = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, hp->n_embd, hp->n_ctx_train),
                                NULL);
    int64_t n_enc = hp->n_ctx_train;
    int32_t pos_bucket = gg_input(g, gg_new_2d(g, GGFIT_TYPE_I32, p->n_kv, nt), NULL);
    gb_inputs_kv(b);   /* its positions stay out of the graph */
    int32_t cross_mask = gg_input(g, gg_new_4d(g, p->flash_attn ? GGFIT_TYPE_F16
                                                                  : GGFIT_TYPE_F32,
                                               n_enc, nt, 1, 1), NULL);
    for (int il = 0; il < n_dec; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "dec.blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        dec_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        /* the layer's own bias, else the first layer's (which must be there) */
        int32_t rel_b = gb_weight(b, "dec.blk.%d.attn_rel_b.weight", il);
        if (rel_b < 0)
            rel_b = gb_required(b, "dec.blk.%d.attn_rel_b.weight", 0);
        int32_t kq_b = pos_bias(b, pos_bucket, rel_b);
        cur = gb_attn_kq_b(b, gb_required(b, "dec.blk.%d.attn_o.weight", il), -1, q, k, v, kq_b,
                           il);
        gb_cb(b, cur, "kqv_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, cur, "cross_inp", il);
        int32_t inpCA = cur;
        cur = gb_norm(b, cur, gb_required(b, "dec.blk.%d.cross_attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm_cross", il);
        /* cross-attention over the encoder's output rows */
        q = gg_mul_mat(g, gb_required(b, "dec.blk.%d.cross_attn_q.weight", il), cur);
        gb_cb(b, q, "Qcur", il);
        k = gg_mul_mat(g, gb_required(b, "dec.blk.%d.cross_attn_k.weight", il), embd_enc);
        gb_cb(b, k, "Kcur", il);
        v = gg_mul_mat(g, gb_required(b, "dec.blk.%d.cross_attn_v.weight", il), embd_enc);
        gb_cb(b, v, "Vcur", il);
        q = gb_reshape_3d(b, q, hd, li->n_head, nt);
        k = gb_reshape_3d(b, k, hd, li->n_head_kv, n_enc);
        v = gb_reshape_3d(b, v, hd, li->n_head_kv, n_enc);
        gg_expand(g, q);
        gg_expand(g, k);
        gg_expand(g, v);
        cur = gb_attn_mha(b, q, k, v, cross_mask, -1, il);
        gb_cb(b, cur, "kqv_out", il);
        cur = gg_mul_mat(g, gb_required(b, "dec.blk.%d.cross_attn_o.weight", il), cur);
        gb_cb(b, cur, "kqv_out", il);
        if (il == n_dec - 1)
            gb_out_rows(b, &cur, &inpCA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpCA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "dec.blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        /* T5: ReLU; flan-T5: GEGLU over a parallel gate */
        int32_t gate = gb_weight(b, "dec.blk.%d.ffn_gate.weight", il);
        cur = gb_build_ffn(b, cur, gb_required(b, "dec.blk.%d.ffn_up.weight", il), -1, gate, -1,
                           gb_required(b, "dec.blk.%d.ffn_down.weight", il), -1,
                           gate >= 0 ? GB_FFN_GELU : GB_FFN_RELU, gate >= 0, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_cb(b, inpL, "result_embd", -1);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "dec.output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_tensors: enc.output_norm and dec.output_norm are output-layer
 * tensors. */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    if (!strncmp(t->info->name, "enc.output_norm.", 16) ||
        !strncmp(t->info->name, "dec.output_norm.", 16))
        return ggfit_model_hparams(m)->n_layer;
    return -2;
}

/* The graph converts decoder_block_count to an integer. */
static void check(hp_check *c)
{
    hc_key_int(c, "decoder_block_count", 0, UINT32_MAX, 0, NULL,
               "llama.cpp reads it as an unsigned 32-bit count");
}

const ggfit_arch ggfit__model_t5 = {
    .name = "t5",
    .has_encoder = true,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.relative_buckets_count", NULL },
    .check = check,
    .mem = GGFIT_MEM_KV,
    .build = build_t5,
    .tensor_layer = tensor_layer,
};
