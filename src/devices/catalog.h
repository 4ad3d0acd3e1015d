/*
 * catalog.h - the Metal working-set rule and catalog suggestions
 * (devices/catalog.c).
 */
#ifndef GGFIT_CATALOG_H
#define GGFIT_CATALOG_H

#include "ggfit.h"

/* The Metal working-set limit (MTLDevice.recommendedMaxWorkingSetSize) that
 * llama.cpp budgets a Mac's GPU from, in bytes: iogpu.wired_limit_mb MiB when
 * that sysctl is set (non-zero; capped at memsize), else macOS's share of
 * hw.memsize (memsize, bytes) rounded up to a 16 KiB page. macos_major picks
 * the rule: below 26 the older 2/3-or-3/4 one; 0 means the newest. The
 * catalog sizes its Macs with it (as macOS 26); the live probe (devices.c)
 * uses it where Metal cannot be asked. The bands are in catalog.c. */
uint64_t ggfit__metal_working_set(uint64_t memsize, uint64_t wired_limit_mb,
                                  unsigned macos_major);

/* Writes up to three catalog ids close to id ("rtx-390" -> "rtx-3090, ...")
 * into out (cap bytes, NUL-terminated), best first; returns how many. Close
 * is an edit distance over the whole id or over its '-' tokens, whichever
 * is smaller ("rtx-4060-laptopp" -> "rtx-4060-laptop, rtx-4060, ..."); the
 * ranking is written above the function in catalog.c. */
size_t ggfit__catalog_suggest(const char *id, char *out, size_t cap);

#endif
