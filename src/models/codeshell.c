/*
 * codeshell.c - src/models/codeshell.cpp: CodeShell, GPT-2's block with
 * RoPE instead of learned positions (fused or separate QKV).
 */
#include "llama/graph.h"

/* llama_model_codeshell::graph */
static void build_codeshell(bctx *b)
{
    gb_build_gpt_like(b, GB_GPT_ROPE);
}

const ggfit_arch ggfit__model_codeshell = {
    .name = "codeshell",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_codeshell,
};
