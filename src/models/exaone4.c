/*
 * exaone4.c - src/models/exaone4.cpp: EXAONE 4.0, a block with its norms
 * after attention and FFN instead of before: per-head Q/K RMS norms on
 * the block input (no pre-norm), RoPE only on the sliding-window layers of
 * an iSWA model, attention, post-norm, residual, SwiGLU FFN, post-norm,
 * residual. Sliding windows only in the 64-block model (32B).
 */
#include "llama/graph.h"
#include "versions/version.h"

/* Attention of an EXAONE 4.0 block: build_qkv, per-head Q/K norms. */
static int32_t exaone4_attn(bctx *b, int32_t cur, int il)
{
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
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
    /* RoPE on the sliding-window layers, or everywhere without windows. */
    if (!b->p->swa || (b->p->layer_flags[il] & GB_LAYER_SWA)) {
        int32_t rf = gb_rope_factors(b, il);
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

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    int32_t cur = exaone4_attn(b, inpL, il);
    if (last)
        gb_out_rows(b, &cur, &inpL);
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
    gb_cb(b, cur, "attn_post_norm", il);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_ffn(b, ffn_inp, il);
    gb_cb(b, cur, "ffn_out", il);
    /* normed as layer -1: its "norm" is not pinned */
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm.weight", il), -1);
    gb_cb(b, cur, "ffn_post_norm", -1);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_exaone4::graph */
static void build_exaone4(bctx *b)
{
    /* The NextN blocks are loaded, not run. */
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    int32_t inpL = gb_inp_embd(b);
    if (b->p->swa)
        gb_inputs_kv_iswa(b);
    else
        gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    gb_output(b, inpL);
}

/* llama_model_exaone4::load_arch_hparams: sliding windows (4096 tokens
 * unless the file says otherwise) in the 64-block model only, where the
 * blocks are counted before nextn_predict_layers is read: NextN blocks
 * included, so EXAONE 4.5 (64 blocks and an MTP one) has no window at all;
 * the others ignore the window. */
/* The 32B's windows: 64 blocks, counted without the NextN ones from
 * EXAONE4_MTP_SWA on (EXAONE 4.5, 65 blocks with one NextN, has them);
 * before, nextn_predict_layers was read after the test, so all blocks. */
static uint32_t window_exaone4(const ggfit_arch *a, const ggfit_model *m, uint32_t build)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    uint32_t n_layer = hp->n_layer;
    if (ggfit__llama_has(build, LLAMA_CHANGE_EXAONE4_MTP_SWA))
        n_layer -= hp->n_nextn;
    return n_layer == 64 ? (hp->n_swa ? hp->n_swa : a->swa_default) : 0;
}

/* Three sliding-window layers in four; the NextN blocks are left out of
 * the graph but keep their KV cells. */
const ggfit_arch ggfit__model_exaone4 = {
    .name = "exaone4",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .swa_default = 4096,
    .nextn_kv = true,
    .build = build_exaone4,
    .window_at = window_exaone4,
};
