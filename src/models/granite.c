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

/* build_ffn, SiLU with a parallel gate and optional biases. */
static int32_t ffn_biased(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t up_b = gb_weight(b, "blk.%d.ffn_up.bias", il);
    int32_t gate_b = gb_weight(b, "blk.%d.ffn_gate.bias", il);
    int32_t down_b = gb_weight(b, "blk.%d.ffn_down.bias", il);
    int32_t tmp = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, tmp, "ffn_up", il);
    if (up_b >= 0) {
        tmp = gg_binary(g, GGFIT_OP_ADD, tmp, up_b);
        gb_cb(b, tmp, "ffn_up_b", il);
    }
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate.weight", il), cur);
    gb_cb(b, cur, "ffn_gate", il);
    if (gate_b >= 0) {
        cur = gg_binary(g, GGFIT_OP_ADD, cur, gate_b);
        gb_cb(b, cur, "ffn_gate_b", il);
    }
    cur = gg_glu_split(g, cur, tmp);
    gb_cb(b, cur, "ffn_swiglu", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
    if (down_b >= 0) {
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, down_b);
    }
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

static int32_t layer(bctx *b, int32_t inpL, int il, bool last, bool rope, bool res_scale,
                     int32_t *rf_leaf)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    /* build_attention_layer */
    int32_t q, k, v;
    gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    if (rope) {
        /* rope_freqs when loaded, else LongRoPE's long or short factors */
        int32_t rf = gb_rope_factors(b, il);
        if (rf < 0)
            rf = gb_rope_factors_ls(b, il, rf_leaf);
        q = gb_rope(b, q, rf, il);
        k = gb_rope(b, k, rf, il);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    gb_cb(b, cur, "attn_out", il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    /* build_layer_ffn */
    if (res_scale)
        cur = gg_scale(g, cur);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        cur = ffn_biased(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    } else {
        cur = ffn_moe(b, cur, il);
    }
    if (res_scale)
        cur = gg_scale(g, cur);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "ffn_out", il);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_granite::graph; minicpm: MiniCPM's defaults (RoPE always,
 * scales of 12 on the embeddings and 1.4 / sqrt(n_layer) on the residual
 * branches unless the file says otherwise). */
static void build_granite_like(bctx *b, bool minicpm)
{
    gg_graph *g = b->g;
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
    for (int il = 0; il < n_layer; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1, rope, res_scale, rf_leaf);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    cur = gg_scale(g, cur);   /* 1 / f_logit_scale */
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
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
