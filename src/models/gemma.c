/*
 * gemma.c - src/models/gemma.cpp: the first Gemma. llama.cpp's graph is
 * not rebuilt here yet: the row gives its memory (one KV cache), and the
 * compute buffers are estimated.
 */
#include "llama/arch.h"

const ggfit_arch ggfit__model_gemma = {
    .name = "gemma",
    .mem = GGFIT_MEM_KV,
};
