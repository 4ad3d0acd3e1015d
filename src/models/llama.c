/*
 * llama.c - src/models/llama.cpp: Llama, pre-norm attention with RoPE (and
 * rope_freqs when the file has them), then a dense or MoE SwiGLU FFN. The
 * block stack is gb_build_llama_like in the graph library, which the Qwen3,
 * Mistral 3 and Qwen3-VL graphs repeat.
 */
#include "llama/graph.h"

/* llama_model_llama::graph */
static void build_llama(bctx *b)
{
    gb_build_llama_like(b, 0);
}

const ggfit_arch ggfit__model_llama = {
    .name = "llama",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_llama,
};
