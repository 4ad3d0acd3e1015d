/*
 * http_fetch.c - http.c's transport in WebAssembly (xfer.h): the
 * JavaScript engine's fetch, through wasm/library.js and wasm/ggfit.js.
 *
 * fetch is asynchronous and the reader is not, so a request is answered
 * from the replies the JavaScript side already holds. One it does not hold
 * is noted there and fails here; the command ends with that failure, the
 * JavaScript side fetches every request noted (at once), and runs the
 * command again from its start, until a run asks for nothing it lacks: the
 * last run is the command's answer, with every byte read once. A run takes
 * milliseconds and a header a few such rounds, so the replays cost less
 * than one network round trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "remote/xfer.h"

/* wasm/library.js. ggfit_js_http: the reply to the GET of url (the bytes
 * [from, from + len) with a Range header when from >= 0; its body cut
 * after limit bytes), as an id, or -1 when it is not held yet (noted to be
 * fetched). The rest read that reply. */
extern int ggfit_js_http(const char *url, double from, double len, const char *token,
                         const char *if_none_match, double limit, unsigned connect_ms,
                         unsigned stall_ms);
extern int ggfit_js_reply_status(int id);
extern int ggfit_js_reply_failure(int id, char *detail, size_t n);
extern size_t ggfit_js_reply_headers(int id, char *buf, size_t n);
extern size_t ggfit_js_reply_url(int id, char *buf, size_t n);
extern double ggfit_js_reply_length(int id);
extern double ggfit_js_reply_body_size(int id);
extern void ggfit_js_reply_body(int id, double offset, void *dst, size_t n);

struct ggfit__http {
    char url[4096];           /* where the last reply came from */
    int64_t length;           /* its Content-Length, -1 none */
};

ggfit_status ggfit__http_new(ggfit__http **h, const char *url, char **err)
{
    if (!(*h = ggfit__calloc(1, sizeof **h)))
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", url);
    return GGFIT_OK;
}

void ggfit__http_free(ggfit__http *h)
{
    free(h);
}

void ggfit__http_perform(ggfit__http *h, const char *url, const ggfit_remote_options *o,
                         bool range, ggfit__xfer *x)
{
    double limit = range ? (double)(x->offset + x->want) : (double)x->body_max + 1;
    h->url[0] = '\0';
    h->length = -1;
    int id = ggfit_js_http(url, range ? (double)x->offset : -1, range ? (double)x->want : 0,
                           o->token ? o->token : "", x->if_none_match ? x->if_none_match : "",
                           limit, o->connect_timeout_ms, o->stall_timeout_ms);
    if (id < 0) {
        x->failure = GGFIT__XFER_FAILED;
        snprintf(x->detail, sizeof x->detail, "not fetched yet");
        return;
    }
    x->failure = ggfit_js_reply_failure(id, x->detail, sizeof x->detail);
    if (x->failure != GGFIT__XFER_DONE)
        return;
    /* the reply's status and headers, as lines, then its body */
    char lines[2048], status[32];
    snprintf(status, sizeof status, "HTTP/1.1 %d\r\n", ggfit_js_reply_status(id));
    ggfit__xfer_header(x, status, strlen(status));   /* a new reply */
    x->code = ggfit_js_reply_status(id);
    ggfit_js_reply_headers(id, lines, sizeof lines);
    for (char *line = lines, *end; *line; line = end + 1) {
        if (!(end = strchr(line, '\n')))
            break;
        ggfit__xfer_header(x, line, (size_t)(end - line));
    }
    ggfit_js_reply_url(id, h->url, sizeof h->url);
    h->length = (int64_t)ggfit_js_reply_length(id);
    double size = ggfit_js_reply_body_size(id);
    char piece[16384];
    for (double at = 0; at < size;) {
        size_t n = size - at < sizeof piece ? (size_t)(size - at) : sizeof piece;
        ggfit_js_reply_body(id, at, piece, n);
        at += (double)n;
        if (!ggfit__xfer_body(x, piece, n)) {
            x->failure = GGFIT__XFER_REFUSED;
            return;
        }
    }
}

const char *ggfit__http_effective_url(ggfit__http *h)
{
    return h->url[0] ? h->url : NULL;
}

int64_t ggfit__http_content_length(ggfit__http *h)
{
    return h->length;
}
