/*
 * mamba.c - src/models/mamba.cpp: the pure recurrent graph of the mamba
 * and mamba2 architectures, every layer a Mamba1 or Mamba2 mixer
 * (graph_mamba.c) with a residual.
 */
#include "llama/graph.h"

/* llama_model_mamba::graph, which mamba2 shares: every layer a mixer on
 * recurrent memory only (no positions, no KV cache). */
static void build(bctx *b, bool mamba2)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_rs(b);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, b->p->n_outputs), NULL);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        cur = mamba2 ? gb_mamba2_layer(b, cur, il) : gb_mamba_layer(b, cur, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpL);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

/* llama_model_mamba::graph with the Mamba1 mixer. */
static void build_mamba(bctx *b)
{
    build(b, false);
}

/* llama_model_mamba::graph with the Mamba2 mixer, as mamba2 builds it. */
static void build_mamba2(bctx *b)
{
    build(b, true);
}

/* Every layer holds a recurrent state, none a KV cache. */
const ggfit_arch ggfit__model_mamba = {
    .name = "mamba",
    .required_keys = (const char *const[]){ "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size",
            "ssm.time_step_rank", "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_RECURRENT,
    .rec = GGFIT_REC_ALL,
    .build = build_mamba,
};

const ggfit_arch ggfit__model_mamba2 = {
    .name = "mamba2",
    .required_keys = (const char *const[]){ "ssm.conv_kernel", "ssm.inner_size", "ssm.state_size",
            "ssm.time_step_rank", "ssm.group_count", "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_RECURRENT,
    .rec = GGFIT_REC_ALL,
    .build = build_mamba2,
};
