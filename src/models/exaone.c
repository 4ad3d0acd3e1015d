/*
 * exaone.c - src/models/exaone.cpp: EXAONE 3, Llama's block (RoPE with
 * rope_freqs when the file has them, SwiGLU FFN) op for op.
 */
#include "llama/graph.h"

/* llama_model_exaone::graph */
static void build_exaone(bctx *b)
{
    gb_build_llama_like(b, GB_LLAMA_ANY_QKV);
}

const ggfit_arch ggfit__model_exaone = {
    .name = "exaone",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_exaone,
};
