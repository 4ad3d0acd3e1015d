/*
 * pockettts.c - src/models/pockettts.cpp: the text backbone of Pocket TTS
 * (a flow language model). A GPT-2-like stack with RoPE: LayerNorms with
 * biases, Q/K/V (fused or not), a GELU FFN without gate; no lm_head, the
 * output being a copy of token_embd (its projectors are mtmd's).
 */
#include "llama/graph.h"
#include "versions/version.h"

/* llama_model_pockettts::graph: the GPT-2 stack, roped, no positions. */
static void build_pockettts(bctx *b)
{
    gb_build_gpt_like(b, GB_GPT_ROPE);
}

/* load_arch_tensors makes output the duplicated token_embd always (the
 * converter writes no output.weight). */
const ggfit_arch ggfit__model_pockettts = {
    .name = "pockettts",
    .added = LLAMA_CHANGE_POCKETTTS,
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_pockettts,
};
