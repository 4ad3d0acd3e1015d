/*
 * gptneox.c - src/models/gptneox.cpp: GPT-NeoX (Pythia), LayerNorm, fused
 * QKV with NeoX RoPE, a GELU FFN, and use_parallel_residual: attention and
 * FFN on the same input, both added to it.
 */
#include "llama/graph.h"

/* llama_model_gptneox::graph */
static void build_gptneox(bctx *b)
{
    bool par = gb_key(b, "use_parallel_residual", 0) != 0;
    gb_build_gpt_like(b, GB_GPT_ROPE | (par ? GB_GPT_PAR : 0));
}

const ggfit_arch ggfit__model_gptneox = {
    .name = "gptneox",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", "use_parallel_residual",
            NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_gptneox,
};
