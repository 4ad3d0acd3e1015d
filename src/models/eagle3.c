/*
 * eagle3.c - src/models/eagle3.cpp: EAGLE-3 drafters, one decoder layer
 * whose attention reads the normed token embeddings and the target's fused
 * features (g_embeddings, an embd input of n_embd rows) side by side. The
 * fit reserves the decoder graph (LLM_GRAPH_TYPE_DEFAULT); its encoder (fc
 * over three target layers' features) runs only beside a target.
 * llama_context creates the context alone only when the file has its own
 * token_embd and output; else it needs the target's (ctx_other: "eagle3
 * requires ctx_other to be set"), which only speculative decoding gives:
 * no graph then. With a draft vocabulary (d2t, its map to the target's)
 * the logits are scattered onto the target's vocabulary (ggml_fill with
 * -inf, then set_rows).
 */
#include <string.h>

#include "llama/graph.h"

/* llama_model_eagle3::graph<false> */
static void build_eagle3(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t nt = b->p->n_tokens, n_embd = hp->n_embd, hd = hp->n_embd_head_v;
    if (hp->n_layer != 1 || hd != (int64_t)hp->n_embd_head_k ||
        gb_weight(b, "output.weight", 0) < 0) {
        b->missing = true;
        return;
    }
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, 0);
    int32_t tokens = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, nt), "inp_tokens");
    int32_t inp_g = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, n_embd, nt), "inp_embd");
    int32_t inp_embd = gg_get_rows(g, gb_required(b, "token_embd.weight", 0), tokens);
    gb_cb(b, inp_embd, "inp_embd", -1);
    gb_inputs_kv(b);
    const int il = 0;
    int32_t embd_norm = gb_norm(b, inp_embd, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, embd_norm, "embd_norm", il);
    int32_t g_norm = gb_norm(b, inp_g, gb_required(b, "blk.%d.attn_norm_2.weight", il), -1);
    gb_cb(b, g_norm, "g_norm", il);
    int32_t inpSA = gb_key(b, "norm_before_residual", 0) ? g_norm : inp_g;
    int32_t cur = gg_concat(g, embd_norm, g_norm, 0);
    gb_cb(b, cur, "concat_embd", il);
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, q, "Qcur", il);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    gb_cb(b, k, "Kcur", il);
    int32_t v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    gb_cb(b, v, "Vcur", il);
    q = gb_reshape_3d(b, q, hd, li->n_head, nt);
    k = gb_reshape_3d(b, k, hd, li->n_head_kv, nt);
    v = gb_reshape_3d(b, v, hd, li->n_head_kv, nt);
    int32_t rf = gb_rope_factors(b, il);
    q = gb_rope(b, q, rf, il);
    k = gb_rope(b, k, rf, il);
    gb_cb(b, q, "Qcur_rope", il);
    gb_cb(b, k, "Kcur_rope", il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "post_attn_norm", il);
    cur = gb_ffn(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "eagle3_prenorm", il);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;   /* res->t_h_nextn */
    /* result_norm is no output here and res->t_embd stays unset (gg_cb:
     * gb_cb would take it for t_embd), so --embedding aborts. */
    cur = gb_norm(b, cur, gb_required(b, "output_norm.weight", 0), -1);
    gg_cb(g, cur, "result_norm", -1);
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    int32_t d2t = gb_weight(b, "d2t", 0);
    if (d2t < 0) {
        gb_cb(b, cur, "result_output", -1);
        g->t[cur].flags |= GGFIT_TF_OUTPUT;
        gg_expand(g, cur);
        return;
    }
    /* The draft vocabulary's logits scattered onto the target's, -inf
     * elsewhere. */
    int64_t n_draft = gb_ne(b, cur, 0), n_out = gb_ne(b, cur, 1);
    int32_t logits = gg_unary_op(g, GGFIT_OP_FILL,
                                 gg_new_4d(g, GGFIT_TYPE_F32, 1, hp->n_vocab, n_out, 1));
    cur = gg_set_rows(g, logits, gb_reshape_3d(b, cur, 1, n_draft, n_out),
                      gb_reshape_3d(b, d2t, n_draft, 1, 1));
    cur = gb_reshape_2d(b, cur, hp->n_vocab, n_out);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_tensors: fc, d2t (and enc.output_norm) are output-layer tensors. */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    if (!strcmp(t->info->name, "fc.weight") || !strcmp(t->info->name, "d2t") ||
        !strncmp(t->info->name, "enc.output_norm.", 16))
        return ggfit_model_hparams(m)->n_layer;
    return -2;
}

const ggfit_arch ggfit__model_eagle3 = {
    .name = "eagle3",
    .has_encoder = true,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "target_hidden_size", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_eagle3,
    .tensor_layer = tensor_layer,
    .embeddings_abort = "llama.cpp aborts (llama-graph.cpp build_pooling: GGML_ASSERT(inp != "
                        "nullptr && \"missing result_norm/result_embd tensor\")): EAGLE-3's "
                        "graph keeps no hidden states to pool",
};
