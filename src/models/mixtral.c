/*
 * mixtral.c - files whose general.architecture is mixtral. llama.cpp's
 * converter writes Mixtral as a Llama with experts, which takes Llama's row
 * and graph (src/models/llama.cpp); for this name the graph is not rebuilt
 * here yet: the row gives its memory (one KV cache), and the compute
 * buffers are estimated.
 */
#include "llama/arch.h"

const ggfit_arch ggfit__model_mixtral = {
    .name = "mixtral",
    .mem = GGFIT_MEM_KV,
};
