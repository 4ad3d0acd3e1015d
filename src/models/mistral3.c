/*
 * mistral3.c - src/models/mistral3.cpp: Mistral 3, a llama with optional
 * attention temperature tuning (a scale on Q per position) and LongRoPE's
 * long or short frequency factors when the file has no rope_freqs.
 */
#include "llama/graph.h"

/* llama_model_mistral3::graph: the temperature input exists when
 * attention.temperature_scale is set. */
static void build_mistral3(bctx *b)
{
    unsigned flags = GB_LLAMA_LONG_SHORT;
    if (gb_key(b, "attention.temperature_scale", 0) != 0)
        flags |= GB_LLAMA_TEMP;
    gb_build_llama_like(b, flags);
}

const ggfit_arch ggfit__model_mistral3 = {
    .name = "mistral3",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_mistral3,
};
