/*
 * granite_swa.c - src/models/granite-swa.cpp: Granite with interleaved
 * sliding-window attention (GraniteSWA and GraniteMoeSWA share the
 * architecture name): Granite's scales on the embeddings, the residual
 * branches and the logits, an iSWA cache whose per-layer pattern the file
 * gives, RoPE on the layers attention.rope_pattern marks (NoPE elsewhere),
 * attention sinks on every layer, and a dense FFN or softmax-gated experts
 * (gate and up fused) with an optional shared expert (SwiGLU over one
 * fused product).
 */
#include <stdio.h>

#include "llama/graph.h"
#include "versions/version.h"

/* hparams.has_rope(il): attention.rope_pattern's entry (get_arr into an
 * array filled with 1, so layers past its end keep RoPE), 1 without it. */
static bool has_rope(bctx *b, int il)
{
    char key[160];
    snprintf(key, sizeof key, "%s.attention.rope_pattern", b->hp->arch);
    int64_t i = ggfit_gguf_find_key(b->gguf, key);
    ggfit_value v, e;
    if (i < 0 || !ggfit_gguf_value(b->gguf, (uint64_t)i, &v) || v.type != GGFIT_GGUF_ARRAY)
        return true;
    ggfit_value_iter it = { 0 };
    for (int j = 0; ggfit_value_next(&v, &it, &e); j++)
        if (j == il)
            return (e.type == GGFIT_GGUF_INT32 ? e.i : (int64_t)e.u) != 0;
    return true;
}

/* build_layer_ffn's experts: softmax gating, normalised weights, no scale
 * (nothing reads expert_weights_scale), gate and up fused or apart. */
static int32_t ffn_moe(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .gate_up_exps = gb_weight(b, "blk.%d.ffn_gate_up_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .up_exps = -1, .gate_exps = -1,
        .exp_probs_b = -1,
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .gating = GB_GATING_SOFTMAX,
        .norm_w = true,
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
    };
    if (o.gate_up_exps < 0) {
        o.up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il);
        o.gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il);
    }
    int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe_out, "ffn_moe_out", il);
    if (b->hp->n_ff_shexp == 0)
        return moe_out;
    int32_t shexp = gb_build_ffn(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il), -1,
                                 -1, -1, gb_required(b, "blk.%d.ffn_down_shexp.weight", il), -1,
                                 GB_FFN_SWIGLU, false, il);
    gb_cb(b, shexp, "ffn_shexp", il);
    cur = gg_binary(g, GGFIT_OP_ADD, moe_out, shexp);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

/* llama_model_granite_swa::graph */
static void build_granite_swa(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    /* Granite Vision's deepstack adds projector streams: not modelled; an
     * iSWA graph needs the iSWA cache, which llama.cpp always makes. */
    char key[96];
    snprintf(key, sizeof key, "%s.deepstack_mapping", b->hp->arch);
    if (ggfit_gguf_find_key(b->gguf, key) >= 0 || !b->p->swa ||
        b->hp->n_embd_head_k != b->hp->n_embd_head_v) {
        b->missing = true;
        return;
    }
    int32_t rf_leaf[GGFIT_MAX_BUFTS];
    for (int i = 0; i < GGFIT_MAX_BUFTS; i++)
        rf_leaf[i] = -1;
    bool res_scale = gb_key(b, "residual_scale", 0) != 0;
    int32_t inpL = gb_key(b, "embedding_scale", 0) != 0 ? gb_inp_embd_scaled(b) : gb_inp_embd(b);
    gb_inputs_kv_iswa(b);
    gb_granite o = { .res_scale = res_scale, .swa = true, .rf_leaf = rf_leaf,
                     .ffn_moe = ffn_moe };
    for (int il = 0; il < n_layer && !b->missing; il++) {
        o.rope = has_rope(b, il);
        inpL = gb_granite_layer(b, inpL, il, il == n_layer - 1, &o);
    }
    gb_granite_output(b, inpL);
}

/* load_arch_hparams: get_arr of the sliding-window pattern (required, an
 * array), of Granite Vision's deepstack mapping and of the RoPE pattern
 * (neither required); the window is required too. */
static const ggfit_arr_key arr_keys_granite_swa[] = {
    { "attention.sliding_window_pattern", false, GGFIT_GGUF_UINT32, GGFIT_ARR_ANY, true },
    { "deepstack_mapping", false, GGFIT_GGUF_INT32, GGFIT_ARR_ANY, false },
    { "attention.rope_pattern", false, GGFIT_GGUF_UINT32, GGFIT_ARR_ANY, false },
    { NULL },
};

/* The pattern per layer, as get_arr reads it (an array of any length:
 * the layers past it are not sliding-window ones); swa_type is always
 * STANDARD, so the iSWA cache whatever the window. */
const ggfit_arch ggfit__model_granite_swa = {
    .name = "granite_swa",
    .added = LLAMA_CHANGE_GRANITE_SWA,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "logit_scale",
            "attention.sliding_window", NULL },
    .arr_keys = arr_keys_granite_swa,
    .mem = GGFIT_MEM_KV,
    .swa_key = GGFIT_SWA_KEY_ARRAY,
    .swa_always = true,
    .build = build_granite_swa,
};
