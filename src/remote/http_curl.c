/*
 * http_curl.c - http.c's transport natively: libcurl (xfer.h).
 *
 * libcurl is loaded when the first URL is read, not linked: with the ~35
 * libraries it pulls in (TLS, Kerberos, LDAP, ...) it would double the
 * start-up of every run, and most runs read local files. The table holds
 * the few entry points used here; curl.h still gives the types.
 */
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "remote/xfer.h"

#ifndef CURL_LIB
#define CURL_LIB "libcurl.so.4"   /* the soname of libcurl's ABI 4 */
#endif

static struct {
    CURLcode (*global_init)(long flags);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *c);
    void (*easy_reset)(CURL *c);
    CURLcode (*easy_perform)(CURL *c);
    CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
    CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
    const char *(*easy_strerror)(CURLcode rc);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
} cu;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;
static char curl_load_error[256];
static void *curl_lib;

/* At exit: libcurl's cleanup, then the library unloaded, which runs the
 * exit handlers of the libraries it brought (OpenSSL's) and gives back what
 * the loader keeps for them. */
static void curl_cleanup(void)
{
    cu.global_cleanup();
    dlclose(curl_lib);
}

/* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
#define CURL_SYM(field, name) \
    (*(void **)&cu.field = dlsym(lib, name)) != NULL

static void curl_init(void)
{
    void *lib = dlopen(CURL_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(curl_load_error, sizeof curl_load_error, "%s", dlerror());
        return;
    }
    if (!(CURL_SYM(global_init, "curl_global_init") &&
          CURL_SYM(global_cleanup, "curl_global_cleanup") &&
          CURL_SYM(easy_init, "curl_easy_init") &&
          CURL_SYM(easy_cleanup, "curl_easy_cleanup") &&
          CURL_SYM(easy_reset, "curl_easy_reset") &&
          CURL_SYM(easy_perform, "curl_easy_perform") &&
          CURL_SYM(easy_setopt, "curl_easy_setopt") &&
          CURL_SYM(easy_getinfo, "curl_easy_getinfo") &&
          CURL_SYM(easy_strerror, "curl_easy_strerror") &&
          CURL_SYM(slist_append, "curl_slist_append") &&
          CURL_SYM(slist_free_all, "curl_slist_free_all"))) {
        snprintf(curl_load_error, sizeof curl_load_error, "%s: %s", CURL_LIB, dlerror());
        dlclose(lib);
        return;
    }
    curl_lib = lib;
    curl_init_rc = cu.global_init(CURL_GLOBAL_DEFAULT);
    if (curl_init_rc == CURLE_OK)
        atexit(curl_cleanup);
}

struct ggfit__http {
    CURL *c;
    ggfit__xfer *x;           /* the request in flight */
};

ggfit_status ggfit__http_new(ggfit__http **h, const char *url, char **err)
{
    *h = NULL;
    if (ggfit__static_program())
        return ggfit__fail(err, GGFIT_ESTATIC, "%s: reading a URL needs libcurl, which a "
                           "statically linked program cannot load", url);
    pthread_once(&curl_once, curl_init);
    if (curl_load_error[0])
        return ggfit__fail(err, GGFIT_EIO, "%s: reading a URL needs libcurl, which could not "
                           "be loaded (%s); install libcurl4", url, curl_load_error);
    if (!(*h = ggfit__calloc(1, sizeof **h)))
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", url);
    if (curl_init_rc != CURLE_OK || !((*h)->c = cu.easy_init())) {
        free(*h);
        *h = NULL;
        return ggfit__fail(err, GGFIT_EIO, "%s: libcurl could not start: %s", url,
                           cu.easy_strerror(curl_init_rc));
    }
    return GGFIT_OK;
}

void ggfit__http_free(ggfit__http *h)
{
    if (h)
        cu.easy_cleanup(h->c);
    free(h);
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    ggfit__xfer_header(((ggfit__http *)ud)->x, p, size * n);
    return size * n;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal;
    (void)ultotal;
    (void)ulnow;
    ggfit__xfer_progress(((ggfit__http *)ud)->x, (uint64_t)dlnow);
    return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    ggfit__http *h = ud;
    if (!h->x->code)
        cu.easy_getinfo(h->c, CURLINFO_RESPONSE_CODE, &h->x->code);
    return ggfit__xfer_body(h->x, p, size * n) ? size * n : 0;
}

void ggfit__http_perform(ggfit__http *h, const char *url, const ggfit_remote_options *o,
                         bool range, ggfit__xfer *x)
{
    CURL *c = h->c;
    char errbuf[CURL_ERROR_SIZE] = "";
    char range_s[64], auth[512];
    struct curl_slist *hdr = NULL, *l;
    bool ok = true;
    h->x = x;
    cu.easy_reset(c);
    cu.easy_setopt(c, CURLOPT_URL, url);
    cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    cu.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    cu.easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
#if LIBCURL_VERSION_NUM >= 0x075500
    cu.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    cu.easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
    cu.easy_setopt(c, CURLOPT_USERAGENT, "ggfit/" GGFIT_VERSION);
    cu.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)o->connect_timeout_ms);
    cu.easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, (long)GGFIT__STALL_BYTES_PER_S);
    cu.easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)((o->stall_timeout_ms + 999) / 1000));
    cu.easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    cu.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    cu.easy_setopt(c, CURLOPT_HEADERDATA, h);
    cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    cu.easy_setopt(c, CURLOPT_WRITEDATA, h);
    if (x->progress) {
        cu.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        cu.easy_setopt(c, CURLOPT_XFERINFODATA, h);
        cu.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
    if (range) {
        snprintf(range_s, sizeof range_s, "%llu-%llu", (unsigned long long)x->offset,
                 (unsigned long long)(x->offset + x->want - 1));
        cu.easy_setopt(c, CURLOPT_RANGE, range_s);
    }
    if (o->token && o->token[0]) {
        /* curl sends a header set here to the URL's host only, not to the
         * host a redirect leads to. */
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", o->token);
        ok = (l = cu.slist_append(hdr, auth)) != NULL;
        hdr = l ? l : hdr;
    }
    if (ok && (l = cu.slist_append(hdr, "Accept-Encoding: identity")))
        hdr = l;
    else
        ok = false;
    if (ok && x->if_none_match && x->if_none_match[0]) {
        char inm[300];
        snprintf(inm, sizeof inm, "If-None-Match: %s", x->if_none_match);
        ok = (l = cu.slist_append(hdr, inm)) != NULL;
        hdr = l ? l : hdr;
    }
    if (!ok) {
        cu.slist_free_all(hdr);
        x->failure = GGFIT__XFER_NOMEM;
        return;
    }
    cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    CURLcode rc = cu.easy_perform(c);
    /* nothing of this frame is left with the handle */
    cu.easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    cu.easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
    cu.slist_free_all(hdr);
    long code = 0;
    cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (code)
        x->code = code;
    snprintf(x->detail, sizeof x->detail, "%s", errbuf[0] ? errbuf : cu.easy_strerror(rc));
    switch (rc) {
    case CURLE_OK:
        x->failure = GGFIT__XFER_DONE;
        break;
    case CURLE_OPERATION_TIMEDOUT: {
        curl_off_t connected = 0;
        cu.easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connected);
        x->failure = x->code || x->pos || connected > 0 ? GGFIT__XFER_STALLED
                                                          : GGFIT__XFER_CONNECT;
        if (x->failure == GGFIT__XFER_STALLED)
            snprintf(x->detail, sizeof x->detail, "%s", errbuf);
        break;
    }
    case CURLE_TOO_MANY_REDIRECTS:
        x->failure = GGFIT__XFER_REDIRECTS;
        snprintf(x->detail, sizeof x->detail, "%s", errbuf);
        break;
    case CURLE_WRITE_ERROR:
        x->failure = GGFIT__XFER_REFUSED;
        break;
    default:
        x->failure = GGFIT__XFER_FAILED;
        break;
    }
}

const char *ggfit__http_effective_url(ggfit__http *h)
{
    char *eff = NULL;
    return cu.easy_getinfo(h->c, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK ? eff : NULL;
}

int64_t ggfit__http_content_length(ggfit__http *h)
{
    curl_off_t cl = -1;
    return cu.easy_getinfo(h->c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK ? cl : -1;
}
