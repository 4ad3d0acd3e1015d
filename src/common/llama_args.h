/*
 * llama_args.h - llama.cpp's flags as data (not installed).
 */
#ifndef GGFIT_LLAMA_ARGS_H
#define GGFIT_LLAMA_ARGS_H

#include "ggfit.h"

/* How many values llama.cpp's flag a takes (0, 1 or 2), or -1 when no
 * program of llama.cpp has it. */
int ggfit__llama_arg_values(const char *a);

/* Whether a changes memory in a way ggfit does not count yet (a draft
 * model, a projector, LoRA adapters, the server's prompt cache, ...). */
bool ggfit__llama_arg_counts_memory(const char *a);

/* Row i of the table (false past its end): the comma-separated names and
 * negated names, the values taken and the LLAMA_ARG_* variable ("" for
 * none). */
bool ggfit__llama_arg_row(size_t i, const char **names, const char **negated, int *values,
                          const char **env);

#endif
