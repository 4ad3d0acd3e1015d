/*
 * qwen3.c - src/models/qwen3.cpp: Qwen3, the llama graph with RMS Q/K norms
 * before a RoPE without frequency factors, and a SwiGLU FFN.
 */
#include "llama/graph.h"

/* llama_model_qwen3::graph */
static void build_qwen3(bctx *b)
{
    gb_build_llama_like(b, GB_LLAMA_QK_NORM);
}

const ggfit_arch ggfit__model_qwen3 = {
    .name = "qwen3",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_qwen3,
    .rank_softmax = true,   /* build_pooling: the Qwen3 rerankers' softmax */
};
