/*
 * cache_types.h - the cache types llama_init_from_model refuses
 * (cache_types.c): K and V types an architecture needs equal, quantized
 * blocks that do not divide a head.
 */
#ifndef GGFIT_PROJECT_CACHE_TYPES_H
#define GGFIT_PROJECT_CACHE_TYPES_H

#include "project/proj.h"

ggfit_status ggfit__check_cache_types(const proj *pr);

#endif
