/*
 * exaone_moe.c - src/models/exaone-moe.cpp: EXAONE MoE (K-EXAONE),
 * pre-norm blocks on an iSWA cache (three sliding-window layers in four,
 * 128 tokens unless the file says otherwise), per-head Q/K RMS norms, RoPE
 * only on the sliding-window layers, then a dense SwiGLU FFN in the first
 * leading_dense_block_count blocks and routed experts plus a shared expert
 * in the others. The NextN blocks are loaded, not run.
 */
#include "llama/graph.h"

static int32_t exaone_moe_attn(bctx *b, int32_t cur, int il)
{
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    bool local = b->p->swa && (b->p->layer_flags[il] & GB_LAYER_SWA);
    int32_t rf = gb_rope_factors(b, il);
    int32_t q, k, v;
    int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (wqkv >= 0)
        gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
    else
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    gb_cb(b, k, "Kcur_normed", il);
    if (local) {
        q = gb_rope(b, q, rf, il);
        k = gb_rope(b, k, rf, il);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
    int32_t out = b->p->swa ? gb_attn_iswa(b, wo, -1, q, k, v, -1, il)
                            : gb_attn(b, wo, -1, q, k, v, -1, il);
    gb_cb(b, out, "attn_out", il);
    return out;
}

static int32_t exaone_moe_ffn(bctx *b, int32_t cur, int il)
{
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        return cur;
    }
    return gb_moe_shared_layer(b, GB_GATING_SOFTMAX, cur, il);
}

/* llama_model_exaone_moe::graph */
static void build_exaone_moe(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    if (n_layer < 1 || b->hp->n_embd_head_k != b->hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp refuses or asserts these */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    if (b->p->swa)
        gb_inputs_kv_iswa(b);
    else
        gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        cur = exaone_moe_attn(b, cur, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = exaone_moe_ffn(b, cur, il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

/* Always sliding windows: three layers in four unless the file gives a
 * pattern, 128 tokens unless it gives a window; the NextN blocks are left
 * out of the graph but keep their KV cells, and follow the pattern too
 * (load_arch_hparams sets it before it reads nextn_predict_layers). */
const ggfit_arch ggfit__model_exaone_moe = {
    .name = "exaone-moe",
    .required_keys = (const char *const[]){ "attention.sliding_window",
            "attention.layer_norm_rms_epsilon", "expert_feed_forward_length", "expert_gating_func",
            NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .swa_default = 128,
    .nextn_kv = true,
    .swa_nextn_pattern = true,
    .build = build_exaone_moe,
};
