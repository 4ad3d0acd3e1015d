/*
 * plamo2.c - src/models/plamo2.cpp: PLaMo 2, Mamba layers (those without
 * KV heads) and attention layers on hybrid memory. llama.cpp's graph is
 * not rebuilt here yet: the row gives its memory, and the compute buffers
 * are estimated.
 */
#include "llama/arch.h"

const ggfit_arch ggfit__model_plamo2 = {
    .name = "plamo2",
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
};
