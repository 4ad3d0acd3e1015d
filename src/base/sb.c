/*
 * sb.c - the malloc-backed string builder the renderers write with, and
 * the small string helpers beside it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"

void ggfit__sb_printf(ggfit_sb *sb, const char *fmt, ...)
{
    va_list ap;
    if (sb->oom)
        return;
    for (;;) {
        size_t room = sb->cap - sb->len;
        int n;
        va_start(ap, fmt);
        n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, sb->buf ? room : 0, fmt, ap);
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

size_t ggfit__str_put_u(char *dst, size_t n, size_t at, uint64_t v)
{
    char digits[21];
    size_t k = sizeof digits;
    digits[--k] = '\0';
    do
        digits[--k] = (char)('0' + v % 10);
    while (v /= 10);
    return ggfit__str_put(dst, n, at, digits + k);
}

size_t ggfit__edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t row[128];
    if (nb >= sizeof row / sizeof row[0])
        nb = sizeof row / sizeof row[0] - 1;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t sub = diag + (tolower((unsigned char)a[i - 1]) !=
                                 tolower((unsigned char)b[j - 1]));
            size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[nb];
}

const char *ggfit_nearest_word(const char *word, const char *const *choices, size_t n,
                               size_t max_edits)
{
    const char *near = NULL;
    size_t best = SIZE_MAX;
    for (size_t k = 0; word && k < n; k++) {
        size_t d = ggfit__edit_distance(word, strlen(word), choices[k], strlen(choices[k]));
        if (d < best) {
            best = d;
            near = choices[k];
        }
    }
    return near && best <= max_edits && best < strlen(near) ? near : NULL;
}
