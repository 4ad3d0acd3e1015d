/*
 * mimo2.c - src/models/mimo2.cpp: MiMo-V2, per-layer head counts, keys and
 * values of their own widths (Q/K/V fused or separate), RoPE, attention
 * sinks on an iSWA cache (the pattern one bool per block), an optional
 * scale of the attention output, dense SwiGLU FFNs in blocks without a
 * router, else sigmoid-routed experts. The last nextn_predict_layers blocks
 * are MTP heads: without --spec-type mtp llama.cpp skips all their
 * tensors; they get no KV cells and are not in this graph (an MTP
 * context's: build_mimo2_mtp).
 */
#include "llama/graph.h"

/* llama_model_mimo2::graph's Q/K/V: views of attn_qkv or separate
 * products, K heads of n_embd_head_k, V heads of n_embd_head_v. */
static void qkv(bctx *b, int32_t cur, int il, int64_t nh, int64_t nkv, int32_t *q, int32_t *k,
                int32_t *v)
{
    gg_graph *g = b->g;
    int64_t hk = b->hp->n_embd_head_k, hv = b->hp->n_embd_head_v, nt = b->p->n_tokens;
    int32_t w = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (w >= 0) {
        int32_t t = gg_mul_mat(g, w, cur);
        gb_cb(b, t, "wqkv", il);
        uint32_t type = g->t[t].type;
        uint64_t row_k = ggfit_row_bytes(type, (uint64_t)hk);
        uint64_t row_v = ggfit_row_bytes(type, (uint64_t)hv), full = g->t[t].nb[1];
        uint64_t k_off = row_k * (uint64_t)nh, v_off = k_off + row_k * (uint64_t)nkv;
        *q = gb_view_3d(b, t, hk, nh, nt, row_k, full, 0);
        *k = gb_view_3d(b, t, hk, nkv, nt, row_k, full, k_off);
        *v = gb_view_3d(b, t, hv, nkv, nt, row_v, full, v_off);
        return;
    }
    *q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, *q, "Qcur", il);
    *k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    gb_cb(b, *k, "Kcur", il);
    *v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    gb_cb(b, *v, "Vcur", il);
    *q = gb_reshape_3d(b, *q, hk, nh, nt);
    *k = gb_reshape_3d(b, *k, hk, nkv, nt);
    *v = gb_reshape_3d(b, *v, hv, nkv, nt);
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool last, bool v_scale)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    q = gb_rope(b, q, -1, il);
    k = gb_rope(b, k, -1, il);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn_iswa(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v,
                       gb_weight(b, "blk.%d.attn_sinks.weight", il), il);
    gb_cb(b, cur, "attn_out", il);
    if (v_scale) {
        cur = gg_scale(g, cur);
        gb_cb(b, cur, "attn_out_scaled", il);
    }
    if (last)   /* embeddings_nextn is off: the last layer is cropped */
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        cur = gb_ffn_bias(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    } else {
        gb_moe o = {
            .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
            .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
            .gate_exps = gb_weight(b, "blk.%d.ffn_gate_exps.weight", il),
            .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
            .gate_up_exps = -1,
            .exp_probs_b = gb_weight(b, "blk.%d.exp_probs_b.bias", il),
            .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
            .gating = GB_GATING_SIGMOID,
            .norm_w = true,
            .n_expert = b->hp->n_expert,
            .n_expert_used = b->hp->n_expert_used,
        };
        cur = gb_moe_ffn_ex(b, cur, &o, il);
        gb_cb(b, cur, "ffn_moe_out", il);
    }
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_mimo2::graph */
static void build_mimo2(bctx *b)
{
    /* llama.cpp always makes the two caches (swa_always: a window of 0
     * too); it refuses files without attention.sliding_window or
     * sliding_window_pattern ("key not found in model"), so no SWA here
     * means a pattern without sliding layers: no graph. */
    if (!b->p->swa) {
        b->missing = true;
        return;
    }
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    double vs = gb_key(b, "attention.value_scale", 0);
    bool v_scale = vs != 0 && vs != 1;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv_iswa(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1, v_scale);
    gb_output(b, inpL);
}

/* llama_model_mimo2::graph_mtp: the first NextN block, a decoder layer as
 * the trunk's (fused Q/K/V only, the attention output scaled whenever
 * value_scale is set) on the joined embedding and hidden state over the
 * iSWA cache; the output rows (h_nextn), then the head (its norm falls
 * back on the block's layer_output_norm before output_norm). */
static void build_mimo2_mtp(bctx *b)
{
    int il = (int)(b->hp->n_layer - b->hp->n_nextn);
    if (!b->p->swa || gb_weight(b, "blk.%d.attn_qkv.weight", il) < 0) {
        b->missing = true;   /* graph_mtp asserts a fused attn_qkv */
        return;
    }
    int32_t emb, h;
    gb_mtp_embd(b, il, &emb, &h);
    gb_inputs_kv_iswa(b);
    int32_t cur = gb_mtp_eh_proj(b, il, emb, h);
    cur = layer(b, cur, il, false, gb_key(b, "attention.value_scale", 0) != 0);
    if (b->missing)
        return;
    int32_t w = gb_weight(b, "blk.%d.nextn.shared_head_norm.weight", il);
    if (w < 0)
        w = gb_weight(b, "blk.%d.layer_output_norm.weight", il);
    gb_mtp_head(b, cur, il, GB_MTP_ROWS_FIRST, w);
}

/* load_arch_hparams requires both (get_key, get_key_or_arr). */
static const char *const required_keys[] = {
    "attention.sliding_window",
    "attention.sliding_window_pattern",
    "attention.layer_norm_rms_epsilon",
    "expert_feed_forward_length",
    NULL,
};

/* The sliding-window pattern is the file's, one bool per block. */
const ggfit_arch ggfit__model_mimo2 = {
    .name = "mimo2",
    .mtp = true,   /* load_mtp loads the NextN blocks */
    .mtp_kv_nextn = true,
    .build_mtp = build_mimo2_mtp,
    .mem = GGFIT_MEM_KV,
    .required_keys = required_keys,
    .swa_key = GGFIT_SWA_KEY_LAYERS,   /* read before nextn_predict_layers */
    .swa_always = true,
    .build = build_mimo2,
};
