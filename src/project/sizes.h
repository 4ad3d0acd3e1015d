/*
 * sizes.h - the sizes llama_context makes of the flags (sizes.c): context,
 * batches, sequences and streams, pooling, -fa's first word, into
 * pr->out.
 */
#ifndef GGFIT_PROJECT_SIZES_H
#define GGFIT_PROJECT_SIZES_H

#include "project/proj.h"

ggfit_status ggfit__resolve_sizes(const proj *pr);

#endif
