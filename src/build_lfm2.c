/*
 * build_lfm2.c - src/models/lfm2.cpp: LFM2, short convolutions and attention.
 */
#include "build_impl.h"

void gb_build_lfm2(bctx *b)
{
    /* Not built yet: the projection estimates compute buffers instead. */
    b->missing = true;
}
