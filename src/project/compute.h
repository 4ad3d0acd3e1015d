/*
 * compute.h - the compute buffers (compute.c): llama.cpp's graph through
 * the scheduler and ggml-alloc (graph_reserve), estimated where ggfit has
 * no graph; each buffer type's "compute" row.
 */
#ifndef GGFIT_PROJECT_COMPUTE_H
#define GGFIT_PROJECT_COMPUTE_H

#include "project/proj.h"

ggfit_status ggfit__project_compute(proj *pr, const int32_t *placement);

#endif
