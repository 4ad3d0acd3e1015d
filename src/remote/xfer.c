/*
 * xfer.c - one HTTP reply taken in (xfer.h), whatever transport brought
 * it: its header lines, its body into the bytes asked for, the progress
 * line. The transport calls these; http.c reads what they recorded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "remote/xfer.h"

void ggfit__xfer_header(ggfit__xfer *x, const char *p, size_t len)
{
    char line[256];
    size_t k = len < sizeof line - 1 ? len : sizeof line - 1;
    memcpy(line, p, k);
    line[k] = '\0';
    if (!strncmp(line, "HTTP/", 5)) {
        x->has_range = false;   /* a new reply (after a redirect or a 100) */
        x->code = 0;
        x->etag[0] = '\0';
    } else if (!strncasecmp(line, "etag:", 5)) {
        const char *v = line + 5;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(x->etag, sizeof x->etag, "%.*s", (int)strcspn(v, "\r\n"), v);
    } else if (!strncasecmp(line, "content-range:", 14)) {
        const char *v = line + 14;
        unsigned long long a, b, t;
        while (*v == ' ' || *v == '\t')
            v++;
        if (sscanf(v, "bytes %llu-%llu/%llu", &a, &b, &t) == 3) {
            x->has_range = true;
            x->range_start = a;
            x->range_total = t;
        } else if (sscanf(v, "bytes %llu-%llu/*", &a, &b) == 2) {
            x->has_range = true;
            x->range_start = a;
            x->range_total = UINT64_MAX;
        } else if (sscanf(v, "bytes */%llu", &t) == 1) {
            x->has_range = true;
            x->range_start = UINT64_MAX;
            x->range_total = t;
        }
    }
}


void ggfit__xfer_progress(const ggfit__xfer *x, uint64_t now)
{
    ggfit__progress *pg = (ggfit__progress *)(uintptr_t)x->progress;
    double t = ggfit__now_s();
    if (pg && t - pg->start > 1.0 && t - pg->shown_at >= 0.25) {
        pg->shown_at = t;
        fprintf(stderr, "\rggfit: reading the header of %s: %.1f MiB", pg->name,
                (double)(pg->before + now) / GGFIT_MiB);
        pg->shown = true;
    }
}

bool ggfit__xfer_body(ggfit__xfer *x, const char *p, size_t len)
{
    if (x->stats)
        x->stats->bytes += len;
    if (x->code >= 300) {
        size_t k = sizeof x->error_body - 1 - x->error_len;
        if (k > len)
            k = len;
        memcpy(x->error_body + x->error_len, p, k);
        x->error_len += k;
        x->error_body[x->error_len] = '\0';
        return x->error_len + 1 < sizeof x->error_body;
    }
    if (x->body_max) {
        /* the whole body, bounded */
        if (x->body_len + len > x->body_max) {
            x->too_big = true;
            return false;
        }
        if (x->body_len + len + 1 > x->body_cap) {
            size_t cap = x->body_cap ? x->body_cap : 65536;
            while (cap < x->body_len + len + 1)
                cap *= 2;
            char *b = ggfit__realloc(x->body, cap);
            if (!b)
                return false;
            x->body = b;
            x->body_cap = cap;
        }
        memcpy(x->body + x->body_len, p, len);
        x->body_len += len;
        x->body[x->body_len] = '\0';
        return true;
    }
    /* Where this piece is in the file: a 206 starts at its Content-Range,
     * a 200 at 0. */
    uint64_t start = x->code != 206 ? 0 : x->has_range ? x->range_start : x->offset;
    if (x->code == 206 && x->pos == 0 && start > x->offset) {
        x->bad_range = true;
        return false;
    }
    uint64_t at = start + x->pos, end = at + len;
    uint64_t lo = at > x->offset ? at : x->offset;
    uint64_t hi = x->offset + x->want;
    if (end < hi)
        hi = end;
    if (lo < hi) {
        memcpy(x->dst + (lo - x->offset), p + (lo - at), (size_t)(hi - lo));
        x->got = (size_t)(lo - x->offset + (hi - lo));
    }
    x->pos += len;
    if (x->got >= x->want && end > x->offset + x->want) {
        x->stopped = true;   /* more than asked for: cut the transfer */
        return false;
    }
    if (x->got >= x->want && x->code != 206) {
        x->stopped = true;
        return false;
    }
    return true;
}
