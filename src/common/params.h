/*
 * params.h - helpers on llama.cpp's flags (ggfit_params), internal.
 */
#ifndef GGFIT_COMMON_PARAMS_H
#define GGFIT_COMMON_PARAMS_H

#include "ggfit.h"

/* *dst = *src, but for the overrides past src->n_overrides, which are left
 * as they were in dst: the override array is nearly all of the struct
 * (86 KB), and the fit and the nearest changes copy the flags before each
 * projection, where copying it whole costs time and fresh pages. Nothing
 * reads an override past n_overrides. */
void ggfit__params_copy(ggfit_params *dst, const ggfit_params *src);

#endif
