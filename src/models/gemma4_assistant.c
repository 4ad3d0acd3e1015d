/*
 * gemma4_assistant.c - Gemma 4's assistant (MTP drafter). llama_context
 * refuses to create its context without a target context (ctx_other:
 * "Gemma4Assistant requires ctx_other to be set"), so llama-fit-params
 * cannot load it alone; beside its target (common/speculative.cpp) its
 * iSWA cache shares the target's last layers' KV (create_memory's share
 * callback, mem_other) instead of keeping its own. Speculative decoding is
 * not modelled yet; the row only says so.
 */
#include "llama/arch.h"

const ggfit_arch ggfit__model_gemma4_assistant = {
    .name = "gemma4-assistant",
    .required_keys = (const char *const[]){ "attention.sliding_window",
            "attention.layer_norm_rms_epsilon", "attention.key_length_swa",
            "attention.value_length_swa", NULL },
    .why = "a draft model only: llama.cpp creates its context only beside a Gemma 4 target "
           "(alone: \"Gemma4Assistant requires ctx_other to be set\"), whose last layers' KV "
           "cache it reads instead of its own; speculative decoding is not modelled yet",
};
