/*
 * arch.c - what llama.cpp does differently per architecture, as data:
 * sliding-window patterns, NextN blocks, which layers hold a KV cache and
 * which a recurrent state (src/llama-model.cpp load_hparams and
 * create_memory, src/llama-hparams.cpp).
 */
#include <string.h>

#include "internal.h"

static const ggfit_arch archs[] = {
    /* name            mem            swa period, dense_first, default n_swa, needs window, nextn kv */
    { "llama",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "llama4",        GGFIT_MEM_KV, 4, false, 8192, false, false, GGFIT_REC_NONE },
    { "mistral3",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "granite",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "granitemoe",    GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "phi3",          GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "qwen2",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "qwen2moe",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "smollm3",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "seed_oss",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "ernie4_5",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "ernie4_5-moe",  GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "minimax-m2",    GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "dots1",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "hunyuan-moe",   GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "hunyuan-dense", GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "qwen3",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "qwen3moe",      GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "qwen3vl",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "qwen3vlmoe",    GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "gemma",         GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "gemma2",        GGFIT_MEM_KV, 2, false, 4096, false, false, GGFIT_REC_NONE },
    { "gemma3",        GGFIT_MEM_KV, 6, false, 0, true, false, GGFIT_REC_NONE },
    { "cohere2",       GGFIT_MEM_KV, 4, false, 0, false, false, GGFIT_REC_NONE },
    /* exaone4: windows only in the 64-block model (project.c) */
    { "exaone4",       GGFIT_MEM_KV, 4, false, 4096, false, true, GGFIT_REC_NONE },
    { "olmo2",         GGFIT_MEM_KV, 4, false, 0, true, false, GGFIT_REC_NONE },
    { "gpt-oss",       GGFIT_MEM_KV, 2, false, 0, false, false, GGFIT_REC_NONE },
    { "deepseek2",     GGFIT_MEM_KV, 0, false, 0, false, true, GGFIT_REC_NONE },
    { "glm4",          GGFIT_MEM_KV, 0, false, 0, false, true, GGFIT_REC_NONE },
    { "glm4moe",       GGFIT_MEM_KV, 0, false, 0, false, true, GGFIT_REC_NONE },
    { "bailingmoe2",   GGFIT_MEM_KV, 0, false, 0, false, true, GGFIT_REC_NONE },
    { "apertus",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "mixtral",       GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "command-r",     GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "starcoder2",    GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE },
    { "mamba",         GGFIT_MEM_RECURRENT, 0, false, 0, false, false, GGFIT_REC_ALL },
    { "mamba2",        GGFIT_MEM_RECURRENT, 0, false, 0, false, false, GGFIT_REC_ALL },
    { "jamba",         GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS },
    { "granitehybrid", GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS },
    { "plamo2",        GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS },
    { "lfm2",          GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS },
    { "lfm2moe",       GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NO_KV_HEADS },
    { "nemotron_h",    GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_NEMOTRON_H },
    { "qwen3next",     GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_INTERVAL },
    { "falcon-h1",     GGFIT_MEM_HYBRID, 0, false, 0, false, false, GGFIT_REC_BOTH },
};

/* Architectures llama.cpp has no rules for in this table get the plain
 * transformer's, and the projection says so. */
static const ggfit_arch generic = { "", GGFIT_MEM_KV, 0, false, 0, false, false, GGFIT_REC_NONE };

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
