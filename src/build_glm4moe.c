/*
 * build_glm4moe.c - src/models/glm4-moe.cpp: GLM-4.5, MoE with shared experts and a NextN block.
 */
#include "build_impl.h"

void gb_build_glm4moe(bctx *b)
{
    /* Not built yet: the projection estimates compute buffers instead. */
    b->missing = true;
}
