/*
 * glm4.c - src/models/glm4.cpp: dense GLM-4 (9B, 32B, 0414). Q/K/V
 * (separate with biases, or fused), partial RoPE (or M-RoPE: the same
 * shapes), norms after the attention and after the FFN as well as before,
 * and a fused gate_up FFN. The last nextn_predict_layers blocks (GLM-OCR)
 * are skipped as in GLM-4.5: weights and KV cells, but no graph.
 */
#include "llama/graph.h"

static int32_t glm4_layer(bctx *b, int32_t inpL, int il, bool last)
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
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_attention_norm.weight", il), il);
    gb_cb(b, cur, "post_attn_norm", il);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    cur = gb_ffn_gate_up(b, cur, il);
    gb_cb(b, cur, "ffn_out", il);
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.post_ffw_norm.weight", il), il);
    gb_cb(b, cur, "post_mlp_norm", il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_glm4::graph */
static void build_glm4(bctx *b)
{
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    /* llama.cpp asserts n_layer_nextn < n_layer and equal head sizes. */
    if (n_layer < 1 || b->hp->n_embd_head_k != b->hp->n_embd_head_v) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++)
        inpL = glm4_layer(b, inpL, il, il == n_layer - 1);
    gb_output(b, inpL);
}

/* The NextN blocks are left out of the graph but keep their KV cells. */
/* load_arch_hparams reads the rope sections (get_key_or_arr, 4), when the file has them. */
static const ggfit_arr_key arr_keys[] = {
    GGFIT_ARR_ROPE_SECTIONS(false),
    { NULL },
};

const ggfit_arch ggfit__model_glm4 = {
    .name = "glm4",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .arr_keys = arr_keys,
    .mem = GGFIT_MEM_KV,
    .nextn_kv = true,
    .build = build_glm4,
};
