/*
 * paddleocr.c - src/models/paddleocr.cpp: PaddleOCR-VL's text model, on
 * ERNIE 4.5's tensors (fused or separate Q/K/V, optional biases, an
 * optional attn_output.bias) with Qwen2-VL's graph: M-RoPE (four
 * positions a token; ggml_rope_multi allocates as ggml_rope_ext does) and
 * a SwiGLU FFN.
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
    gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                   gb_required(b, "blk.%d.ffn_gate.weight", il),
                   gb_required(b, "blk.%d.ffn_down.weight", il), il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_paddleocr::graph */
static void build_paddleocr(bctx *b)
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
    if (b->missing)
        return;
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_paddleocr = {
    .name = "paddleocr",
    .mem = GGFIT_MEM_KV,
    .build = build_paddleocr,
};
