/*
 * starcoder.c - src/models/starcoder.cpp: StarCoder, the graph of GPT-2
 * (learned positions, fused QKV, GELU FFN, biases everywhere).
 */
#include "llama/graph.h"

/* llama_model_starcoder::graph */
static void build_starcoder(bctx *b)
{
    gb_build_gpt_like(b, GB_GPT_POS);
}

const ggfit_arch ggfit__model_starcoder = {
    .name = "starcoder",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_starcoder,
};
