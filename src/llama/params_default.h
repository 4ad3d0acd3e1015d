/*
 * params_default.h - llama.cpp's flags (ggfit_params) initialised and
 * copied, internal (params_default.c).
 */
#ifndef GGFIT_LLAMA_PARAMS_DEFAULT_H
#define GGFIT_LLAMA_PARAMS_DEFAULT_H

#include <stddef.h>

#include "ggfit.h"

/* *dst = *src, but for the overrides past src->n_overrides, which are left
 * as they were in dst: the override array is nearly all of the struct
 * (86 KB), and the fit and the nearest changes copy the flags before each
 * projection, where copying it whole costs time and fresh pages. Nothing
 * reads an override past n_overrides. */
void ggfit__params_copy(ggfit_params *dst, const ggfit_params *src);

/* ggfit_params_init, but for the overrides, which are left as they are
 * (for the same reason: nothing reads one past n_overrides, which is 0).
 * For structs that hold flags, whose init would otherwise touch 86 KB of
 * fresh pages per ggfit_params for nothing. */
void ggfit__params_init_head(ggfit_params *p);

/* A range of a struct that ggfit__zero_except leaves as it is. */
typedef struct ggfit__hole {
    size_t offset, size;
} ggfit__hole;

/* Zeroes size bytes at base but for the holes, which are in order of
 * offset and do not overlap. */
void ggfit__zero_except(void *base, size_t size, const ggfit__hole *holes, size_t n_holes);

#endif
