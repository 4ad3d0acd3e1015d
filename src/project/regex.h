/*
 * regex.h - the patterns of -ot, searched in tensor names as llama.cpp
 * searches them (std::regex_search, ECMAScript). Natively with PCRE2 in
 * its ECMAScript-compatible mode; in WebAssembly with the JavaScript
 * engine's own RegExp, which is ECMAScript itself (wasm/). Not installed.
 */
#ifndef GGFIT_PROJECT_REGEX_H
#define GGFIT_PROJECT_REGEX_H

#include <stdbool.h>
#include <stddef.h>

#include "ggfit.h"

typedef struct ggfit__regex ggfit__regex;

/* The pattern compiled into *out; else GGFIT_EINVAL with why (and where,
 * when the engine says) in msg, n bytes, or GGFIT_ENOMEM. */
ggfit_status ggfit__regex_new(const char *pattern, ggfit__regex **out, char *msg, size_t n);
/* Whether the pattern matches anywhere in s. */
bool ggfit__regex_search(ggfit__regex *re, const char *s);
void ggfit__regex_free(ggfit__regex *re);

#endif
