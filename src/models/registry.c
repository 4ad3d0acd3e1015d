/*
 * arch.c - what llama.cpp does differently per architecture, as data:
 * sliding-window patterns, NextN blocks, which layers hold a KV cache and
 * which a recurrent state (src/llama-model.cpp load_hparams and
 * create_memory, src/llama-hparams.cpp), and which reuse another's cache.
 */
#include <string.h>

#include "base/base.h"
#include "llama/arch.h"

static const ggfit_arch archs[] = {
    /* name            mem            swa period, dense_first, default n_swa, needs window, nextn kv,
     *                                rec, kv from start */
    { "llama",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "llama4",        GGFIT_MEM_KV, 4, false, 8192, false, false, GGFIT_REC_NONE, 0 },
    { "mistral3",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "granite",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "granitemoe",    GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "phi3",          GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "qwen2",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "qwen2moe",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "smollm3",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "seed_oss",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "ernie4_5",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "ernie4_5-moe",  GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "minimax-m2",    GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "dots1",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "hunyuan-moe",   GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "hunyuan-dense", GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "qwen3",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "qwen3moe",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "qwen3vl",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "qwen3vlmoe",    GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "gemma",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "gemma2",        GGFIT_MEM_KV, 2, false, 4096, false, false, GGFIT_REC_NONE, 0 },
    { "gemma3",        GGFIT_MEM_KV, 6, false, 0, true, false, GGFIT_REC_NONE, 0 },
    /* gemma3n: the blocks from the 20th on reuse the caches of blocks 18
     * (sliding window) and 19 (llama_hparams::n_layer_kv_from_start) */
    { "gemma3n",       GGFIT_MEM_KV, 5, false, 0, false, false, GGFIT_REC_NONE, 20 },
    { "cohere2",       GGFIT_MEM_KV, 4, false, 0, false, false, GGFIT_REC_NONE, 0 },
    /* exaone4: windows only in the 64-block model (project.c) */
    { "exaone4",       GGFIT_MEM_KV, 4, false, 4096, false, true, GGFIT_REC_NONE, 0 },
    { "olmo2",         GGFIT_MEM_KV, 4, false, 0, true, false, GGFIT_REC_NONE, 0 },
    { "gpt-oss",       GGFIT_MEM_KV, 2, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "deepseek2",     GGFIT_MEM_KV, 0, false, 0, false, true, GGFIT_REC_NONE, 0 },
    { "glm4",          GGFIT_MEM_KV, 0, false, 0, false, true, GGFIT_REC_NONE, 0 },
    { "glm4moe",       GGFIT_MEM_KV, 0, false, 0, false, true, GGFIT_REC_NONE, 0 },
    { "bailingmoe2",   GGFIT_MEM_KV, 0, false, 0, false, true, GGFIT_REC_NONE, 0 },
    { "apertus",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "mixtral",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "command-r",     GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "starcoder2",    GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 },
    { "mamba",         GGFIT_MEM_RECURRENT, 0, false, 0, false, false, GGFIT_REC_ALL, 0 },
    { "mamba2",        GGFIT_MEM_RECURRENT, 0, false, 0, false, false, GGFIT_REC_ALL, 0 },
    { "jamba",         GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS, 0 },
    { "granitehybrid", GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS, 0 },
    { "plamo2",        GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS, 0 },
    { "lfm2",          GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS, 0 },
    { "lfm2moe",       GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS, 0 },
    { "nemotron_h",    GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NEMOTRON_H, 0 },
    { "qwen3next",     GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_INTERVAL, 0 },
    { "falcon-h1",     GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_BOTH, 0 },
};

/* Architectures llama.cpp has no rules for in this table get the plain
 * transformer's, and the projection says so. */
static const ggfit_arch generic = { "", GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE, 0 };

const ggfit_arch *ggfit__arch(const char *name, bool *known)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, name) == 0) {
            *known = true;
            return &archs[i];
        }
    *known = false;
    return &generic;
}
