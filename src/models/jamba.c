/*
 * jamba.c - src/models/jamba.cpp: Jamba, Mamba1 layers (the layers
 * without KV heads) and attention layers without RoPE, each followed by a
 * dense or MoE SwiGLU feed-forward, on hybrid memory.
 */
#include "llama/graph.h"

/* llama_model_jamba::graph */
static void build_jamba(bctx *b)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_rs(b);
    gb_inputs_kv(b);   /* positions are made but no layer reads them */
    for (int il = 0; il < n_layer && !b->missing; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        if (b->p->layer_flags[il] & GB_LAYER_STATE) {
            cur = gb_mamba_layer(b, cur, il);
        } else {   /* attention without RoPE */
            int32_t q, k, v;
            gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
            cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1,
                          il);
        }
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpL);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, inpL, cur);
        gb_cb(b, cur, "ffn_inp", il);   /* jamba.cpp names cur, not ffn_inp */
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
            cur = gb_ffn(b, cur, il);
            gb_cb(b, cur, "ffn_out", il);
        } else {   /* softmax gating, unnormalised weights, no scale */
            cur = gb_moe_ffn(b, cur, il, false);
            gb_cb(b, cur, "ffn_moe_out", il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, ffn_inp, cur);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

/* The Mamba layers are those without KV heads. */
const ggfit_arch ggfit__model_jamba = {
    .name = "jamba",
    .required_keys = (const char *const[]){ "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size",
            "ssm.time_step_rank", "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
    .build = build_jamba,
};
