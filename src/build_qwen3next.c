/*
 * build_qwen3next.c - src/models/qwen3next.cpp: Qwen3-Next, gated delta net layers, attention, MoE.
 */
#include "build_impl.h"

void gb_build_qwen3next(bctx *b)
{
    /* Not built yet: the projection estimates compute buffers instead. */
    b->missing = true;
}
