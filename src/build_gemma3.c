/*
 * build_gemma3.c - src/models/gemma3.cpp: Gemma 3 with interleaved sliding-window attention (iSWA).
 */
#include "build_impl.h"

void gb_build_gemma3(bctx *b)
{
    /* Not built yet: the projection estimates compute buffers instead. */
    b->missing = true;
}
