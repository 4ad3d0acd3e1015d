/*
 * project.h - the projection's internal entry points (llama/project.c).
 */
#ifndef GGFIT_PROJECT_H
#define GGFIT_PROJECT_H

#include "ggfit.h"

/* A fit's projections share one graph structure; the cache keeps the last
 * two built graphs so that the next projection only re-targets buffers. */
struct ggfit__gcache;
struct ggfit__gcache *ggfit__gcache_new(void);
void ggfit__gcache_free(struct ggfit__gcache *c);
int ggfit__project_cached(const ggfit_model *m, const ggfit_params *p, const ggfit_device *devs,
                          size_t n, ggfit_projection *out, int32_t *placement,
                          struct ggfit__gcache *cache, char **err);
/* The model keeps the last cache given back, across calls (model.c): take
 * returns it, or a new one when it is absent or taken by another thread
 * (NULL when out of memory: project without one); give keeps c (NULL: no-op)
 * and frees the one it replaces. */
struct ggfit__gcache *ggfit__model_cache_take(const ggfit_model *m);
void ggfit__model_cache_give(const ggfit_model *m, struct ggfit__gcache *c);

#endif
