/*
 * alloc.c - the library's allocation wrappers, with failure injection for
 * the tests (make the Nth allocation fail, as Lua's ltests.c does).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* Atomic because concurrent fits and projections on one model allocate from
 * several threads; relaxed order is enough: the counters order nothing else. */
static _Atomic uint64_t alloc_count;     /* allocations since the last hook call */
static _Atomic uint64_t alloc_fail_at;   /* 0: never fail */

uint64_t ggfit__fail_alloc_after(uint64_t n)
{
    uint64_t seen = atomic_exchange_explicit(&alloc_count, 0, memory_order_relaxed);
    atomic_store_explicit(&alloc_fail_at, n, memory_order_relaxed);
    return seen;
}

static bool alloc_should_fail(void)
{
    uint64_t count = atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed) + 1;
    uint64_t fail_at = atomic_load_explicit(&alloc_fail_at, memory_order_relaxed);
    return fail_at != 0 && count == fail_at;
}

void *ggfit__malloc(size_t n)
{
    return alloc_should_fail() ? NULL : malloc(n ? n : 1);
}

void *ggfit__calloc(size_t n, size_t size)
{
    return alloc_should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *ggfit__realloc(void *p, size_t n)
{
    return alloc_should_fail() ? NULL : realloc(p, n ? n : 1);
}

char *ggfit__strndup(const char *s, size_t n)
{
    char *d = ggfit__malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}
