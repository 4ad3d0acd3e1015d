/*
 * props.c - the llama.cpp a running llama-server is: its GET /props, whose
 * "build_info" is "b<build>-<commit>" (llama_build_info(), common's
 * build-info.cpp), in every version ggfit supports and in router mode.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "remote/remote.h"

/* A /props reply holds the chat template and the default generation
 * settings: tens of KiB for a loaded model. Past this it is not one. */
#define PROPS_MAX_BYTES ((size_t)4 << 20)

/* url as given (http://host:port, with or without a trailing slash or
 * /props; host:port alone taken as http://) into out, ending in /props. */
static ggfit_status props_url(const char *url, char *out, size_t n, char **err)
{
    size_t len = strlen(url);
    while (len && url[len - 1] == '/')
        len--;
    if (!len || len > 2000)
        return ggfit__fail(err, GGFIT_EINVAL, "--server: expected llama-server's address, "
                                              "e.g. http://127.0.0.1:8080");
    for (size_t i = 0; i < len; i++)
        if (isspace((unsigned char)url[i]) || iscntrl((unsigned char)url[i]))
            return ggfit__fail(err, GGFIT_EINVAL, "--server: '%.60s' is not an address: "
                               "give llama-server's, e.g. http://127.0.0.1:8080", url);
    bool has_scheme = strstr(url, "://") != NULL;
    if (has_scheme && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        return ggfit__fail(err, GGFIT_EINVAL, "--server: '%.60s': llama-server speaks http:// "
                           "or https://", url);
    bool has_props = len >= 6 && !strncmp(url + len - 6, "/props", 6);
    snprintf(out, n, "%s%.*s%s", has_scheme ? "" : "http://", (int)len, url,
             has_props ? "" : "/props");
    return GGFIT_OK;
}

ggfit_status ggfit_llama_version_from_server(const char *url, ggfit_llama_version *v,
                                             char **err)
{
    memset(v, 0, sizeof *v);
    if (!url)
        return ggfit__fail(err, GGFIT_EINVAL, "--server: no address given");
    char props[2100];
    ggfit_status rc = props_url(url, props, sizeof props, err);
    if (rc)
        return rc;
    ggfit_remote_options o;
    ggfit_remote_options_init(&o);
    /* llama-server --api-key guards /props: its key, as llama-server's
     * own LLAMA_API_KEY names it, sent as "Authorization: Bearer" */
    const char *key = getenv("LLAMA_API_KEY");
    o.token = key && *key ? key : NULL;
    char *body = NULL;
    size_t len = 0;
    long code = 0;
    if ((rc = ggfit__http_get(props, &o, PROPS_MAX_BYTES, &body, &len, &code, NULL, err))) {
        if ((rc == GGFIT_ELIMIT || code == 401) && err && *err) {
            free(*err);
            *err = NULL;
            if (code == 401)
                rc = ggfit__fail(err, GGFIT_EIO, "%s: HTTP 401: %s", props, o.token
                                 ? "llama-server refused the key in LLAMA_API_KEY"
                                 : "llama-server wants its --api-key: set LLAMA_API_KEY to it");
            else
                rc = ggfit__fail(err, GGFIT_EINVAL, "%s: the reply is longer than %zu MiB: not "
                                 "llama-server's /props", props, PROPS_MAX_BYTES >> 20);
        } else if (!code && err && *err) {   /* no reply at all: say what to check */
            char *why = *err;
            *err = NULL;
            rc = ggfit__fail(err, rc, "%s; is llama-server running there (its --host and "
                             "--port)? Or name its version: --llama-version", why);
            free(why);
        }
        return rc;
    }
    json_error_t je;
    json_t *j = json_loadb(body, len, 0, &je);
    free(body);
    if (!j || !json_is_object(j)) {
        json_decref(j);
        return ggfit__fail(err, GGFIT_EINVAL, "%s: the reply is not JSON (%s): is it "
                           "llama-server's address?", props, j ? "not an object" : je.text);
    }
    const char *info = json_string_value(json_object_get(j, "build_info"));
    if (!info) {
        json_decref(j);
        return ggfit__fail(err, GGFIT_EINVAL, "%s: the reply has no \"build_info\": not "
                           "llama-server's /props; give its version with --llama-version",
                           props);
    }
    char *inner = NULL;
    rc = ggfit_llama_version_parse(info, v, &inner);
    if (rc)
        ggfit__fail(err, rc, "%s: build_info \"%.60s\": %s", props, info,
                    inner ? inner : "not a version");
    free(inner);
    json_decref(j);
    return rc;
}
