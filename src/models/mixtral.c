/*
 * mixtral.c - files whose general.architecture is mixtral. The name is not
 * in llama.cpp's list, so llama_model_load refuses them ("unknown model
 * architecture: 'mixtral'"); llama.cpp's converter writes Mixtral as a
 * llama with experts (general.architecture llama, exact: llama.c, e.g.
 * data/models/mixtral-8x7b-Q4_K_M.gguf). The row only says so; projections
 * take the generic rules.
 */
#include "llama/arch.h"

const ggfit_arch ggfit__model_mixtral = {
    .name = "mixtral",
    .why = "llama.cpp refuses such files (\"unknown model architecture: 'mixtral'\"); its "
           "converter writes Mixtral as general.architecture llama, which is exact",
};
