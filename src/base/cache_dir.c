/*
 * cache_dir.c - where ggfit keeps what it fetched or measured (remote
 * headers, Hugging Face's replies, this machine's memory bandwidth): one
 * rule for every cache, so that GGFIT_CACHE_DIR moves them all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/base.h"

void ggfit__cache_dir(char *out, size_t n)
{
    const char *c = getenv("GGFIT_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"),
               *h = getenv("HOME");
    out[0] = '\0';
    if (c)
        snprintf(out, n, "%s", c);
    else if (x && x[0] == '/')
        snprintf(out, n, "%s/ggfit", x);
    else if (h && h[0] == '/')
        snprintf(out, n, "%s/.cache/ggfit", h);
}

void ggfit__mkdirs(const char *dir)
{
    char p[1100];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}
