/*
 * granite.c - src/models/granite.cpp (granite and granitemoe share
 * its graph): a llama with scales on the embeddings, the residual branches
 * and the logits, optional biases on the attention output and the FFN,
 * RoPE that "rope.scaling.finetuned" can turn off, and a dense FFN or
 * softmax-gated experts with an optional shared expert.
 */
#include <stdio.h>

#include "llama/graph.h"

/* build_inp_embd with hparams.f_embedding_scale: the selected token path
 * is scaled before it is named "embd". */
static int32_t inp_embd_scaled(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_tokens = b->p->n_tokens;
    int32_t tokens = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, n_tokens), "inp_tokens");
    int32_t embd = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, b->hp->n_embd, n_tokens),
                            "inp_embd");
    int32_t cur = gg_get_rows(g, gb_required(b, "token_embd.weight", 0), tokens);
    gg_expand(g, cur);               /* ggml_build_forward_select */
    gg_expand_no_compute(g, embd);
    cur = gg_scale(g, cur);          /* get_rows is contiguous: no cont */
    gb_cb(b, cur, "embd", -1);
    gg_expand(g, cur);
    return cur;
}

/* The experts (softmax gating, normalised weights) and the shared one. */
static int32_t ffn_moe(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_weight(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1,
        .exp_probs_b = -1,
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .gating = GB_GATING_SOFTMAX,
        .norm_w = true,
        .w_scale = (float)gb_key(b, "expert_weights_scale", 0),
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
    };
    int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe_out, "ffn_moe_out", il);
    if (gb_key(b, "expert_shared_feed_forward_length", 0) <= 0)
        return moe_out;
    int32_t shexp = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, shexp, "ffn_shexp", il);
    cur = gg_binary(g, GGFIT_OP_ADD, moe_out, shexp);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

/* llama_model_granite::graph; minicpm: MiniCPM's defaults (RoPE always,
 * scales of 12 on the embeddings and 1.4 / sqrt(n_layer) on the residual
 * branches unless the file says otherwise). */
static void build_granite_like(bctx *b, bool minicpm)
{
    int n_layer = (int)b->hp->n_layer;
    /* Granite Vision's deepstack adds projector streams: not modelled. */
    char key[96];
    snprintf(key, sizeof key, "%s.deepstack_mapping", b->hp->arch);
    if (ggfit_gguf_find_key(b->gguf, key) >= 0 ||
        b->hp->n_embd_head_k != b->hp->n_embd_head_v) {
        b->missing = true;
        return;
    }
    int32_t rf_leaf[GGFIT_MAX_BUFTS];
    for (int i = 0; i < GGFIT_MAX_BUFTS; i++)
        rf_leaf[i] = -1;
    bool rope = minicpm || gb_key(b, "rope.scaling.finetuned", 1) != 0;
    bool res_scale = gb_key(b, "residual_scale", minicpm ? 1.4 : 0) != 0;
    bool emb_scale = gb_key(b, "embedding_scale", minicpm ? 12 : 0) != 0;
    int32_t inpL = emb_scale ? inp_embd_scaled(b) : gb_inp_embd(b);
    /* Without RoPE llama.cpp builds no positions; the unused input never
     * joins the graph. */
    gb_inputs_kv(b);
    gb_granite o = { .rope = rope, .res_scale = res_scale, .rf_leaf = rf_leaf,
                     .ffn_moe = ffn_moe };
    for (int il = 0; il < n_layer; il++)
        inpL = gb_granite_layer(b, inpL, il, il == n_layer - 1, &o);
    gb_granite_output(b, inpL);
}

static void build_granite(bctx *b)
{
    build_granite_like(b, false);
}

/* llama_model_minicpm::graph is llama_model_granite::graph. */
static void build_minicpm(bctx *b)
{
    build_granite_like(b, true);
}

/* llama_model_granite::load_arch_hparams: the deepstack mapping, an int
 * array of at most 512 (get_arr), when the file has one. */
static const ggfit_arr_key arr_keys_granite[] = {
    { "deepstack_mapping", false, GGFIT_GGUF_INT32, GGFIT_ARR_ANY, false },
    { NULL },
};

const ggfit_arch ggfit__model_granite = {
    .name = "granite",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "logit_scale",
            NULL },
    .arr_keys = arr_keys_granite,
    .mem = GGFIT_MEM_KV,
    .build = build_granite,
};

/* granitemoe: the same graph, whose FFNs are experts. */
const ggfit_arch ggfit__model_granitemoe = {
    .name = "granitemoe",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "logit_scale",
            NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_granite,
};

/* minicpm: granite's graph under MiniCPM's defaults. */
const ggfit_arch ggfit__model_minicpm = {
    .name = "minicpm",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_minicpm,
};
