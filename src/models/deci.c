/*
 * deci.c - src/models/deci.cpp: DeciLM / Llama-Nemotron (NAS), Llama's
 * block where each layer has its own heads and FFN width: no KV heads is a
 * "linear" attention (the output matrix on the normed input), no heads is
 * no attention at all, and a layer without FFN is skipped after its
 * attention (llama.cpp's continue: its output is dropped, its K and V are
 * still stored).
 */
#include "llama/graph.h"

/* llama_model_deci::graph */
static void build_deci(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_layer = b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int64_t n_head = li->n_head, n_head_kv = li->n_head_kv, n_ff = li->n_ff;
        int32_t inpSA = inpL, cur = inpL;
        if (n_head > 0) {
            cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
            gb_cb(b, cur, "attn_norm", il);
        }
        if (n_head > 0 && n_head_kv == 0) {
            cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
            gb_cb(b, cur, "wo", il);
        } else if (n_head > 0) {
            int32_t rf = gb_rope_factors(b, il);
            int32_t q, k, v;
            gb_build_qkv_clamp(b, cur, il, n_head, n_head_kv, false, &q, &k, &v);
            q = gb_rope(b, q, rf, il);
            k = gb_rope(b, k, rf, il);
            gb_cb(b, q, "Qcur", il);
            gb_cb(b, k, "Kcur", il);
            gb_cb(b, v, "Vcur", il);
            cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                          gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
        }
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        if (n_ff == 0)
            continue;
        int32_t ffn_inp = cur;
        if (n_head > 0) {
            ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
            gb_cb(b, ffn_inp, "ffn_inp", il);
        }
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_bias(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_deci = {
    .name = "deci",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_deci,
};
