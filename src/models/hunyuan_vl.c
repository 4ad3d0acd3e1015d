/*
 * hunyuan_vl.c - src/models/hunyuan-vl.cpp: HunyuanOCR / Hunyuan-VL's text
 * model, Llama's block with RMS norms of K then Q after RoPE, which is
 * M-RoPE (four positions a token) when the file gives rope sections.
 */
#include <stdio.h>

#include "llama/graph.h"

/* llama_hparams::use_mrope: the first two rope.dimension_sections > 0. */
static bool use_mrope(bctx *b)
{
    char key[160];
    snprintf(key, sizeof key, "%s.rope.dimension_sections", b->hp->arch);
    int64_t i = ggfit_gguf_find_key(b->gguf, key);
    ggfit_value v;
    if (i < 0 || !ggfit_gguf_value(b->gguf, (uint64_t)i, &v))
        return false;
    if (v.type != GGFIT_GGUF_ARRAY)
        return gb_key(b, "rope.dimension_sections", 0) > 0;
    ggfit_value_iter it = { 0 };
    ggfit_value e;
    uint64_t s[2] = { 0, 0 };
    for (int n = 0; n < 2 && ggfit_value_next(&v, &it, &e); n++)
        s[n] = e.type == GGFIT_GGUF_INT32 || e.type == GGFIT_GGUF_INT64 ? (uint64_t)(e.i > 0)
                                                                        : e.u;
    return s[0] > 0 && s[1] > 0;
}

/* llama_model_hunyuan_vl::graph */
static void build_hunyuan_vl(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_layer = b->hp->n_layer;
    if (use_mrope(b))
        b->n_pos_per_embd = 4;   /* ggml_rope_multi allocates as ggml_rope_ext */
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gb_rope(b, q, -1, il);
        k = gb_rope(b, k, -1, il);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k, "Kcur_norm", il);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "Qcur_norm", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                      gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
        gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

/* load_arch_hparams reads the rope sections (get_key_or_arr, 4), when the file has them. */
static const ggfit_arr_key arr_keys[] = {
    GGFIT_ARR_ROPE_SECTIONS(false),
    { NULL },
};

const ggfit_arch ggfit__model_hunyuan_vl = {
    .name = "hunyuan_vl",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .arr_keys = arr_keys,
    .mem = GGFIT_MEM_KV,
    .one_expert_dense = true,
    .build = build_hunyuan_vl,
};
