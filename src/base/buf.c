/*
 * buf.c - scratch buffers kept between calls (see base.h for why).
 */
#include <stdlib.h>

#include "base/base.h"

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
