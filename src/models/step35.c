/*
 * step35.c - src/models/step35.cpp: Step-3.5. iSWA attention (the pattern
 * one bool per block) with per-layer head counts, optional per-head Q/K
 * norms and an optional head-wise sigmoid gate on the attention output
 * (attn_gate: one value per head), before the output projection; dense
 * SwiGLU FFNs in blocks without a router, else routed experts (sigmoid
 * gating unless the file says otherwise) plus a shared expert; with
 * swiglu_clamp_exp / _shexp set for a layer its SwiGLUs are clamped. The last
 * nextn_predict_layers blocks are MTP heads: without --spec-type mtp
 * llama.cpp skips the weights it creates with the block's own flags
 * (attn_norm, attn_q/k/v (or attn_qkv) and their biases, attn_output,
 * ffn_norm, nextn.eh_proj, nextn.enorm, nextn.hnorm) but still loads the
 * optional ones (TENSOR_NOT_REQUIRED alone) on the block's own device; they
 * get no KV cells and are not in this graph (an MTP context's:
 * build_step35_mtp).
 */
#include <stdio.h>
#include <string.h>

#include "llama/graph.h"

/* The tensors of an MTP block load_block_mtp creates with mtp_flags
 * (TENSOR_SKIP without load_mtp); every other one it makes is loaded. */
static bool nextn_loaded(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    static const char *const skipped[] = {
        "attn_norm.weight", "attn_qkv.weight", "attn_qkv.bias", "attn_q.weight",
        "attn_k.weight", "attn_v.weight", "attn_q.bias", "attn_k.bias", "attn_v.bias",
        "attn_output.weight", "ffn_norm.weight", "nextn.eh_proj.weight",
        "nextn.enorm.weight", "nextn.hnorm.weight",
    };
    const char *rest = strchr(t->info->name + 4, '.');   /* past "blk.N" */
    if (!rest)
        return false;
    rest++;
    for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++)
        if (strcmp(rest, skipped[i]) == 0)
            return false;
    return true;
}

/* hparams.swiglu_clamp_exp / _shexp of layer il, 0 when absent. */
static double clamp_of(bctx *b, const char *suffix, int il)
{
    if (b->p->mtp)
        return 0;   /* graph_mtp's FFNs are never clamped */
    return gb_key_layer(b, suffix, il);
}

static int32_t attention(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = b->hp->n_embd_head_k, hv = b->hp->n_embd_head_v, nt = b->p->n_tokens;
    int64_t n_head = li->n_head, n_head_kv = li->n_head_kv;
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    int32_t v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    q = gb_reshape_3d(b, q, hd, n_head, nt);
    k = gb_reshape_3d(b, k, hd, n_head_kv, nt);
    v = gb_reshape_3d(b, v, hv, n_head_kv, nt);
    int32_t w;
    if ((w = gb_weight(b, "blk.%d.attn_q_norm.weight", il)) >= 0) {
        q = gb_norm(b, q, w, il);
        gb_cb(b, q, "Qcur_normed", il);
    }
    if ((w = gb_weight(b, "blk.%d.attn_k_norm.weight", il)) >= 0) {
        k = gb_norm(b, k, w, il);
        gb_cb(b, k, "Kcur_normed", il);
    }
    /* Full-attention layers read rope_freqs, sliding-window ones none. */
    bool swa = ggfit__model_swa_layer(b->p->m, (uint32_t)il, b->hp->n_layer);
    int32_t rf = swa ? -1 : gb_rope_factors(b, il);
    q = gb_rope(b, q, rf, il);
    k = gb_rope(b, k, rf, il);
    gb_cb(b, q, "Qcur_pos", il);
    gb_cb(b, k, "Kcur_pos", il);
    int32_t out = gb_attn_iswa(b, -1, -1, q, k, v, -1, il);
    gb_cb(b, out, "attn_out", il);
    int32_t wg = gb_weight(b, "blk.%d.attn_gate.weight", il);
    if (wg >= 0) {
        int32_t gate = gg_mul_mat(g, wg, cur);
        gb_cb(b, gate, "attn_gate", il);
        gate = gg_unary_op(g, GGFIT_OP_UNARY, gate);
        gb_cb(b, gate, "attn_gate_sigmoid", il);
        int32_t a3 = gb_reshape_3d(b, out, hv, n_head, nt);
        int32_t g3 = gb_reshape_3d(b, gate, 1, n_head, nt);
        gb_cb(b, g3, "attn_gate_3d", il);
        a3 = gg_binary(g, GGFIT_OP_MUL, a3, g3);
        gb_cb(b, a3, "attn_gated_3d", il);
        out = gb_reshape_2d(b, a3, hv * n_head, nt);
        gb_cb(b, out, "attn_gated", il);
    }
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), out);
    gb_cb(b, cur, "attn_proj", il);
    return cur;
}

/* build_ffn with SiLU and a parallel gate (when there is one); with
 * swiglu_clamp_shexp[il] set, up is clamped, silu(gate) clamped and the two
 * multiplied instead of the plain SwiGLU. */
static int32_t ffn_w(bctx *b, int32_t cur, int32_t up, int32_t gate, int32_t down,
                     double limit, int il)
{
    gg_graph *g = b->g;
    if (gate < 0 || limit <= 1e-6)
        return gb_ffn_w(b, cur, up, gate, down, il);
    int32_t tmp = gg_mul_mat(g, up, cur);
    gb_cb(b, tmp, "ffn_up", il);
    cur = gg_mul_mat(g, gate, cur);
    gb_cb(b, cur, "ffn_gate", il);
    tmp = gg_clamp(g, tmp);
    gb_cb(b, tmp, "ffn_up_clamped", il);
    int32_t act = gg_unary_op(g, GGFIT_OP_UNARY, cur);
    gb_cb(b, act, "ffn_silu", il);
    act = gg_clamp(g, act);
    gb_cb(b, act, "ffn_silu_clamped", il);
    cur = gg_binary(g, GGFIT_OP_MUL, act, tmp);
    gb_cb(b, cur, "ffn_swiglu_limited", il);
    return gg_mul_mat(g, down, cur);
}

static int32_t ffn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    double limit_sh = clamp_of(b, "swiglu_clamp_shexp", il);
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        cur = ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                    gb_weight(b, "blk.%d.ffn_gate.weight", il),
                    gb_required(b, "blk.%d.ffn_down.weight", il), limit_sh, il);
        gb_cb(b, cur, "ffn_out", il);
        return cur;
    }
    gb_moe o;
    gb_moe_layer(b, il, GB_GATING_SIGMOID, &o);
    o.swiglu_limit = (float)clamp_of(b, "swiglu_clamp_exp", il);
    int32_t moe = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe, "ffn_moe_out", il);
    int32_t sh = ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                       gb_weight(b, "blk.%d.ffn_gate_shexp.weight", il),
                       gb_required(b, "blk.%d.ffn_down_shexp.weight", il), limit_sh, il);
    gb_cb(b, sh, "ffn_shared_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, moe, sh);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

static int32_t layer(bctx *b, int32_t inpL, int il)
{
    gg_graph *g = b->g;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = attention(b, cur, il);
    /* embeddings_nextn_masked is off: the output rows are picked after
     * the last layer. */
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = ffn(b, cur, il);
    if (b->missing)
        return cur;
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_step35::graph */
static void build_step35(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    if (!b->p->swa || n_layer < 1) {
        b->missing = true;   /* create_memory asserts SWA layers */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv_iswa(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il);
    if (b->missing)
        return;
    /* res->t_h_nextn keeps the last hidden state. */
    g->t[inpL].flags |= GGFIT_TF_OUTPUT;
    int32_t cur = gg_get_rows(g, inpL, b->inp_out_ids);
    cur = gb_norm(b, cur, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* llama_model_step35::graph_mtp: the first NextN block, a whole decoder
 * layer as the trunk's (unclamped), on the joined embedding and hidden
 * state over the iSWA cache; the output rows (h_nextn), then the head. */
static void build_step35_mtp(bctx *b)
{
    int il = (int)(b->hp->n_layer - b->hp->n_nextn);
    if (!b->p->swa) {
        b->missing = true;   /* create_memory asserts SWA layers */
        return;
    }
    int32_t emb, h;
    gb_mtp_embd(b, il, &emb, &h);
    gb_inputs_kv_iswa(b);
    int32_t cur = layer(b, gb_mtp_eh_proj(b, il, emb, h), il);
    if (b->missing)
        return;
    gb_mtp_head(b, cur, il, GB_MTP_ROWS_FIRST, -1);
}

/* The sliding-window pattern (one bool per block) is read before
 * nextn_predict_layers, so it covers the MTP blocks too. */
/* load_arch_hparams: the SwiGLU clamps, one per block (nextn_predict_layers
 * is read after them, so the MTP blocks count) or one for all. */
static const ggfit_arr_key arr_keys[] = {
    { "swiglu_clamp_exp", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, false },
    { "swiglu_clamp_shexp", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, false },
    { NULL },
};

/* The sliding-window pattern one value per block, MTP blocks included. */
const ggfit_arch ggfit__model_step35 = {
    .name = "step35",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", "attention.sliding_window", NULL },
    .arr_keys = arr_keys,
    .swa_key = GGFIT_SWA_KEY_LAYERS,
    .mtp = true,   /* load_mtp loads the NextN blocks */
    .mtp_kv_nextn = true,
    .build_mtp = build_step35_mtp,
    .mem = GGFIT_MEM_KV,
    .swa_nextn_pattern = true,
    .nextn_loaded = nextn_loaded,
    .rope_freqs_nextn = true,
    .build = build_step35,
};
