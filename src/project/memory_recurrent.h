/*
 * memory_recurrent.h - the recurrent state's bytes (memory_recurrent.c;
 * llama_memory_recurrent), added to each buffer type's "context" row.
 */
#ifndef GGFIT_PROJECT_MEMORY_RECURRENT_H
#define GGFIT_PROJECT_MEMORY_RECURRENT_H

#include "project/proj.h"

void ggfit__project_state(proj *pr);

/* The rollback snapshots a sequence the recurrent state keeps: n_rs_seq
 * where the architecture rolls back at the build asked for
 * (llm_arch_supports_rs_rollback), else 0. */
uint32_t ggfit__n_rs_seq(const proj *pr);

#endif
