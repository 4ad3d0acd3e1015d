/*
 * bloom.c - src/models/bloom.cpp: BLOOM, a LayerNorm of the
 * embeddings, ALiBi instead of positions (the same buffers: the bias is
 * made inside soft_max), fused QKV, a GELU FFN, biases everywhere.
 */
#include <string.h>

#include "llama/graph.h"

/* llama_model_bloom::graph */
static void build_bloom(bctx *b)
{
    gb_build_gpt_like(b, GB_GPT_TOK_NORM);
}

/* load_tensors: the embeddings' norm is a repeating-layer tensor of block 0
 * (LLM_TENSOR_TOKEN_EMBD_NORM, created with bid 0). */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    return strncmp(t->info->name, "token_embd_norm.", 16) ? -2 : 0;
}

const ggfit_arch ggfit__model_bloom = {
    .name = "bloom",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_bloom,
    .tensor_layer = tensor_layer,
};
