/*
 * debug.h - the dumps GGFIT_DEBUG_GRAPH turns on, compared with llama.cpp's
 * recorded graphs by tools/graphdiff.py and tools/scheddiff.py.
 */
#ifndef GGFIT_DEBUG_H
#define GGFIT_DEBUG_H

#include "ggml/ggml.h"
#include "ggml/sched.h"

void ggfit__dump_graph(const gg_graph *g);
void ggfit__dump_scheduled(const ggfit_sched_in *in, const ggfit_sched_out *so);

#endif
