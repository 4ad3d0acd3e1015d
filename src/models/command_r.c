/*
 * command_r.c - src/models/command-r.cpp: Command R. llama.cpp's graph is
 * not rebuilt here yet: the row gives its memory (one KV cache), and the
 * compute buffers are estimated.
 */
#include "llama/arch.h"

const ggfit_arch ggfit__model_command_r = {
    .name = "command-r",
    .mem = GGFIT_MEM_KV,
};
