/*
 * params.h - helpers on llama.cpp's flags (ggfit_params), internal.
 */
#ifndef GGFIT_COMMON_PARAMS_H
#define GGFIT_COMMON_PARAMS_H

#include "ggfit_app.h"

/* *dst = *src, but for the overrides past src->n_overrides, which are left
 * as they were in dst: the override array is nearly all of the struct
 * (86 KB), and the fit and the nearest changes copy the flags before each
 * projection, where copying it whole costs time and fresh pages. Nothing
 * reads an override past n_overrides. */
void ggfit__params_copy(ggfit_params *dst, const ggfit_params *src);

/* Whether the program runs llama-server's code, and so its fit and what it
 * loads beside the model: llama-server, and llama-cli, which in b10309
 * starts llama_server in its own process with its own flags (tools/cli/
 * cli-server.h; -np 1 by default, not auto). */
static inline bool ggfit__serves(ggfit_program p)
{
    return p == GGFIT_FOR_SERVER || p == GGFIT_FOR_CLI || p == GGFIT_FOR_DEFAULT;
}

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
