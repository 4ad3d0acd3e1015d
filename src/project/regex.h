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

typedef struct ggfit__regex ggfit__regex;

/* The pattern compiled, or NULL with why in msg (n bytes; "out of
 * memory" when that was why) and where in *off (SIZE_MAX: not said). */
ggfit__regex *ggfit__regex_new(const char *pattern, char *msg, size_t n, size_t *off);
/* Whether the pattern matches anywhere in s. */
bool ggfit__regex_search(ggfit__regex *re, const char *s);
void ggfit__regex_free(ggfit__regex *re);

#endif
