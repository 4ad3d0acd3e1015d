/*
 * dflash.c - DFlash (and DSpark) block-diffusion drafters. Its
 * load_tensors creates no token_embd and no output matrix (it reads the
 * target's), so llama_context refuses to create its context without a
 * target context (ctx_other: "dflash requires ctx_other to be set") and
 * llama-fit-params cannot load it alone. Speculative decoding is not
 * modelled yet; the row only says so.
 */
#include "llama/arch.h"

const ggfit_arch ggfit__model_dflash = {
    .name = "dflash",
    .has_encoder = true,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .why = "a draft model only: it has no token embeddings or output of its own (it reads "
           "the target's), so llama.cpp creates its context only beside a target (alone: "
           "\"dflash requires ctx_other to be set\"); speculative decoding is not modelled yet",
};
