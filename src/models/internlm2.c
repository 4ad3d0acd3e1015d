/*
 * internlm2.c - src/models/internlm2.cpp: InternLM2, pre-norm attention with
 * plain RoPE (no frequency factors) and a SwiGLU FFN, which is Llama's graph
 * op for op (gb_build_llama_like; load_tensors creates no rope_freqs, so
 * none is read).
 */
#include "llama/graph.h"

/* llama_model_internlm2::graph */
static void build_internlm2(bctx *b)
{
    gb_build_llama_like(b, GB_LLAMA_ANY_QKV);
}

const ggfit_arch ggfit__model_internlm2 = {
    .name = "internlm2",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_internlm2,
};
