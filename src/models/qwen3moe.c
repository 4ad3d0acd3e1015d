/*
 * qwen3moe.c - src/models/qwen3moe.cpp: Qwen3-MoE, Qwen3's attention
 * (RMS Q/K norms before RoPE) with softmax-gated experts for the FFN.
 */
#include "llama/graph.h"

/* llama_model_qwen3moe::graph */
static void build_qwen3moe(bctx *b)
{
    gb_build_llama_like(b, GB_LLAMA_QK_NORM);
}

const ggfit_arch ggfit__model_qwen3moe = {
    .name = "qwen3moe",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_qwen3moe,
};
