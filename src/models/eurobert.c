/*
 * eurobert.c - src/models/eurobert.cpp: EuroBERT, a Llama-shaped encoder
 * without a memory module: RMS norms, RoPE, attention over the ubatch's own
 * tokens (n_tokens x n_tokens mask), SwiGLU, and the graph ends at the
 * normed token embeddings (no logits). NeoBERT (neo-bert.cpp) builds the
 * same graph with a fused QKV, SwiGLU over the halves of a 2 n_ff up, and
 * its final norm named enc.output_norm.
 */
#include <string.h>

#include "llama/graph.h"

/* llama_model_eurobert::graph and llama_model_neo_bert::graph */
static void build(bctx *b, bool neo)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const gb_params *p = b->p;
    int n_layer = (int)hp->n_layer;
    if (hp->n_embd_head_v != hp->n_embd_head_k) {
        b->missing = true;   /* llama.cpp asserts it */
        return;
    }
    b->inp_pos = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_tokens), NULL);
    int32_t inpL = gb_inp_embd(b);
    gb_cb(b, inpL, "inp_embd", -1);
    gb_inputs_no_cache(b);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(p->m, (uint32_t)il);
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        int32_t q, k, v;
        int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
        if (wqkv >= 0)
            gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
        else
            gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn_no_cache(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v,
                               il);
        gb_cb(b, cur, "kqv_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpL);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        int32_t ffn_inp = cur;
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = neo ? gb_ffn_gate_up(b, cur, il) : gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        inpL = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    }
    int32_t cur = gb_norm(b, inpL,
                          gb_required(b, neo ? "enc.output_norm.weight" : "output_norm.weight", 0),
                          -1);
    gb_cb(b, cur, "result_embd", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

static void build_eurobert(bctx *b)
{
    build(b, false);
}

static void build_neo_bert(bctx *b)
{
    build(b, true);
}

/* load_tensors: NeoBERT's enc.output_norm is an output-layer tensor. */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    if (!strncmp(t->info->name, "enc.output_norm.", 16))
        return ggfit_model_hparams(m)->n_layer;
    return -2;
}

const ggfit_arch ggfit__model_eurobert = {
    .name = "eurobert",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .no_output = true,
    .build = build_eurobert,
};

const ggfit_arch ggfit__model_neo_bert = {
    .name = "neo-bert",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .no_output = true,
    .build = build_neo_bert,
    .tensor_layer = tensor_layer,
};
