/*
 * build_nemotron_h.c - src/models/nemotron-h.cpp: Nemotron-H, Mamba2 layers, attention and MLP.
 */
#include "build_impl.h"

void gb_build_nemotron_h(bctx *b)
{
    /* Not built yet: the projection estimates compute buffers instead. */
    b->missing = true;
}
