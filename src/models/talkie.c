/*
 * talkie.c - src/models/talkie.cpp: a Llama-like stack whose norms carry
 * no weights (but Q's gain, one per head, after RoPE), a skip from the
 * normed embeddings scaled per block into each block's output, and logits
 * scaled by logit_scale. A plain KV cache.
 */
#include "llama/graph.h"

/* llama_model_talkie::graph */
static void build_talkie(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    if (hp->n_embd_head_k != hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp asserts it */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    inpL = gb_norm(b, inpL, -1, -1);
    gb_cb(b, inpL, "inp_norm", -1);
    int32_t embd_skip = inpL;
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL, inp_skip = embd_skip;
        int32_t cur = gb_norm(b, inpL, -1, il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "Qcur_norm", il);
        k = gb_norm(b, k, -1, il);
        gb_cb(b, k, "Kcur_norm", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1) {
            gb_out_rows(b, &cur, &inpSA);
            inp_skip = gg_get_rows(g, inp_skip, b->inp_out_ids);
        }
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, -1, il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        int32_t skip = gg_binary(g, GGFIT_OP_MUL, inp_skip,
                                 gb_required(b, "blk.%d.layer_output_scale.weight", il));
        gb_cb(b, skip, "embd_skip", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, skip);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    int32_t cur = gb_norm(b, inpL, -1, -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_required(b, "output.weight", 0), cur);
    cur = gg_scale(g, cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

const ggfit_arch ggfit__model_talkie = {
    .name = "talkie",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "logit_scale",
            NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_talkie,
};
