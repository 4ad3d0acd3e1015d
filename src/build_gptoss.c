/*
 * build_gptoss.c - src/models/openai-moe.cpp: gpt-oss, iSWA with attention sinks and MoE with biases.
 */
#include "build_impl.h"

void gb_build_gptoss(bctx *b)
{
    /* Not built yet: the projection estimates compute buffers instead. */
    b->missing = true;
}
