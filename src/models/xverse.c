/*
 * xverse.c - src/models/xverse.cpp: XVERSE, the same block as InternLM2 and
 * Llama (pre-norm attention, plain RoPE, SwiGLU FFN), op for op
 * gb_build_llama_like without frequency factors.
 */
#include "llama/graph.h"

/* llama_model_xverse::graph */
static void build_xverse(bctx *b)
{
    gb_build_llama_like(b, GB_LLAMA_ANY_QKV);
}

const ggfit_arch ggfit__model_xverse = {
    .name = "xverse",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_xverse,
};
