/*
 * xfer.h - one HTTP request, between http.c, which says what to ask and
 * what the reply means, and the transport that sends it: http_curl.c
 * (libcurl) natively, http_fetch.c (the JavaScript engine's fetch) in
 * WebAssembly. A transport hands the reply's header lines to
 * ggfit__xfer_header and its body to ggfit__xfer_body as they come, and
 * says how the request ended in x->failure. Not installed.
 */
#ifndef GGFIT_REMOTE_XFER_H
#define GGFIT_REMOTE_XFER_H

#include "remote/remote.h"

#define GGFIT__ERROR_BODY 2048   /* bytes of an error reply kept for the message */
/* slower than this for the stall time (o->stall_timeout_ms): stalled */
#define GGFIT__STALL_BYTES_PER_S 1024

/* The progress line of one model's reading (o->progress). */
typedef struct ggfit__progress {
    double start;             /* CLOCK_MONOTONIC seconds */
    uint64_t before;          /* bytes of earlier requests */
    double shown_at;          /* when the line was last written */
    bool shown;
    const char *name;
} ggfit__progress;

/* How a request ended, as the transport saw it. */
enum {
    GGFIT__XFER_DONE,         /* a reply came (its status may be an error) */
    GGFIT__XFER_CONNECT,      /* no connection in the connect time */
    GGFIT__XFER_STALLED,      /* connected, then too slow for the stall time */
    GGFIT__XFER_REDIRECTS,    /* too many redirects */
    GGFIT__XFER_REFUSED,      /* ggfit__xfer_body said stop */
    GGFIT__XFER_NOMEM,
    GGFIT__XFER_FAILED        /* anything else: detail says what */
};

/* A transfer: the body bytes [offset, offset + want) of the reply go to
 * dst, the rest is counted and dropped; an error reply's first bytes are
 * kept. */
typedef struct ggfit__xfer {
    uint64_t offset;
    unsigned char *dst;
    size_t want, got;
    uint64_t pos;             /* body bytes of this reply seen so far */
    long code;                /* the HTTP status (the transport sets it first) */
    bool stopped;             /* cut by us: everything asked for is here */
    bool bad_range;           /* a 206 for other bytes than asked */
    bool too_big;             /* a GET body past its limit */
    /* headers of the last reply (a redirect's are forgotten) */
    bool has_range;
    uint64_t range_start, range_total;   /* range_total UINT64_MAX: "*" */
    char etag[256];
    const char *if_none_match;           /* an ETag to send, or NULL */
    char error_body[GGFIT__ERROR_BODY];
    size_t error_len;
    /* the progress line: when the reading began, what came before */
    const ggfit__progress *progress;
    /* a whole body (ggfit__http_get): grown up to max */
    char *body;
    size_t body_len, body_cap, body_max;
    ggfit_remote_stats *stats;
    /* how it ended (GGFIT__XFER_*) and the transport's words for it */
    int failure;
    char detail[256];
} ggfit__xfer;

/* One header line of a reply (a status line "HTTP/..." starts a new one). */
void ggfit__xfer_header(ggfit__xfer *x, const char *line, size_t len);
/* A piece of the body; false: stop the transfer (everything asked for is
 * here, or something is wrong: x says which). */
bool ggfit__xfer_body(ggfit__xfer *x, const char *p, size_t len);
/* The progress line, with now bytes of this reply's body received. */
void ggfit__xfer_progress(const ggfit__xfer *x, uint64_t now);

/* ---- the transport ---- */

typedef struct ggfit__http ggfit__http;   /* a connection, kept between requests */

ggfit_status ggfit__http_new(ggfit__http **h, const char *url, char **err);
void ggfit__http_free(ggfit__http *h);
/* One GET of url (the bytes x asks for with a Range header when range, the
 * whole body otherwise), following redirects, with o's token and
 * timeouts; x->failure and x->detail say how it ended. */
void ggfit__http_perform(ggfit__http *h, const char *url, const ggfit_remote_options *o,
                         bool range, ggfit__xfer *x);
/* Of the last reply: where it came from after the redirects (NULL: where
 * it was sent), and its Content-Length (-1: none). */
const char *ggfit__http_effective_url(ggfit__http *h);
int64_t ggfit__http_content_length(ggfit__http *h);

#endif
