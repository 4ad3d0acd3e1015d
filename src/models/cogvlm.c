/*
 * cogvlm.c - src/models/cogvlm.cpp: CogVLM's text model. Each block has
 * text weights and visual-expert copies (visexp_*, loaded, not in the text
 * graph: a reserve ubatch holds tokens). Q, K and V are views of one fused
 * product, roped with plain ggml_rope (rope_freqs is loaded but unread); no
 * output-row selection: every token runs through the last block and the
 * output.
 */
#include "llama/graph.h"

/* llama_model_cogvlm::graph, text path */
static void build_cogvlm(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int64_t nt = b->p->n_tokens, hd = hp->n_embd_head_v, n_embd = hp->n_embd;
    if (hd != (int64_t)hp->n_embd_head_k) {
        b->missing = true;   /* llama.cpp asserts they are equal */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpSA, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        int32_t qkv = gg_mul_mat(g, gb_required(b, "blk.%d.attn_qkv.weight", il), cur);
        uint64_t nb1 = (uint64_t)hd * sizeof(float), nb2 = g->t[qkv].nb[1];
        uint64_t es = sizeof(float);
        int32_t q = gb_view_3d(b, qkv, hd, li->n_head, nt, nb1, nb2, 0);
        int32_t k = gb_view_3d(b, qkv, hd, li->n_head_kv, nt, nb1, nb2, (uint64_t)n_embd * es);
        int32_t v = gb_view_3d(b, qkv, hd, li->n_head_kv, nt, nb1, nb2, 2 * (uint64_t)n_embd * es);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        gb_cb(b, cur, "attn_out", il);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                       gb_required(b, "blk.%d.ffn_gate.weight", il),
                       gb_required(b, "blk.%d.ffn_down.weight", il), il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_cogvlm = {
    .name = "cogvlm",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_cogvlm,
};
