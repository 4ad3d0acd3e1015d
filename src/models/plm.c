/*
 * plm.c - src/models/plm.cpp: PLM, one Q product and compressed keys and
 * values rebuilt per head before a plain KV cache (gb_attn_kv_lora, the
 * values as 2-D rows), a squared-ReLU FFN without gate, output tied to the
 * token embeddings. Only without flash attention: with it llama.cpp
 * aborts.
 */
#include "llama/graph.h"

/* llama_model_plm::graph */
static void build_plm(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_layer = b->hp->n_layer;
    /* With flash attention llama.cpp aborts here: the 2-D values reach
     * llama_kv_cache::cpy_v as n_tokens heads of one token, and
     * ggml_set_rows asserts on the untransposed cache (GGML_ASSERT(a->ne[0]
     * == b->ne[0])). -fa auto, the default, aborts the same way: the
     * context reserves the graph with flash attention on first
     * (sched_reserve, resolve_fused_ops). There is no figure to reproduce:
     * only -fa off runs. */
    if (b->p->flash_attn) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
        gb_cb(b, q, "q", il);
        cur = gb_attn_kv_lora(b, cur, q, -1, true, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_build_ffn(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il), -1, -1, -1,
                           gb_required(b, "blk.%d.ffn_down.weight", il), -1, GB_FFN_RELU_SQR,
                           false, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_plm = {
    .name = "plm",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.kv_lora_rank", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_plm,
};
