/*
 * kv_cache.h - the KV cache's bytes (kv_cache.c; llama_kv_cache,
 * llama_kv_cache_iswa, llama_kv_cache_dsv4), added to each buffer type's
 * "context" row.
 */
#ifndef GGFIT_PROJECT_KV_CACHE_H
#define GGFIT_PROJECT_KV_CACHE_H

#include "project/proj.h"

ggfit_status ggfit__project_kv(proj *pr);

#endif
