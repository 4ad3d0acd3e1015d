/*
 * gpt2.c - src/models/gpt2.cpp: GPT-2, learned positions, LayerNorm,
 * fused QKV with biases and no RoPE, a GELU FFN with biases.
 */
#include "llama/graph.h"

/* llama_model_gpt2::graph */
static void build_gpt2(bctx *b)
{
    gb_build_gpt_like(b, GB_GPT_POS);
}

const ggfit_arch ggfit__model_gpt2 = {
    .name = "gpt2",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_gpt2,
};
