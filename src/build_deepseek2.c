/*
 * build_deepseek2.c - src/models/deepseek2.cpp: DeepSeek-V2/V3, MLA attention and shared experts.
 */
#include "build_impl.h"

void gb_build_deepseek2(bctx *b)
{
    /* Not built yet: the projection estimates compute buffers instead. */
    b->missing = true;
}
