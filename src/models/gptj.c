/*
 * gptj.c - GPT-J. llama.cpp lists the name (LLM_ARCH_GPTJ, with its rope
 * type) but has no model for it: llama_model_mapping falls through to
 * "unsupported model architecture: 'gptj'", so no file of it loads and
 * there is nothing to match. The row only says so; projections take the
 * generic rules.
 */
#include "llama/arch.h"

const ggfit_arch ggfit__model_gptj = {
    .name = "gptj",
    .why = "llama.cpp cannot load it at this version: the name is in its list, but "
           "llama_model_mapping has no model for it (\"unsupported model architecture: "
           "'gptj'\")",
};
