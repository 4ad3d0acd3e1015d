/*
 * smallthinker.c - src/models/smallthinker.cpp: SmallThinker, the router
 * logits taken from the block's input before its norm, Llama's attention
 * (on an iSWA cache of 4096-token windows when the file gives a window,
 * three SWA layers in four after a dense one, the dense ones without
 * RoPE), then ReGLU experts gated as the file says.
 */
#include "llama/graph.h"

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    /* hparams.n_no_rope_layer_step: n_layer without SWA, else 4 */
    bool use_rope = !b->p->swa || il % 4 != 0;
    int32_t inpSA = inpL;
    int32_t probs = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate_inp.weight", il), inpL);
    gb_cb(b, probs, "ffn_moe_logits", il);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
    if (use_rope) {
        q = gb_rope(b, q, -1, il);
        k = gb_rope(b, k, -1, il);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    int32_t wo = gb_required(b, "blk.%d.attn_output.weight", il);
    int32_t wo_b = gb_weight(b, "blk.%d.attn_output.bias", il);
    cur = b->p->swa ? gb_attn_iswa(b, wo, wo_b, q, k, v, -1, il)
                    : gb_attn(b, wo, wo_b, q, k, v, -1, il);
    if (last) {
        gb_out_rows(b, &cur, &inpSA);
        probs = gg_get_rows(g, probs, b->inp_out_ids);
    }
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    /* build_moe_ffn on the given logits; LLM_FFN_RELU with gate experts is
     * ReGLU, the same op as SwiGLU. */
    gb_moe o = {
        .gate_inp = -1,
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1, .exp_probs_b = -1,
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .gating = (int)gb_key(b, "expert_gating_func", 0),
        .norm_w = true,
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
        .has_logits_in = true,
        .logits_in = probs,
    };
    /* LLAMA_EXPERT_GATING_FUNC_TYPE_NONE aborts; SQRT_SOFTPLUS is not
     * modelled. */
    if (o.gating < GB_GATING_SOFTMAX || o.gating > GB_GATING_SOFTMAX_WEIGHT) {
        b->missing = true;
        return cur;
    }
    cur = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_smallthinker::graph<iswa> */
static void build_smallthinker(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    if (b->p->swa)
        gb_inputs_kv_iswa(b);
    else
        gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    gb_output(b, inpL);
}

/* load_arch_hparams: any sliding window in the file becomes 4096. */
static uint32_t window_smallthinker(const ggfit_arch *a, const ggfit_model *m)
{
    (void)a;
    return ggfit_model_hparams(m)->n_swa > 0 ? 4096 : 0;
}

const ggfit_arch ggfit__model_smallthinker = {
    .name = "smallthinker",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .swa_period = 4,
    .swa_dense_first = true,
    .swa_needs_window = true,
    .build = build_smallthinker,
    .window = window_smallthinker,
};
