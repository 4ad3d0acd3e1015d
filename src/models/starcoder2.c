/*
 * starcoder2.c - src/models/starcoder2.cpp: StarCoder 2. llama.cpp's graph
 * is not rebuilt here yet: the row gives its memory (one KV cache), and
 * the compute buffers are estimated.
 */
#include "llama/arch.h"

const ggfit_arch ggfit__model_starcoder2 = {
    .name = "starcoder2",
    .mem = GGFIT_MEM_KV,
};
