/*
 * memory_recurrent.h - the recurrent state's bytes (memory_recurrent.c;
 * llama_memory_recurrent), added to each buffer type's "context" row.
 */
#ifndef GGFIT_PROJECT_MEMORY_RECURRENT_H
#define GGFIT_PROJECT_MEMORY_RECURRENT_H

#include "project/proj.h"

void ggfit__project_state(proj *pr);

#endif
