/*
 * weights.h - every weight's buffer type (weights.c; load_tensors):
 * placement, per model tensor, and the bytes of each buffer type's
 * "model" row.
 */
#ifndef GGFIT_PROJECT_WEIGHTS_H
#define GGFIT_PROJECT_WEIGHTS_H

#include "project/proj.h"

ggfit_status ggfit__project_weights(proj *pr, int32_t *placement);

#endif
