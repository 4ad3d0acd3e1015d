/*
 * olmoe.c - src/models/olmoe.cpp: OLMoE, pre-norm attention with RMS
 * norms on the whole Q and K rows (before the split into heads) and RoPE,
 * then softmax-routed SwiGLU experts, no shared expert.
 */
#include "llama/graph.h"

static int32_t olmoe_attn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = b->hp->n_embd_head_k, nt = b->p->n_tokens;
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, q, "Qcur", il);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    gb_cb(b, k, "Kcur", il);
    int32_t v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    gb_cb(b, v, "Vcur", il);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    gb_cb(b, q, "Qcur_normed", il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    gb_cb(b, k, "Kcur_normed", il);
    q = gb_reshape_3d(b, q, hd, li->n_head, nt);
    k = gb_reshape_3d(b, k, hd, li->n_head_kv, nt);
    v = gb_reshape_3d(b, v, hd, li->n_head_kv, nt);
    q = gg_rope(g, q, b->inp_pos, -1);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

/* llama_model_olmoe::graph */
static void build_olmoe(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    if (b->hp->n_embd_head_k != b->hp->n_embd_head_v || b->hp->n_expert == 0) {
        b->missing = true;   /* llama.cpp asserts or refuses these */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        cur = olmoe_attn(b, cur, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        gb_moe o;
        gb_moe_layer(b, il, GB_GATING_SOFTMAX, &o);
        o.gating = GB_GATING_SOFTMAX;   /* fixed, whatever the file says */
        o.norm_w = false;
        o.exp_probs_b = -1;
        o.w_scale = 0;   /* olmoe reads no expert_weights_scale */
        cur = gb_moe_ffn_ex(b, cur, &o, il);
        gb_cb(b, cur, "ffn_moe_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_olmoe = {
    .name = "olmoe",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_olmoe,
};
