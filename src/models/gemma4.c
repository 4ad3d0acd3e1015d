/*
 * gemma4.c - src/models/gemma4.cpp: Gemma 4. iSWA with a head size of its
 * own for the sliding-window layers, which the file marks one by one;
 * Q/K norms and a weightless V norm; the full-attention layers rope with
 * rope_freqs (one copy per buffer type among those layers only); the last
 * attention.shared_kv_layers layers attend over an earlier layer's cache;
 * optional per-layer embeddings (as Gemma 3n's, without AltUp), an
 * optional MoE beside the dense GELU FFN, an optional output scale per
 * layer and final logit soft-capping.
 */
#include <stdio.h>
#include <string.h>

#include "llama/graph.h"

/* "<arch>.<suffix>" of model m as an unsigned integer, 0 when absent. */
static uint32_t model_u32(const ggfit_model *m, const char *suffix)
{
    const ggfit_gguf *g = ggfit_model_gguf(m);
    char key[160];
    snprintf(key, sizeof key, "%s.%s", ggfit_model_hparams(m)->arch, suffix);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v))
        return 0;
    switch (v.type) {
    case GGFIT_GGUF_UINT8: case GGFIT_GGUF_UINT16: case GGFIT_GGUF_UINT32: case GGFIT_GGUF_UINT64:
        return v.u > UINT32_MAX ? UINT32_MAX : (uint32_t)v.u;
    case GGFIT_GGUF_INT8: case GGFIT_GGUF_INT16: case GGFIT_GGUF_INT32: case GGFIT_GGUF_INT64:
        return v.i < 0 ? 0 : v.i > UINT32_MAX ? UINT32_MAX : (uint32_t)v.i;
    default:
        return 0;
    }
}

/* llama_hparams::n_layer_kv_from_start: n_layer less
 * attention.shared_kv_layers; 0 (no sharing rule) when they are all shared,
 * which llama.cpp refuses. */
static uint32_t kv_from_gemma4(const ggfit_model *m)
{
    uint32_t n_layer = ggfit_model_hparams(m)->n_layer;
    uint32_t shared = model_u32(m, "attention.shared_kv_layers");
    return shared < n_layer ? n_layer - shared : 0;
}

/* load_tensors creates rope_freqs for the full-attention layers only. */
static bool rope_freqs_layer_gemma4(const ggfit_model *m, uint32_t il)
{
    return !ggfit__model_swa_layer(m, il, ggfit_model_hparams(m)->n_layer);
}

/* Whether layer il is a sliding-window one (hparams.is_swa). */
static bool is_swa(const bctx *b, int il)
{
    return (b->p->layer_flags[il] & GB_LAYER_SWA) != 0;
}

/* hparams.n_embd_head_k(il): the SWA layers have their own. */
static int64_t head_dim(const bctx *b, int il)
{
    return is_swa(b, il) ? b->hp->n_embd_head_k_swa : b->hp->n_embd_head_k;
}

/* Slice idx of the last dimension of a 3-d tensor, as a 2-d view
 * (ggml_view_2d_slice). */
static int32_t slice(bctx *b, int32_t x, int64_t idx)
{
    const gg_tensor *t = &b->g->t[x];
    uint64_t row = ggfit_row_bytes(t->type, (uint64_t)t->ne[0]);
    return gb_view_2d(b, x, t->ne[0], t->ne[1], row, (uint64_t)idx * row * (uint64_t)t->ne[1]);
}

/* build_inp_per_layer: the token's per-layer embeddings, n_embd_per_layer
 * by n_layer by n_tokens. */
static int32_t inp_per_layer(bctx *b, int64_t n_pl)
{
    gg_graph *g = b->g;
    int64_t n_tokens = b->p->n_tokens;
    int32_t tokens = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, n_tokens), NULL);
    int32_t cur = gg_get_rows(g, gb_required(b, "per_layer_token_embd.weight", 0), tokens);
    cur = gb_reshape_3d(b, cur, n_pl, b->hp->n_layer, n_tokens);
    cur = gg_scale(g, cur);
    gb_cb(b, cur, "inp_per_layer_selected", -1);
    return cur;
}

/* project_per_layer_inputs: n_embd_per_layer by n_tokens by n_layer. */
static int32_t project_per_layer(bctx *b, int32_t inpL, int32_t per_layer, int64_t n_pl)
{
    gg_graph *g = b->g;
    int32_t cur = gg_mul_mat(g, gb_required(b, "per_layer_model_proj.weight", 0), inpL);
    cur = gg_scale(g, cur);
    cur = gb_reshape_3d(b, cur, n_pl, b->hp->n_layer, b->p->n_tokens);
    cur = gb_norm(b, cur, gb_required(b, "per_layer_proj_norm.weight", 0), -1);
    gb_cb(b, cur, "per_layer_proj", -1);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, per_layer);
    cur = gg_scale(g, cur);
    gb_cb(b, cur, "inp_per_layer", -1);
    return gb_cont(b, gg_permute(g, cur, 0, 2, 1, 3));
}

/* build_ffn with GELU and a parallel gate: up first, then the gate. */
static int32_t ffn_geglu(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t up = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, up, "ffn_up", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate.weight", il), cur);
    gb_cb(b, cur, "ffn_gate", il);
    cur = gg_glu_split(g, cur, up);
    gb_cb(b, cur, "ffn_geglu", il);
    return gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
}

/* Self-attention: Q always (mirroring Gemma4Attention), K and V (V is K
 * when there is no attn_v) on the layers with a cache of their own, else
 * the cache of the last earlier layer of the same kind. */
static int32_t attention(bctx *b, int32_t cur, int il, uint32_t from)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = head_dim(b, il), n_tokens = b->p->n_tokens;
    int32_t rf = -1;

    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, q, "Qcur", il);
    q = gb_reshape_3d(b, q, hd, li->n_head, n_tokens);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    if (!is_swa(b, il))   /* full attention: proportional rope, rope_freqs */
        rf = gb_rope_factors(b, il);
    q = gb_rope(b, q, rf, il);
    gb_cb(b, q, "Qcur_pos", il);

    if ((uint32_t)il >= from) {
        /* llama.cpp's reuse callback: layer from - 2 (SWA) or from - 1 */
        int il_kv = (int)from - (is_swa(b, il) ? 2 : 1);
        return gb_attn_iswa_shared(b, gb_required(b, "blk.%d.attn_output.weight", il), q, il,
                                   il_kv);
    }
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    gb_cb(b, k, "Kcur", il);
    int32_t wv = gb_weight(b, "blk.%d.attn_v.weight", il);
    int32_t v = wv >= 0 ? gg_mul_mat(g, wv, cur) : k;
    gb_cb(b, v, "Vcur", il);
    k = gb_reshape_3d(b, k, hd, li->n_head_kv, n_tokens);
    v = gb_reshape_3d(b, v, hd, li->n_head_kv, n_tokens);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    v = gb_norm(b, v, -1, il);
    gb_cb(b, k, "Kcur_normed", il);
    gb_cb(b, v, "Vcur_normed", il);
    k = gb_rope(b, k, rf, il);
    gb_cb(b, k, "Kcur_pos", il);
    return gb_attn_iswa(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

/* The MoE layer: the dense FFN as a shared expert beside the experts, whose
 * router reads the unweighted norm of attn_out. */
static int32_t ffn_moe(bctx *b, int32_t attn_out, int32_t gate_inp, int il)
{
    gg_graph *g = b->g;
    int32_t mlp = gb_norm(b, attn_out, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, mlp, "ffn_norm_1", il);
    mlp = ffn_geglu(b, mlp, il);
    mlp = gb_norm(b, mlp, gb_required(b, "blk.%d.post_ffw_norm_1.weight", il), il);
    gb_cb(b, mlp, "ffn_mlp", il);

    int32_t moe = gb_norm(b, attn_out, gb_required(b, "blk.%d.pre_ffw_norm_2.weight", il), il);
    gb_cb(b, moe, "ffn_norm_2", il);
    int32_t tmp = gg_rms_norm(g, attn_out);
    tmp = gg_scale(g, tmp);
    tmp = gg_binary(g, GGFIT_OP_MUL, tmp, gb_required(b, "blk.%d.ffn_gate_inp.scale", il));
    int32_t logits = gg_mul_mat(g, gate_inp, tmp);
    gb_cb(b, logits, "ffn_moe_logits", il);

    gb_moe o = {
        .gate_inp = -1,
        .gate_up_exps = gb_weight(b, "blk.%d.ffn_gate_up_exps.weight", il),
        .up_exps = -1, .gate_exps = -1,
        .exp_probs_b = -1, .gate_inp_b = -1,
        .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .act = GB_MOE_GELU,
        .gating = GB_GATING_SOFTMAX,
        .norm_w = true,
        .w_scale = 1.0f,
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
        .has_logits_in = true,
        .logits_in = logits,
    };
    if (o.gate_up_exps < 0) {
        o.gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il);
        o.up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il);
    }
    o.down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il);
    o.down_exps_s = gb_weight(b, "blk.%d.ffn_down_exps.scale", il);
    o.has_down_exps_s = o.down_exps_s >= 0;
    if (b->missing)
        return moe;
    moe = gb_moe_ffn_ex(b, moe, &o, il);
    moe = gb_norm(b, moe, gb_required(b, "blk.%d.post_ffw_norm_2.weight", il), il);
    gb_cb(b, moe, "ffn_moe", il);
    int32_t cur = gg_binary(g, GGFIT_OP_ADD, mlp, moe);
    gb_cb(b, cur, "ffn_moe_combined", il);
    return cur;
}

/* One block. */
static int32_t layer(bctx *b, int32_t inpL, int32_t per_layer, int il, uint32_t from)
{
    gg_graph *g = b->g;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = attention(b, cur, il, from);
    if (b->missing)
        return cur;
    /* embeddings_nextn_masked is off: all rows stay until the final norm. */
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
    gb_cb(b, cur, "attn_post_norm", il);
    int32_t attn_out = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
    gb_cb(b, attn_out, "attn_out", il);

    int32_t gate_inp = gb_weight(b, "blk.%d.ffn_gate_inp.weight", il);
    if (gate_inp >= 0) {
        cur = ffn_moe(b, attn_out, gate_inp, il);
        if (b->missing)
            return cur;
    } else {
        cur = gb_norm(b, attn_out, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = ffn_geglu(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    }
    /* llama.cpp norms the FFN output as layer -1: its "norm" is not pinned. */
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm.weight", il), -1);
    gb_cb(b, cur, "ffn_post_norm", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, attn_out);

    if (per_layer >= 0) {
        int32_t pe_in = cur;
        gb_cb(b, cur, "pe_in", il);
        cur = gg_mul_mat(g, gb_required(b, "blk.%d.inp_gate.weight", il), cur);
        cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* gelu */
        cur = gg_binary(g, GGFIT_OP_MUL, cur, slice(b, per_layer, il));
        cur = gg_mul_mat(g, gb_required(b, "blk.%d.proj.weight", il), cur);
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_norm.weight", il), il);
        gb_cb(b, cur, "per_layer_embd_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, pe_in, cur);
    }
    int32_t scale = gb_weight(b, "blk.%d.layer_output_scale.weight", il);
    if (scale >= 0) {
        cur = gg_binary(g, GGFIT_OP_MUL, cur, scale);
        gb_cb(b, cur, "out_scaled", il);
    }
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_gemma4::graph, with embeddings_nextn_masked off: the output
 * rows are picked after the final norm, not in the last layer. */
static void build_gemma4(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    uint32_t from = kv_from_gemma4(b->p->m);
    /* llama.cpp always builds gemma4 on iSWA caches, and asserts that two
     * layers at least hold their own. */
    if (!b->p->swa || from < 2) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    inpL = gg_scale(g, inpL);   /* by sqrt(n_embd) */
    gb_cb(b, inpL, "inp_scaled", -1);
    gb_inputs_kv_iswa(b);
    int32_t per_layer = -1;
    int64_t n_pl = model_u32(b->p->m, "embedding_length_per_layer_input");
    if (n_pl > 0 && ggfit_gguf_find_tensor(b->gguf, "per_layer_token_embd.weight") >= 0) {
        per_layer = inp_per_layer(b, n_pl);
        gg_expand(g, per_layer);
        per_layer = project_per_layer(b, inpL, per_layer, n_pl);
    }
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, per_layer, il, from);
    if (b->missing)
        return;

    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "h_nextn", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_get_rows(g, cur, b->inp_out_ids);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    if (gb_key(b, "final_logit_softcapping", 30.0) != 0) {   /* llama_hparams' default */
        cur = gg_scale(g, cur);
        cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* tanh */
        cur = gg_scale(g, cur);
    }
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* llama_model_gemma4::load_tensors: the per-layer projection and its norm
 * are repeating tensors outside the blocks, created for block 0. */
static int64_t tensor_layer_gemma4(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    const char *n = t->info->name;
    if (!strncmp(n, "per_layer_model_proj.", 21) || !strncmp(n, "per_layer_proj_norm.", 20))
        return 0;
    return -2;
}

/* The sliding-window layers come from the file's per-layer pattern; the
 * tied output's copy of token_embd is made before token_embd itself. */
const ggfit_arch ggfit__model_gemma4 = {
    .name = "gemma4",
    .required_keys = (const char *const[]){ "attention.sliding_window",
            "attention.layer_norm_rms_epsilon", "embedding_length_per_layer_input",
            "attention.key_length_swa", "attention.value_length_swa", NULL },
    .swa_key = GGFIT_SWA_KEY_LAYERS,   /* one value per block, required */
    .mem = GGFIT_MEM_KV,
    .tied_output_copied = true,
    .kv_from = kv_from_gemma4,
    .rope_freqs_layer = rope_freqs_layer_gemma4,
    .build = build_gemma4,
    .tensor_layer = tensor_layer_gemma4,
};
