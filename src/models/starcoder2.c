/*
 * starcoder2.c - src/models/starcoder2.cpp: StarCoder 2, LayerNorm with
 * biases, Q/K/V (fused or separate) with RoPE, a GELU FFN with biases.
 */
#include "llama/graph.h"

/* llama_model_starcoder2::graph */
static void build_starcoder2(bctx *b)
{
    gb_build_gpt_like(b, GB_GPT_ROPE);
}

const ggfit_arch ggfit__model_starcoder2 = {
    .name = "starcoder2",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_starcoder2,
};
