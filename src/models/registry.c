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
    { .name = "llama", .mem = GGFIT_MEM_KV },
    { .name = "llama4", .mem = GGFIT_MEM_KV, .swa_period = 4, .swa_default = 8192 },
    { .name = "mistral3", .mem = GGFIT_MEM_KV },
    { .name = "granite", .mem = GGFIT_MEM_KV },
    { .name = "granitemoe", .mem = GGFIT_MEM_KV },
    { .name = "phi3", .mem = GGFIT_MEM_KV },
    { .name = "qwen2", .mem = GGFIT_MEM_KV },
    { .name = "qwen2moe", .mem = GGFIT_MEM_KV },
    { .name = "smollm3", .mem = GGFIT_MEM_KV },
    { .name = "seed_oss", .mem = GGFIT_MEM_KV },
    { .name = "ernie4_5", .mem = GGFIT_MEM_KV },
    { .name = "ernie4_5-moe", .mem = GGFIT_MEM_KV },
    { .name = "minimax-m2", .mem = GGFIT_MEM_KV },
    { .name = "dots1", .mem = GGFIT_MEM_KV },
    { .name = "hunyuan-moe", .mem = GGFIT_MEM_KV },
    { .name = "hunyuan-dense", .mem = GGFIT_MEM_KV },
    { .name = "qwen3", .mem = GGFIT_MEM_KV },
    { .name = "qwen3moe", .mem = GGFIT_MEM_KV },
    { .name = "qwen3vl", .mem = GGFIT_MEM_KV },
    { .name = "qwen3vlmoe", .mem = GGFIT_MEM_KV },
    { .name = "gemma", .mem = GGFIT_MEM_KV },
    { .name = "gemma2", .mem = GGFIT_MEM_KV, .swa_period = 2, .swa_default = 4096 },
    { .name = "gemma3", .mem = GGFIT_MEM_KV, .swa_period = 6, .swa_needs_window = true },
    /* gemma3n: the blocks from the 20th on reuse the caches of blocks 18
     * (sliding window) and 19 (llama_hparams::n_layer_kv_from_start) */
    { .name = "gemma3n", .mem = GGFIT_MEM_KV, .swa_period = 5, .kv_from_start = 20 },
    { .name = "cohere2", .mem = GGFIT_MEM_KV, .swa_period = 4 },
    /* exaone4: windows only in the 64-block model (project.c) */
    { .name = "exaone4", .mem = GGFIT_MEM_KV, .swa_period = 4, .swa_default = 4096, .nextn_kv = true },
    { .name = "olmo2", .mem = GGFIT_MEM_KV, .swa_period = 4, .swa_needs_window = true },
    { .name = "gpt-oss", .mem = GGFIT_MEM_KV, .swa_period = 2 },
    { .name = "deepseek2", .mem = GGFIT_MEM_KV, .nextn_kv = true },
    { .name = "glm4", .mem = GGFIT_MEM_KV, .nextn_kv = true },
    { .name = "glm4moe", .mem = GGFIT_MEM_KV, .nextn_kv = true },
    { .name = "bailingmoe2", .mem = GGFIT_MEM_KV, .nextn_kv = true },
    { .name = "apertus", .mem = GGFIT_MEM_KV },
    { .name = "mixtral", .mem = GGFIT_MEM_KV },
    { .name = "command-r", .mem = GGFIT_MEM_KV },
    { .name = "starcoder2", .mem = GGFIT_MEM_KV },
    { .name = "mamba", .mem = GGFIT_MEM_RECURRENT, .rec = GGFIT_REC_ALL },
    { .name = "mamba2", .mem = GGFIT_MEM_RECURRENT, .rec = GGFIT_REC_ALL },
    { .name = "jamba", .mem = GGFIT_MEM_HYBRID, .rec = GGFIT_REC_NO_KV_HEADS },
    { .name = "granitehybrid", .mem = GGFIT_MEM_HYBRID, .rec = GGFIT_REC_NO_KV_HEADS },
    { .name = "plamo2", .mem = GGFIT_MEM_HYBRID, .rec = GGFIT_REC_NO_KV_HEADS },
    { .name = "lfm2", .mem = GGFIT_MEM_HYBRID, .rec = GGFIT_REC_NO_KV_HEADS },
    { .name = "lfm2moe", .mem = GGFIT_MEM_HYBRID, .rec = GGFIT_REC_NO_KV_HEADS },
    { .name = "nemotron_h", .mem = GGFIT_MEM_HYBRID, .rec = GGFIT_REC_NEMOTRON_H },
    { .name = "qwen3next", .mem = GGFIT_MEM_HYBRID, .rec = GGFIT_REC_INTERVAL },
    { .name = "falcon-h1", .mem = GGFIT_MEM_HYBRID, .rec = GGFIT_REC_BOTH },
};

/* Architectures llama.cpp has no rules for in this table get the plain
 * transformer's, and the projection says so. */
static const ggfit_arch generic = { .name = "", .mem = GGFIT_MEM_KV };

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
