/*
 * internal.h - declarations shared by libggfit's sources, not installed.
 */
#ifndef GGFIT_INTERNAL_H
#define GGFIT_INTERNAL_H

#include <stdarg.h>
#include "ggfit.h"

#if defined(__GNUC__)
#define GGFIT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GGFIT_PRINTF(f, a)
#endif

/* Sets *err (when err is not NULL) to a new message built from fmt and
 * returns status, so that error paths read `return ggfit__fail(...)`. */
int ggfit__fail(char **err, int status, const char *fmt, ...) GGFIT_PRINTF(3, 4);

/* malloc-backed string builder, used by the renderers. A failed append
 * marks the builder as out of memory; sb_take() then returns NULL. */
typedef struct ggfit_sb {
    char *buf;
    size_t len, cap;
    bool oom;
} ggfit_sb;

void ggfit__sb_printf(ggfit_sb *sb, const char *fmt, ...) GGFIT_PRINTF(2, 3);
char *ggfit__sb_take(ggfit_sb *sb);

/* Allocation wrappers: tests make the Nth call fail to prove that every
 * failure path is handled. */
void *ggfit__malloc(size_t n);
void *ggfit__calloc(size_t n, size_t size);
void *ggfit__realloc(void *p, size_t n);
char *ggfit__strndup(const char *s, size_t n);

/* Test hook: the n-th allocation from now on (1 = the next) fails; 0 turns
 * failure injection off. Returns the number of allocations since the last
 * call. Not thread-safe; for tests only. */
uint64_t ggfit__fail_alloc_after(uint64_t n);

#define GGFIT_PAD(x, n) (((x) + (n) - 1) / (n) * (n))
#define GGFIT_MiB (1024.0 * 1024.0)

#endif
