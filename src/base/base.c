/*
 * error.c - status names, caller-owned messages, allocation wrappers and a
 * small string builder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static const char *const status_names[] = {
    "ok",
    "i/o error",
    "format error",
    "unsupported",
    "out of memory",
    "invalid argument",
    "limit exceeded",
};
_Static_assert(sizeof status_names / sizeof status_names[0] == GGFIT_STATUS_COUNT,
               "status_names must match ggfit_status");

const char *ggfit_status_str(int status)
{
    if (status < 0 || status >= GGFIT_STATUS_COUNT)
        return "unknown status";
    return status_names[status];
}

void ggfit_free(void *p)
{
    free(p);
}

/* ---- allocation with failure injection ---------------------------------- */

static uint64_t alloc_count;
static uint64_t alloc_fail_at;   /* 0: never fail */

uint64_t ggfit__fail_alloc_after(uint64_t n)
{
    uint64_t seen = alloc_count;
    alloc_count = 0;
    alloc_fail_at = n;
    return seen;
}

static bool alloc_should_fail(void)
{
    alloc_count++;
    return alloc_fail_at != 0 && alloc_count == alloc_fail_at;
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

void *ggfit__buf_get(ggfit__buf *b, size_t n)
{
    if (n <= b->cap && b->p)
        return b->p;
    /* Room to grow: the scheduler's output varies a little with placement. */
    size_t cap = n + n / 4 < n ? n : n + n / 4;
    void *p = ggfit__malloc(cap);
    if (!p)
        return NULL;
    free(b->p);
    b->p = p;
    b->cap = cap;
    return p;
}

void ggfit__buf_free(ggfit__buf *b)
{
    free(b->p);
    b->p = NULL;
    b->cap = 0;
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

/* ---- messages ------------------------------------------------------------ */

int ggfit__fail(char **err, int status, const char *fmt, ...)
{
    if (err) {
        /* Messages are built with plain malloc: reporting an injected
         * allocation failure must not itself fail. */
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        *err = malloc(strlen(buf) + 1);
        if (*err)
            strcpy(*err, buf);
    }
    return status;
}

/* ---- string builder ------------------------------------------------------- */

void ggfit__sb_printf(ggfit_sb *sb, const char *fmt, ...)
{
    va_list ap;
    if (sb->oom)
        return;
    for (;;) {
        size_t room = sb->cap - sb->len;
        int n;
        va_start(ap, fmt);
        n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            sb->oom = true;
            return;
        }
        if ((size_t)n < room) {
            sb->len += (size_t)n;
            return;
        }
        size_t cap = sb->cap ? sb->cap : 256;
        while (cap - sb->len <= (size_t)n)
            cap *= 2;
        char *p = ggfit__realloc(sb->buf, cap);
        if (!p) {
            sb->oom = true;
            return;
        }
        sb->buf = p;
        sb->cap = cap;
    }
}

char *ggfit__sb_take(ggfit_sb *sb)
{
    char *s = sb->buf;
    if (sb->oom || !s) {
        free(s);
        s = NULL;
    }
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    sb->oom = false;
    return s;
}
