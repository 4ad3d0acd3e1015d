/*
 * deepseek2ocr.c - src/models/deepseek2ocr.cpp: the text decoder of
 * DeepSeek-OCR, which runs deepseek2's graph on its is_ocr path: no MLA,
 * separate Q/K/V of n_head full heads each (NeoX RoPE over the whole
 * head), cached as an ordinary K and V; then leading_dense_block_count
 * dense blocks and experts (expert_gating_func, softmax by default,
 * optional exp_probs_b, gate and up optionally fused) plus shared experts.
 */
#include "llama/graph.h"

static int32_t ocr_moe(bctx *b, int32_t cur, int il)
{
    gb_moe o;
    gb_moe_layer(b, il, GB_GATING_SOFTMAX, &o);
    o.n_groups = o.n_group_used = 0;   /* the expert group keys are not read */
    return gb_moe_shared(b, cur, &o, il);
}

/* llama_model_deepseek2::graph with is_ocr */
static void build_deepseek2ocr(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int64_t nt = b->p->n_tokens;
    uint32_t n_dense = (uint32_t)gb_key(b, "leading_dense_block_count", 0);
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int64_t n_head = li->n_head;
        int64_t hd = n_head ? (int64_t)hp->n_embd / n_head : 0;
        if (hd != (int64_t)hp->n_embd_head_k || hd != (int64_t)hp->n_embd_head_v) {
            b->missing = true;   /* llama.cpp asserts */
            return;
        }
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
        int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
        int32_t v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
        gb_cb(b, q, "q", il);
        gb_cb(b, k, "k", il);
        gb_cb(b, v, "v", il);
        q = gb_reshape_3d(b, q, hd, n_head, nt);
        k = gb_reshape_3d(b, k, hd, n_head, nt);
        v = gb_reshape_3d(b, v, hd, n_head, nt);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "q_pe", il);
        gb_cb(b, k, "k_pe", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
        gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        if ((uint32_t)il < n_dense) {
            cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                           gb_required(b, "blk.%d.ffn_gate.weight", il),
                           gb_required(b, "blk.%d.ffn_down.weight", il), il);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            cur = ocr_moe(b, cur, il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_deepseek2ocr = {
    .name = "deepseek2-ocr",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", "expert_shared_count", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_deepseek2ocr,
};
