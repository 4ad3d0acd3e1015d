/*
 * layers.h - what each layer holds, worked out once (layers.c): the
 * sliding window in force and its cells, which layers attend over it,
 * which have KV cells and which recurrent state, where each one's cache
 * goes and which backend runs it; the stages after it read pr's arrays.
 */
#ifndef GGFIT_PROJECT_LAYERS_H
#define GGFIT_PROJECT_LAYERS_H

#include "project/proj.h"

ggfit_status ggfit__resolve_layers(proj *pr);

#endif
