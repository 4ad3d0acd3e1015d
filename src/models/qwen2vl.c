/*
 * qwen2vl.c - src/models/qwen2vl.cpp: Qwen2-VL's text model, Qwen2's
 * block (Q/K/V biases, SwiGLU FFN) with M-RoPE: four positions a token
 * (ggml_rope_multi allocates as ggml_rope_ext does). The output bias is
 * loaded but the graph does not add it.
 */
#include "llama/graph.h"

static int32_t layer(bctx *b, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
    if (wqkv >= 0)
        gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
    else
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    /* qwen2vl loads no attn_output.bias */
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = gb_ffn_gated(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_qwen2vl::graph */
static void build_qwen2vl(bctx *b)
{
    int n_layer = (int)b->hp->n_layer;
    if (b->hp->n_embd_head_k != b->hp->n_embd_head_v) {
        b->missing = true;   /* llama.cpp asserts they are equal */
        return;
    }
    b->n_pos_per_embd = 4;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il, il == n_layer - 1);
    gb_output(b, inpL);
}

/* llama_model_qwen2vl::load_arch_hparams reads no sliding window. */
static uint32_t window_none(const ggfit_arch *a, const ggfit_model *m)
{
    (void)a;
    (void)m;
    return 0;
}

/* load_arch_hparams reads the rope sections (get_key_or_arr, 4). */
static const ggfit_arr_key arr_keys[] = {
    GGFIT_ARR_ROPE_SECTIONS(true),
    { NULL },
};

const ggfit_arch ggfit__model_qwen2vl = {
    .name = "qwen2vl",
    .arr_keys = arr_keys,
    .mem = GGFIT_MEM_KV,
    .build = build_qwen2vl,
    .window = window_none,
};
