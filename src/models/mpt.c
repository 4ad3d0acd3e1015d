/*
 * mpt.c - src/models/mpt.cpp: MPT, ALiBi or learned positions,
 * LayerNorm (biases optional), fused QKV (clamped by clamp_kqv), optional
 * LayerNorms of Q and K, a GELU FFN.
 */
#include "llama/graph.h"

/* llama_model_mpt::graph */
static void build_mpt(bctx *b)
{
    gb_build_gpt_like(b, GB_GPT_CLAMP);
}

const ggfit_arch ggfit__model_mpt = {
    .name = "mpt",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_mpt,
};
