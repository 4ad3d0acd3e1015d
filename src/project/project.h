/*
 * project.h - the projection's internal entry point (project.c), for the
 * fit (common/fit.c), whose projections keep their graphs between them.
 */
#ifndef GGFIT_PROJECT_H
#define GGFIT_PROJECT_H

#include <stddef.h>
#include <stdint.h>

#include "ggfit.h"

struct ggfit__gcache;

/* Projects as ggfit_project does, with the graphs kept in cache (NULL:
 * none kept); a fit's projections share one. */
ggfit_status ggfit__project_cached(const ggfit_model *m, const ggfit_params *p,
                                   const ggfit_device *devs, size_t n, ggfit_projection *out,
                                   int32_t *placement, struct ggfit__gcache *cache, char **err);

#endif
