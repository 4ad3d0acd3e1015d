/*
 * args.h - one loop parses every flag ggfit takes (common/args.c), with
 * the table of common/llama_args.h, from each of the places flags come
 * from: a command line (ggfit_request_parse_arg, ggfit_params_parse_arg), a
 * pasted llama.cpp command line, the LLAMA_ARG_* environment
 * (ggfit_request_env) and a router preset's key=value pairs. Internal.
 */
#ifndef GGFIT_COMMON_ARGS_H
#define GGFIT_COMMON_ARGS_H

#include "ggfit.h"
#include "common/llama_args.h"

/* The landings, each in the file that owns the struct they land in: flag a
 * (the name as given, for messages), on (false for a negated name), its
 * value v (NULL for a bool). A bad value is GGFIT_EINVAL with a message
 * that names a. */
ggfit_status ggfit__params_set(ggfit_params *p, ggfit__flag_at at, const char *a, bool on,
                              const char *v, char **err);                  /* params.c */
ggfit_status ggfit__draft_set(ggfit_request *r, ggfit__flag_at at, const char *a, bool on,
                             const char *v, char **err);                   /* draft.c */
ggfit_status ggfit__mmproj_set(ggfit_request *r, ggfit__flag_at at, const char *a, bool on,
                              const char *v, char **err);                  /* mmproj.c */

/* A router preset's key=value (llama.cpp's common/preset.cpp): the key a
 * name without its leading dashes ("ctx-size", "c", "no-mmap") or its
 * variable ("LLAMA_ARG_CTX_SIZE"), the value a flag's value, or on/off,
 * true/false, 1/0 for a bool (off under a negated name is on). Lands where
 * the flag does, noted nowhere (as a LLAMA_ARG_* variable); value must
 * outlive r. An unknown key or a bad value is GGFIT_EINVAL naming the key. */
ggfit_status ggfit__request_preset(ggfit_request *r, const char *key, const char *value,
                                   char **err);

/* Applies llama.cpp's config files (r->llama_config, ggfit_app.h) to what
 * no flag nor variable set, for the version r->llama settled, once; says
 * what they set in r->llama_config_note. A file llama.cpp would refuse is
 * GGFIT_EINVAL naming its line. */
ggfit_status ggfit__request_config(ggfit_request *r, char **err);

/* Whether row row of the flag table was given by a flag or a variable. */
bool ggfit__request_row_given(const ggfit_request *r, size_t row);

/* A llama.cpp command line as one string ("llama-server -m m.gguf -c 8192"),
 * split in place into words (at most max, into words; quotes group, and are
 * dropped) and parsed as ggfit_request_parse_arg parses argv: the program
 * first, if named (llama-server, llama-cli, llama-fit-params: r->program).
 * The words point into line, which must outlive r. */
ggfit_status ggfit__request_parse_line(ggfit_request *r, char *line, char **words, int max,
                                       char **err);

#endif
