/*
 * cohere2moe.c - src/models/cohere2moe.cpp: Cohere2 MoE, Cohere2's
 * parallel block (one norm, LayerNorm unless the file gives an RMS
 * epsilon, feeding attention and FFN) on an iSWA cache (three SWA layers
 * in four after a dense one, RoPE on the SWA layers and the leading dense
 * blocks), leading dense FFNs then routed experts (sigmoid unless the file
 * says otherwise) averaged with the shared expert; the output rows are
 * picked after the final norm (embeddings_nextn_masked is off). The last
 * nextn_predict_layers blocks are MTP heads: without --spec-type mtp
 * llama.cpp skips all their tensors but the optional ones; they keep KV
 * cells (no layer filter) and are not in this graph.
 */
#include <string.h>

#include "llama/graph.h"

/* The tensors of an MTP block loaded without load_mtp: the optional ones
 * (a merged gate_up_exps, nextn.embed_tokens, shared_head_head and _norm). */
static bool nextn_loaded(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    static const char *const loaded[] = {
        "ffn_gate_up_exps.weight", "nextn.embed_tokens.weight",
        "nextn.shared_head_head.weight", "nextn.shared_head_norm.weight",
    };
    const char *rest = strchr(t->info->name + 4, '.');   /* past "blk.N" */
    if (!rest)
        return false;
    rest++;
    for (size_t i = 0; i < sizeof loaded / sizeof loaded[0]; i++)
        if (strcmp(rest, loaded[i]) == 0)
            return true;
    return false;
}

/* build_norm with LLM_NORM_RMS, or LLM_NORM without an RMS epsilon. */
static int32_t norm(bctx *b, int32_t cur, int32_t w, bool rms, int il)
{
    return rms ? gb_norm(b, cur, w, il) : gb_layer_norm(b, cur, w, -1, il);
}

static int32_t layer(bctx *b, int32_t inpL, int il, bool rms, uint32_t n_dense)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    bool rope = (b->p->layer_flags[il] & GB_LAYER_SWA) || (uint32_t)il < n_dense;
    int32_t cur = norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), rms, il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t ffn_inp = cur;
    int32_t q, k, v;
    gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
    if (rope) {
        int32_t rf = gb_rope_factors(b, il);
        q = gb_rope(b, q, rf, il);
        k = gb_rope(b, k, rf, il);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn_iswa(b, gb_required(b, "blk.%d.attn_output.weight", il),
                       gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    int32_t attn_out = cur;
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        cur = gb_ffn_gated(b, ffn_inp, il);
        gb_cb(b, cur, "ffn_out", il);
    } else {
        /* expert_gating_func, sigmoid when the file gives none; no bias */
        gb_moe o;
        gb_moe_layer(b, il, GB_GATING_SIGMOID, &o);
        o.exp_probs_b = -1;
        cur = gb_moe_ffn_ex(b, ffn_inp, &o, il);
        gb_cb(b, cur, "ffn_moe_out", il);
        int32_t up = gb_weight(b, "blk.%d.ffn_up_shexp.weight", il);
        if (up >= 0) {
            int32_t sh = gb_ffn_w(b, ffn_inp, up, gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                                  gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
            gb_cb(b, sh, "ffn_shexp", il);
            cur = gg_binary(g, GGFIT_OP_ADD, cur, sh);
            cur = gg_scale(g, cur);   /* 0.5 */
            gb_cb(b, cur, "ffn_out", il);
        }
    }
    cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, attn_out);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_cohere2moe::graph */
static void build_cohere2moe(bctx *b)
{
    gg_graph *g = b->g;
    /* llama.cpp always makes the two caches (swa_always: a window of 0
     * too); it refuses files without attention.sliding_window or
     * sliding_window_pattern ("key not found in model"), so no SWA here
     * means a pattern without sliding layers: no graph. */
    if (!b->p->swa) {
        b->missing = true;
        return;
    }
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    bool rms = gb_key(b, "attention.layer_norm_rms_epsilon", 0) != 0;
    uint32_t n_dense = (uint32_t)gb_key(b, "leading_dense_block_count", 0);
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv_iswa(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, rms, n_dense);
    int32_t cur = norm(b, inpL, gb_required(b, "output_norm.weight", 0), rms, -1);
    gb_cb(b, cur, "h_nextn", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;   /* res->t_h_nextn */
    cur = gg_get_rows(g, cur, b->inp_out_ids);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    if (gb_key(b, "logit_scale", 0) != 0)
        cur = gg_scale(g, cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* llama_model_cohere2moe::graph_mtp: the first NextN block as a trunk
 * block that always ropes (with rope_freqs), on the joined embedding and
 * hidden state (normed as the trunk norms); the head on the output rows,
 * then the logit scale. */
static void build_cohere2moe_mtp(bctx *b)
{
    gg_graph *g = b->g;
    if (!b->p->swa) {
        b->missing = true;
        return;
    }
    int il = (int)(b->hp->n_layer - b->hp->n_nextn);
    bool rms = gb_key(b, "attention.layer_norm_rms_epsilon", 0) != 0;
    int32_t emb, h;
    gb_mtp_embd(b, il, &emb, &h);
    gb_inputs_kv_iswa(b);
    int32_t hn = norm(b, h, gb_required(b, "blk.%d.nextn.hnorm.weight", il), rms, il);
    gb_cb(b, hn, "mtp_hnorm", il);
    int32_t en = norm(b, emb, gb_required(b, "blk.%d.nextn.enorm.weight", il), rms, il);
    gb_cb(b, en, "mtp_enorm", il);
    int32_t cur = gg_concat(g, en, hn, 0);
    gb_cb(b, cur, "mtp_concat", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.nextn.eh_proj.weight", il), cur);
    gb_cb(b, cur, "mtp_eh_proj", il);
    gb_required(b, "blk.%d.ffn_gate_inp.weight", il);   /* graph_mtp asserts it */
    cur = layer(b, cur, il, rms, UINT32_MAX);   /* every block below "dense": RoPE */
    if (b->missing)
        return;
    int32_t w = gb_weight(b, "blk.%d.nextn.shared_head_norm.weight", il);
    cur = norm(b, cur, w >= 0 ? w : gb_required(b, "output_norm.weight", 0), rms, -1);
    gb_cb(b, cur, "h_nextn", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_get_rows(g, cur, b->inp_out_ids);
    gb_cb(b, cur, "mtp_shared_head_norm", -1);
    w = gb_weight(b, "blk.%d.nextn.shared_head_head.weight", il);
    cur = gg_mul_mat(g, w >= 0 ? w : gb_output_weight(b), cur);
    if (gb_key(b, "logit_scale", 0) != 0)
        cur = gg_scale(g, cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_arch_hparams requires both: the window (get_key) and, when the
 * pattern is no period, a per-block array (get_key_or_arr). */
static const char *const required_keys[] = {
    "attention.sliding_window",
    "attention.sliding_window_pattern",
    "logit_scale",
    "leading_dense_block_count",
    "expert_feed_forward_length",
    NULL,
};

/* Three sliding-window layers in four after a dense one (the pattern as
 * the file gives it); the MTP blocks keep KV cells, never sliding. */

const ggfit_arch ggfit__model_cohere2moe = {
    .name = "cohere2moe",
    .mtp = true,   /* load_mtp loads the NextN blocks */
    .build_mtp = build_cohere2moe_mtp,
    .mem = GGFIT_MEM_KV,
    .required_keys = required_keys,
    .swa_period = 4,
    .swa_key = GGFIT_SWA_KEY_EITHER,
    .swa_key_main = true,   /* nextn_predict_layers is read first */
    .swa_dense_first = true,
    .swa_always = true,
    .nextn_kv = true,
    .nextn_loaded = nextn_loaded,
    .build = build_cohere2moe,
};
