/*
 * registry.c - the architectures ggfit knows, one registry row each
 * (ggfit__model_<id>, in src/models/<id>.c, or in the file of the
 * architecture whose graph it shares), and the lookup by
 * general.architecture. Adding an architecture is one file and one X()
 * here. Names are unique, so the order of the list does not matter.
 */
#include <string.h>

#include "llama/arch.h"

#define MODELS(X) \
    X(apertus) X(bailingmoe2) X(cohere2) X(command_r) X(deepseek2) X(dots1) \
    X(ernie4_5) X(ernie4_5_moe) X(exaone4) X(falcon_h1) X(gemma) X(gemma2) \
    X(gemma3) X(gemma3n) X(glm4) X(glm4moe) X(gptoss) X(granite) X(granitemoe) \
    X(granitehybrid) X(hunyuan_dense) X(hunyuan_moe) X(jamba) X(lfm2) X(lfm2moe) \
    X(llama) X(llama4) X(mamba) X(mamba2) X(minimax_m2) X(mistral3) X(mixtral) \
    X(nemotron_h) X(olmo2) X(phi3) X(plamo2) X(qwen2) X(qwen2moe) X(qwen3) \
    X(qwen3moe) X(qwen3next) X(qwen3vl) X(qwen3vlmoe) X(seed_oss) X(smollm3) \
    X(starcoder2)

#define DECLARE(id) extern const ggfit_arch ggfit__model_##id;
MODELS(DECLARE)
#undef DECLARE

#define ROW(id) &ggfit__model_##id,
static const ggfit_arch *const models[] = { MODELS(ROW) };
#undef ROW

/* Architectures not in the list get the plain transformer's rules and no
 * graph, and the projection says so. */
static const ggfit_arch generic = { .name = "", .mem = GGFIT_MEM_KV };

const ggfit_arch *ggfit__arch(const char *name, bool *known)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(models[i]->name, name) == 0) {
            *known = true;
            return models[i];
        }
    *known = false;
    return &generic;
}
