/*
 * http.c - a GGUF header over HTTP(S), sent by the transport of xfer.h
 * (libcurl natively, the JavaScript engine's fetch in WebAssembly).
 *
 * The header is read as a file is (gguf.c's reader, through a
 * ggfit__gguf_source): the first request asks for the first MiB with a
 * Range header, and each later one for the bytes the parser needs next, so
 * that nothing past the tensor infos is transferred. A server that ignores
 * Range answers 200 with the whole file: the transfer is cut as soon as the
 * bytes asked for have arrived, so a 60 GB model costs its header (plus
 * one socket buffer), never a download. Redirects are followed (Hugging
 * Face answers resolve URLs with its CDN's); connecting and a stalled
 * transfer have timeouts; HTTP errors become messages that say what to do.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "gguf/gguf.h"
#include "remote/xfer.h"

#define FIRST_BYTES ((uint64_t)32 << 10)

/* ---- options ------------------------------------------------------------- */

static uint32_t env_u32(const char *name, uint32_t dflt)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return dflt;
    unsigned long n = strtoul(v, &end, 10);
    return *end || n == 0 || n > UINT32_MAX ? dflt : (uint32_t)n;
}

void ggfit_remote_options_init(ggfit_remote_options *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_ms = env_u32("GGFIT_HTTP_CONNECT_TIMEOUT_MS", 10000);
    o->stall_timeout_ms = env_u32("GGFIT_HTTP_STALL_TIMEOUT_MS", 30000);
    o->first_bytes = env_u32("GGFIT_HTTP_FIRST_BYTES", (uint32_t)FIRST_BYTES);
    ggfit__cache_dir(o->cache_dir, sizeof o->cache_dir);
}

/* ---- the cache ------------------------------------------------------------------ */

/* One file per URL, named by its hash: a text head (the URL, to tell
 * collisions apart, the ETag, the file's size, the bytes held), then the
 * bytes. */
static void cache_path(const ggfit_remote_options *o, const char *url, char *out, size_t n)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (const char *p = url; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    snprintf(out, n, "%s/%016llx", o->cache_dir, (unsigned long long)h);
}

bool ggfit__cache_load(const ggfit_remote_options *o, const char *url, char *etag,
                       size_t etag_n, uint64_t *size, unsigned char **bytes, size_t *n)
{
    char path[1100], line[4200];
    unsigned long long sz, len;
    *bytes = NULL;
    *n = 0;
    if (!o->cache_dir[0])
        return false;
    cache_path(o, url, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    bool ok = fgets(line, sizeof line, f) && !strcmp(line, "ggfit-cache 1\n") &&
              fgets(line, sizeof line, f) && !strncmp(line, "url ", 4) &&
              strlen(line) == strlen(url) + 5 && !strncmp(line + 4, url, strlen(url)) &&
              fgets(line, sizeof line, f) && !strncmp(line, "etag ", 5);
    if (ok) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(etag, etag_n, "%s", line + 5);
        ok = fgets(line, sizeof line, f) && sscanf(line, "size %llu", &sz) == 1 &&
             fgets(line, sizeof line, f) && sscanf(line, "bytes %llu", &len) == 1 &&
             len <= GGFIT_MAX_HEADER_BYTES && len <= sz;
    }
    if (ok && (*bytes = ggfit__malloc(len ? (size_t)len : 1)) &&
        fread(*bytes, 1, (size_t)len, f) == len) {
        *size = sz;
        *n = (size_t)len;
    } else {
        free(*bytes);
        *bytes = NULL;
        ok = false;
    }
    fclose(f);
    return ok;
}

void ggfit__cache_store(const ggfit_remote_options *o, const char *url, const char *etag,
                        uint64_t size, const void *bytes, size_t n)
{
    char path[1100], tmp[1200];
    if (!o->cache_dir[0] || strchr(url, '\n') || strchr(etag, '\n'))
        return;
    ggfit__mkdirs(o->cache_dir);
    cache_path(o, url, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    fprintf(f, "ggfit-cache 1\nurl %s\netag %s\nsize %llu\nbytes %zu\n", url, etag,
            (unsigned long long)size, n);
    bool ok = fwrite(bytes, 1, n, f) == n;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}

bool ggfit_is_url(const char *s)
{
    return s && (!strncasecmp(s, "http://", 7) || !strncasecmp(s, "https://", 8));
}

/* ---- one request (sent by the transport: xfer.h) -------------------------------- */

/* The message of an HTTP error reply, e.g. Hugging Face's {"error": "..."}. */
static void error_detail(const ggfit__xfer *x, char *out, size_t n)
{
    out[0] = '\0';
    const char *e = strstr(x->error_body, "\"error\"");
    if (e && (e = strchr(e + 7, '"'))) {
        size_t k = 0;
        for (e++; *e && *e != '"' && k + 1 < n; e++)
            out[k++] = *e;
        out[k] = '\0';
    }
}

/* The hub's address (here, below hf.c, which reads its repositories
 * there): MODEL_ENDPOINT, else HF_ENDPOINT, as llama.cpp reads them. */
char *ggfit_hf_endpoint(void)
{
    const char *e = getenv("MODEL_ENDPOINT");
    if (!e || !*e)
        e = getenv("HF_ENDPOINT");   /* kept by llama.cpp for compatibility */
    if (!e || !*e)
        e = "https://huggingface.co/";
    size_t n = strlen(e);
    char *s = ggfit__malloc(n + 2);
    if (s)
        snprintf(s, n + 2, "%s%s", e, e[n - 1] == '/' ? "" : "/");
    return s;
}

/* Whether url is on the Hugging Face hub (huggingface.co, or the endpoint
 * MODEL_ENDPOINT / HF_ENDPOINT names): its refusals are about tokens and
 * gated models; another server's are its own. */
static bool on_hub(const char *url)
{
    static const char *const hubs[] = { "https://huggingface.co/", "https://hf.co/" };
    for (size_t k = 0; k < sizeof hubs / sizeof hubs[0]; k++)
        if (!strncasecmp(url, hubs[k], strlen(hubs[k])))
            return true;
    char *endpoint = ggfit_hf_endpoint();
    bool hub = endpoint && !strncasecmp(url, endpoint, strlen(endpoint));
    ggfit_free(endpoint);
    return hub;
}

static ggfit_status http_error(const char *url, const ggfit_remote_options *o,
                               const ggfit__xfer *x, char **err)
{
    char detail[256], said[300];
    error_detail(x, detail, sizeof detail);
    snprintf(said, sizeof said, detail[0] ? " (%s)" : "%s", detail);
    switch (x->code) {
    case 401:
    case 403:
        if (!on_hub(url))
            return ggfit__fail(err, GGFIT_EIO, "%s: HTTP %ld%s: access denied by the server "
                               "(not Hugging Face: no token is sent to it)", url, x->code,
                               said);
        return ggfit__fail(err, GGFIT_EIO, "%s: HTTP %ld%s: access denied: %s", url, x->code,
                           said, o && o->token && o->token[0]
                           ? "the token (HF_TOKEN or -hft) was refused or has no access to "
                             "this model (a gated model's terms are accepted on its page)"
                           : "the model is gated or private: set HF_TOKEN to a Hugging Face "
                             "token with access to it (a gated model's terms are accepted "
                             "on its page)");
    case 404:
        return ggfit__fail(err, GGFIT_EIO, "%s: HTTP 404%s: no such file", url, said);
    case 429:
        return ggfit__fail(err, GGFIT_EIO, "%s: HTTP 429%s: rate limited by the server; wait "
                           "and try again (a token, HF_TOKEN, raises Hugging Face's limit)",
                           url, said);
    default:
        return ggfit__fail(err, GGFIT_EIO, "%s: HTTP %ld%s", url, x->code, said);
    }
}

/* One GET of url into x: the Range asked for when range, the whole body
 * otherwise. Fails on network errors and HTTP errors (416 excepted). */
static ggfit_status perform(ggfit__http *h, const char *url, const ggfit_remote_options *o,
                            bool range, ggfit__xfer *x, char **err)
{
    if (x->stats)
        x->stats->requests++;
    ggfit__http_perform(h, url, o, range, x);
    if (x->failure == GGFIT__XFER_REFUSED && x->stopped)
        x->failure = GGFIT__XFER_DONE;
    if (x->bad_range)
        return ggfit__fail(err, GGFIT_EIO, "%s: the server sent bytes from %llu when asked "
                           "for bytes from %llu", url, (unsigned long long)x->range_start,
                           (unsigned long long)x->offset);
    if (x->too_big)
        return ggfit__fail(err, GGFIT_ELIMIT, "%s: the reply is longer than %zu bytes", url,
                           x->body_max);
    if (x->code >= 400 && x->code != 416 &&
        (x->failure == GGFIT__XFER_DONE || x->failure == GGFIT__XFER_REFUSED))
        return http_error(url, o, x, err);
    switch (x->failure) {
    case GGFIT__XFER_DONE:
        break;
    case GGFIT__XFER_STALLED:
        return ggfit__fail(err, GGFIT_EIO, "%s: the transfer stalled (under %d bytes/s for "
                           "%u s): %s", url, GGFIT__STALL_BYTES_PER_S,
                           (o->stall_timeout_ms + 999) / 1000, x->detail);
    case GGFIT__XFER_CONNECT:
        return ggfit__fail(err, GGFIT_EIO, "%s: cannot connect in time: %s", url, x->detail);
    case GGFIT__XFER_REDIRECTS:
        return ggfit__fail(err, GGFIT_EIO, "%s: too many redirects (a redirect loop?): %s", url,
                           x->detail);
    case GGFIT__XFER_REFUSED:
    case GGFIT__XFER_NOMEM:
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", url);
    default:
        return ggfit__fail(err, GGFIT_EIO, "%s: %s", url, x->detail);
    }
    if (x->code >= 300 && x->code != 416 && !(x->code == 304 && x->if_none_match))
        return ggfit__fail(err, GGFIT_EIO, "%s: HTTP %ld: not followed", url, x->code);
    return GGFIT_OK;
}

ggfit_status ggfit__http_get(const char *url, const ggfit_remote_options *o, size_t max,
                             char **body, size_t *len, long *code, ggfit_remote_stats *stats,
                             char **err)
{
    ggfit__http *c;
    *body = NULL;
    *len = 0;
    *code = 0;
    ggfit_status rc = ggfit__http_new(&c, url, err);
    if (rc)
        return rc;
    ggfit__xfer *x = ggfit__calloc(1, sizeof *x);
    if (!x) {
        ggfit__http_free(c);
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", url);
    }
    x->body_max = max;
    x->stats = stats;
    rc = perform(c, url, o, false, x, err);
    *code = x->code;
    if (!rc && !x->body && !(x->body = ggfit__calloc(1, 1)))
        rc = ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", url);
    if (rc) {
        free(x->body);
    } else {
        *body = x->body;
        *len = x->body_len;
    }
    free(x);
    ggfit__http_free(c);
    return rc;
}

/* ---- the reader's source ------------------------------------------------------ */

typedef struct remote {
    ggfit__http *c;
    const ggfit_remote_options *o;
    ggfit_remote_stats *stats;
    char *url;                /* the shard being read */
    char *at;                 /* where its first request led (redirects) */
    uint64_t size;
    bool no_range;            /* the server sends whole files (200) */
    unsigned char *first;     /* bytes fetched ahead: [first_off, + first_len) */
    uint64_t first_off;
    size_t first_len;
    ggfit__progress pg;       /* the progress line when o->progress */
    /* the shards read over the network, to be cached once all are read */
    struct fetched { char *url; char etag[256]; uint64_t size; } *fetched;
    size_t n_fetched;
} remote;

/* A URL of Hugging Face's that names a commit: .../resolve/<40 hex>/... */
static bool immutable(const char *url)
{
    const char *r = strstr(url, "/resolve/");
    if (!r)
        return false;
    r += 9;
    for (int i = 0; i < 40; i++)
        if (!((r[i] >= '0' && r[i] <= '9') || (r[i] >= 'a' && r[i] <= 'f')))
            return false;
    return r[40] == '/';
}

/* Bytes [offset, offset + n) of the current shard into dst. */
static ggfit_status fetch(remote *rm, uint64_t offset, void *dst, size_t n, size_t *got,
                          uint64_t *size, const char *if_none_match, char *etag, long *code,
                          char **err)
{
    ggfit__xfer *x = ggfit__calloc(1, sizeof *x);
    if (!x)
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", rm->url);
    x->offset = offset;
    x->dst = dst;
    x->want = n;
    x->stats = rm->stats;
    x->if_none_match = if_none_match;
    x->progress = rm->o->progress ? &rm->pg : NULL;
    ggfit_status rc = perform(rm->c, rm->at ? rm->at : rm->url, rm->o, true, x, err);
    rm->pg.before += x->pos;
    if (etag)
        snprintf(etag, 256, "%s", x->etag);
    if (code)
        *code = x->code;
    if (!rc && x->code == 200)
        rm->no_range = true;
    if (!rc && size) {
        int64_t cl = ggfit__http_content_length(rm->c);
        if (x->has_range && x->range_total != UINT64_MAX)
            *size = x->range_total;
        else if (x->code == 200 && cl >= 0)
            *size = (uint64_t)cl;
        else if (x->code == 200 && !x->stopped)
            *size = x->pos;   /* the whole body came */
        else
            *size = UINT64_MAX;
    }
    *got = x->got;
    free(x);
    return rc;
}

static ggfit_status src_open(void *ctx, const char *name, uint64_t *size, char **err)
{
    remote *rm = ctx;
    free(rm->url);
    free(rm->at);
    free(rm->first);
    rm->at = NULL;
    rm->first = NULL;
    rm->first_off = 0;
    rm->first_len = 0;
    rm->no_range = false;
    if (!(rm->url = ggfit__strndup(name, strlen(name))))
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", name);
    /* From the cache: without a request when the URL names a commit (or
     * offline), else when the server says the ETag still holds. */
    char etag[256] = "";
    unsigned char *cached = NULL;
    size_t cached_n = 0;
    uint64_t cached_size = 0;
    bool have = ggfit__cache_load(rm->o, name, etag, sizeof etag, &cached_size, &cached,
                                  &cached_n);
    if (have && (rm->o->offline || immutable(name) || !etag[0])) {
        if (!rm->o->offline && !immutable(name)) {
            have = false;   /* no ETag to ask with: read anew */
            free(cached);
        } else {
            rm->first = cached;
            rm->first_len = cached_n;
            rm->size = *size = cached_size;
            return GGFIT_OK;
        }
    }
    if (rm->o->offline)
        return ggfit__fail(err, GGFIT_EIO, "%s: not in the cache (%s), and --offline reads "
                           "nothing else", name, rm->o->cache_dir[0] ? rm->o->cache_dir
                                                                     : "no cache");
    uint64_t n = rm->o->first_bytes ? rm->o->first_bytes : FIRST_BYTES;
    if (n > GGFIT_MAX_HEADER_BYTES)
        n = GGFIT_MAX_HEADER_BYTES;
    if (!(rm->first = ggfit__malloc((size_t)n))) {
        free(cached);
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", name);
    }
    long code = 0;
    char got_etag[256] = "";
    ggfit_status rc = fetch(rm, 0, rm->first, (size_t)n, &rm->first_len, &rm->size,
                            have ? etag : NULL, got_etag, &code, err);
    if (!rc && code == 304 && have) {
        free(rm->first);
        rm->first = cached;
        rm->first_len = cached_n;
        rm->size = *size = cached_size;
        return GGFIT_OK;
    }
    free(cached);
    if (rc)
        return rc;
    if (code == 304)
        return ggfit__fail(err, GGFIT_EIO, "%s: HTTP 304 to a request without an ETag", name);
    struct fetched *fs = ggfit__realloc(rm->fetched, (rm->n_fetched + 1) * sizeof *fs);
    if (!fs || !(fs[rm->n_fetched].url = ggfit__strndup(name, strlen(name)))) {
        if (fs)
            rm->fetched = fs;
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", name);
    }
    rm->fetched = fs;
    snprintf(fs[rm->n_fetched].etag, sizeof fs[rm->n_fetched].etag, "%s", got_etag);
    rm->n_fetched++;
    /* Later requests go where the first one was sent (Hugging Face's CDN),
     * without the redirect. */
    const char *eff = ggfit__http_effective_url(rm->c);
    if (eff && strcmp(eff, rm->url) && !(rm->at = ggfit__strndup(eff, strlen(eff))))
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", name);
    if (rm->size != UINT64_MAX && rm->first_len > rm->size)
        rm->first_len = (size_t)rm->size;
    if (rm->size == UINT64_MAX && rm->first_len < n)
        rm->size = rm->first_len;   /* the reply ended: that is the file */
    *size = rm->size;
    return GGFIT_OK;
}

static ggfit_status src_read(void *ctx, uint64_t offset, void *dst, size_t min, size_t n,
                             size_t *got, char **err)
{
    remote *rm = ctx;
    unsigned char *d = dst;
    *got = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (offset >= rm->first_off && offset < rm->first_off + rm->first_len) {
            size_t k = (size_t)(rm->first_off + rm->first_len - offset);
            if (k > n - *got)
                k = n - *got;
            memcpy(d + *got, rm->first + (offset - rm->first_off), k);
            *got += k;
            offset += k;
        }
        /* Read-ahead past the bytes held is not worth a request. */
        if (*got == n || *got >= min || pass == 1)
            return GGFIT_OK;
        /* The reader never asks for the same bytes twice: the ones held are
         * not needed any more. */
        free(rm->first);
        rm->first = NULL;
        rm->first_len = 0;
        size_t want = n - *got;
        if (!rm->no_range) {
            size_t more = 0;
            ggfit_status rc = fetch(rm, offset, d + *got, want, &more, NULL, NULL, NULL, NULL,
                                    err);
            *got += more;
            return rc;
        }
        /* A server that sends the whole file from its start each time: ask
         * for as much again as has been read, so that the bytes sent add up
         * to twice the header, not to its square. */
        if (want < offset)
            want = offset > GGFIT_MAX_HEADER_BYTES ? (size_t)GGFIT_MAX_HEADER_BYTES
                                                    : (size_t)offset;
        if (rm->size != UINT64_MAX && offset + want > rm->size)
            want = (size_t)(rm->size - offset);
        if (want < n - *got)
            want = n - *got;
        if (!(rm->first = ggfit__malloc(want)))
            return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", rm->url);
        rm->first_off = offset;
        ggfit_status rc = fetch(rm, offset, rm->first, want, &rm->first_len, NULL, NULL, NULL,
                                NULL, err);
        if (rc)
            return rc;
    }
    return GGFIT_OK;
}

ggfit_status ggfit_gguf_open_url(const char *url, const ggfit_remote_options *o,
                                 ggfit_remote_stats *stats, ggfit_gguf **out, char **err)
{
    ggfit_remote_options dflt;
    if (err)
        *err = NULL;
    if (!url || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_gguf_open_url: NULL argument");
    *out = NULL;
    if (!ggfit_is_url(url))
        return ggfit__fail(err, GGFIT_EINVAL, "%s: not an http:// or https:// URL", url);
    if (!o) {
        ggfit_remote_options_init(&dflt);
        o = &dflt;
    }
    remote rm = { .o = o, .stats = stats, .pg = { .start = ggfit__now_s(), .name = url } };
    ggfit_status rc = ggfit__http_new(&rm.c, url, err);
    if (rc)
        return rc;
    ggfit__gguf_source src = {
        .ctx = &rm,
        .chunk = o->first_bytes ? o->first_bytes : FIRST_BYTES,
        .open = src_open,
        .read = src_read,
    };
    rc = ggfit__gguf_open_source(url, &src, out, err);
    if (rm.pg.shown && !rc)
        fprintf(stderr, "\rggfit: read the header of %s: %.1f MiB\n", url,
                (double)rm.pg.before / GGFIT_MiB);
    else if (rm.pg.shown)
        fputc('\n', stderr);
    /* Every shard read over the network goes to the cache: the header's
     * bytes, up to where the tensor data begins. */
    for (size_t i = 0; i < rm.n_fetched; i++) {
        for (uint32_t k = 0; !rc && k < ggfit_gguf_n_shards(*out); k++) {
            ggfit__gguf_shard_raw raw;
            if (!ggfit__gguf_raw(*out, k, &raw) || strcmp(raw.path, rm.fetched[i].url))
                continue;
            size_t len = raw.header_len < raw.data_offset ? raw.header_len
                                                          : (size_t)raw.data_offset;
            ggfit__cache_store(o, raw.path, rm.fetched[i].etag, raw.file_size, raw.header,
                               len);
        }
        free(rm.fetched[i].url);
    }
    free(rm.fetched);
    free(rm.url);
    free(rm.at);
    free(rm.first);
    ggfit__http_free(rm.c);
    return rc;
}

ggfit_status ggfit_model_open_url(const char *url, const ggfit_remote_options *o,
                                  ggfit_remote_stats *stats, ggfit_model **out, char **err)
{
    ggfit_gguf *g;
    if (out)
        *out = NULL;
    ggfit_status rc = ggfit_gguf_open_url(url, o, stats, &g, err);
    if (rc)
        return rc;
    return ggfit_model_from_gguf(g, out, err);
}
