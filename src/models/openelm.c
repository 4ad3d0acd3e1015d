/*
 * openelm.c - src/models/openelm.cpp: OpenELM, layer-wise scaling (each
 * layer its own head counts and FFN width), one fused QKV product split
 * into heads, RMS Q/K norms before RoPE, SwiGLU FFN, output tied to the
 * token embeddings.
 */
#include "llama/graph.h"

/* llama_model_openelm::graph */
static void build_openelm(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_layer = b->hp->n_layer, hd = b->hp->n_embd_head_k, nt = b->p->n_tokens;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int64_t nh = li->n_head, nkv = li->n_head_kv;
        int32_t residual = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_qkv.weight", il), cur);
        gb_cb(b, cur, "wqkv", il);
        cur = gb_reshape_3d(b, cur, hd, 2 * nkv + nh, nt);
        uint64_t nb1 = g->t[cur].nb[1], nb2 = g->t[cur].nb[2];
        int32_t q = gb_view_3d(b, cur, hd, nh, nt, nb1, nb2, 0);
        gb_cb(b, q, "Qcur", il);
        int32_t k = gb_view_3d(b, cur, hd, nkv, nt, nb1, nb2, nb1 * (uint64_t)nh);
        gb_cb(b, k, "Kcur", il);
        int32_t v = gb_view_3d(b, cur, hd, nkv, nt, nb1, nb2, nb1 * (uint64_t)(nh + nkv));
        gb_cb(b, v, "Vcur", il);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "Qcur", il);
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k, "Kcur", il);
        q = gb_rope(b, q, -1, il);
        k = gb_rope(b, k, -1, il);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        if (il == n_layer - 1) {
            residual = gg_get_rows(g, residual, b->inp_out_ids);
            cur = gg_get_rows(g, cur, b->inp_out_ids);
        }
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, residual, cur);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_openelm = {
    .name = "openelm",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_openelm,
};
