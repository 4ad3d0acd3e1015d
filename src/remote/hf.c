/*
 * hf.c - llama.cpp's -hf user/model[:quant] (common/download.cpp,
 * common/hf-cache.cpp at the reference version): the endpoint, the
 * branch's commit, the repo's files, the quant's file and the mmproj, and
 * the model a request names (-hf, -mu, an -m URL or a file).
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/base.h"
#include "common/params.h"
#include "remote/remote.h"

#define API_MAX_BYTES ((size_t)64 << 20)   /* the largest API reply read */

static char *dup_str(const char *s)
{
    return s ? ggfit__strndup(s, strlen(s)) : NULL;
}

static char *printf_str(const char *fmt, ...) GGFIT_PRINTF(1, 2);

static char *printf_str(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = ggfit__malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static bool is_alnum(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool ggfit__hf_token_valid(const char *t)
{
    size_t n = t ? strlen(t) : 0;
    if (n < 37 || n > 256 || strncmp(t, "hf_", 3))
        return false;
    for (size_t i = 3; i < n; i++)
        if (!is_alnum(t[i]))
            return false;
    return true;
}

/* [A-Za-z0-9_] always; [/.-] only between those; exactly one '/'. */
static bool valid_repo_id(const char *r)
{
    size_t n = strlen(r);
    int slash = 0;
    bool special = true;
    if (n == 0 || n > 256)
        return false;
    for (; *r; r++) {
        if (is_alnum(*r) || *r == '_') {
            special = false;
        } else if (*r == '/' || *r == '.' || *r == '-') {
            if (special)
                return false;
            slash += *r == '/';
            special = true;
        } else {
            return false;
        }
    }
    return !special && slash == 1;
}

static bool valid_commit(const char *c)
{
    size_t n = 0;
    for (; c[n]; n++)
        if (!isxdigit((unsigned char)c[n]))
            return false;
    return n == 40;
}

/* ---- llama.cpp's file name rules --------------------------------------------- */

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

/* get_gguf_split_info: the name without .gguf and -NNNNN-of-MMMMM (its
 * length), the shard's number and count, and the tag (upper case). */
typedef struct split_info {
    size_t prefix_len;
    int index, count;
    char tag[64];
} split_info;

static bool split_info_of(const char *path, split_info *si)
{
    memset(si, 0, sizeof *si);
    if (!ends_with(path, ".gguf"))
        return false;
    size_t n = strlen(path) - 5;
    si->index = si->count = 1;
    /* ^(.+)-([0-9]{5})-of-([0-9]{5})$, case-insensitive */
    if (n > 15 && path[n - 15] == '-' && !strncasecmp(path + n - 9, "-of-", 4)) {
        bool digits = true;
        for (size_t i = 0; i < 5; i++)
            digits = digits && isdigit((unsigned char)path[n - 14 + i]) &&
                     isdigit((unsigned char)path[n - 5 + i]);
        if (digits) {
            si->index = atoi(path + n - 14);
            si->count = atoi(path + n - 5);
            n -= 15;
        }
    }
    si->prefix_len = n;
    /* [-.]([A-Z0-9_]+)$ */
    size_t k = n;
    while (k > 0 && (is_alnum(path[k - 1]) || path[k - 1] == '_'))
        k--;
    if (k < n && k > 0 && (path[k - 1] == '-' || path[k - 1] == '.') &&
        n - k < sizeof si->tag) {
        for (size_t i = k; i < n; i++)
            si->tag[i - k] = (char)toupper((unsigned char)path[i]);
    }
    return true;
}

/* Q4_0 -> 4, F16 -> 16, Q8_K_M -> 8; 0 without digits. */
static int quant_bits(const char *path)
{
    split_info si;
    split_info_of(path, &si);
    const char *d = si.tag;
    while (*d && !isdigit((unsigned char)*d))
        d++;
    return *d ? atoi(d) : 0;
}

static bool is_model_file(const char *path)
{
    if (!ends_with(path, ".gguf"))
        return false;
    const char *f = base_name(path);
    static const char *const not_model[] = { "mmproj", "imatrix", "mtp-", "eagle3-",
                                             "dflash-", "dspark-" };
    for (size_t i = 0; i < sizeof not_model / sizeof not_model[0]; i++)
        if (strstr(f, not_model[i]))
            return false;
    return true;
}

/* Whether path holds tag followed by '.' or '-', ignoring case (llama.cpp
 * searches the regex TAG[.-]; a tag is letters, digits and '_'). */
static bool has_tag(const char *path, const char *tag)
{
    size_t t = strlen(tag);
    for (const char *p = path; *p; p++)
        if (!strncasecmp(p, tag, t) && (p[t] == '.' || p[t] == '-'))
            return true;
    return false;
}

static bool first_shard(const char *path)
{
    split_info si;
    split_info_of(path, &si);
    return si.count <= 1 || si.index == 1;
}

static const char *best_model(char **files, size_t n, const char *tag)
{
    const char *dflt[] = { "Q4_K_M", "Q8_0" };
    const char *const *tags = tag[0] ? &tag : dflt;
    size_t n_tags = tag[0] ? 1 : 2;
    for (size_t t = 0; t < n_tags; t++)
        for (size_t i = 0; i < n; i++)
            if (is_model_file(files[i]) && has_tag(files[i], tags[t]) && first_shard(files[i]))
                return files[i];
    if (!tag[0])
        for (size_t i = 0; i < n; i++)
            if (is_model_file(files[i]) && first_shard(files[i]))
                return files[i];
    return NULL;
}

/* find_best_sibling(files, model, "mmproj"): a sibling in the model's
 * folder or one above it, the deepest first, then the closest quant. */
static const char *best_mmproj(char **files, size_t n, const char *model)
{
    const char *best = NULL;
    size_t best_depth = 0;
    int best_diff = 0;
    int model_bits = quant_bits(model);
    size_t model_dir = (size_t)(base_name(model) - model);   /* "a/b/" */
    for (size_t i = 0; i < n; i++) {
        const char *f = files[i];
        if (!ends_with(f, ".gguf") || !strstr(f, "mmproj"))
            continue;
        size_t sib_dir = (size_t)(base_name(f) - f);
        /* the sibling's folders must all be the model's first folders */
        if (sib_dir > model_dir || strncmp(f, model, sib_dir))
            continue;
        size_t depth = 0;
        for (size_t k = 0; k < sib_dir; k++)
            depth += f[k] == '/';
        int diff = abs(quant_bits(f) - model_bits);
        if (!best || depth > best_depth || (depth == best_depth && diff < best_diff)) {
            best = f;
            best_depth = depth;
            best_diff = diff;
        }
    }
    return best;
}

void ggfit__quant_tag(const char *path, char tag[64])
{
    split_info si;
    split_info_of(base_name(path), &si);
    memcpy(tag, si.tag, sizeof si.tag);
}

size_t ggfit__hf_model_files(const ggfit_hf_model *m, const char *tag, const char **out,
                             uint32_t *shards, char (*tags)[64], size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < m->n_files && k < max; i++) {
        const char *f = m->files[i];
        split_info si;
        if (!is_model_file(f) || !first_shard(f) || (tag && tag[0] && !has_tag(f, tag)))
            continue;
        split_info_of(base_name(f), &si);
        out[k] = f;
        shards[k] = si.count > 0 ? (uint32_t)si.count : 1;
        memcpy(tags[k], si.tag, sizeof si.tag);
        k++;
    }
    return k;
}

/* ---- the API ------------------------------------------------------------------- */

void ggfit_hf_model_free(ggfit_hf_model *m)
{
    if (!m)
        return;
    free(m->repo);
    free(m->tag);
    free(m->commit);
    free(m->file);
    free(m->url);
    free(m->mmproj);
    free(m->mmproj_url);
    for (size_t i = 0; i < m->n_files; i++)
        free(m->files[i]);
    free(m->files);
    memset(m, 0, sizeof *m);
}

static ggfit_status api_json(const char *url, const char *repo, const ggfit_remote_options *o,
                             ggfit_remote_stats *stats, json_t **out, char **err)
{
    char *body;
    size_t len;
    long code = 0;
    *out = NULL;
    ggfit_status rc;
    char etag[256];
    uint64_t size;
    if (o->offline) {
        /* the reply kept from the last time online */
        if (!ggfit__cache_load(o, url, etag, sizeof etag, &size, (unsigned char **)&body, &len))
            return ggfit__fail(err, GGFIT_EIO, "%s: not in the cache (%s), and --offline "
                               "reads nothing else", url, o->cache_dir[0] ? o->cache_dir
                                                                          : "no cache");
        rc = GGFIT_OK;
    } else {
        rc = ggfit__http_get(url, o, API_MAX_BYTES, &body, &len, &code, stats, err);
        if (!rc)
            ggfit__cache_store(o, url, "", len, body, len);
    }
    if (rc && code == 404 && err && *err) {
        /* Hugging Face's API answers 404 for a repository it does not have */
        char *inner = *err;
        *err = NULL;
        ggfit__fail(err, rc, "%s: no such repository on %.*s (%s)", repo,
                    (int)(strstr(url, "api/models/") - url), url, inner);
        free(inner);
    }
    if (rc)
        return rc;
    json_error_t je;
    *out = json_loadb(body, len, 0, &je);
    free(body);
    if (!*out)
        return ggfit__fail(err, GGFIT_EFORMAT, "%s: not JSON: %s (line %d)", url, je.text,
                           je.line);
    return GGFIT_OK;
}

/* The main branch's commit, else the first valid branch's. */
static ggfit_status repo_commit(const char *endpoint, const char *repo,
                                const ggfit_remote_options *o, ggfit_remote_stats *stats,
                                char **commit, char **err)
{
    char *url = printf_str("%sapi/models/%s/refs", endpoint, repo);
    json_t *j;
    *commit = NULL;
    if (!url)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_status rc = api_json(url, repo, o, stats, &j, err);
    if (rc) {
        free(url);
        return rc;
    }
    const char *found = NULL;
    json_t *branches = json_object_get(j, "branches"), *b;
    size_t i;
    json_array_foreach(branches, i, b) {
        const char *name = json_string_value(json_object_get(b, "name"));
        const char *c = json_string_value(json_object_get(b, "targetCommit"));
        if (!name || !c || !valid_commit(c) || strstr(name, ".."))
            continue;
        if (!strcmp(name, "main")) {
            found = c;
            break;
        }
        if (!found)
            found = c;
    }
    if (!found)
        rc = ggfit__fail(err, GGFIT_EFORMAT, "%s: no branch with a commit in the reply", url);
    else if (!(*commit = dup_str(found)))
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    json_decref(j);
    free(url);
    return rc;
}

static ggfit_status repo_files(const char *endpoint, ggfit_hf_model *m,
                               const ggfit_remote_options *o, ggfit_remote_stats *stats,
                               char **err)
{
    char *url = printf_str("%sapi/models/%s/tree/%s?recursive=true", endpoint, m->repo,
                           m->commit);
    json_t *j;
    if (!url)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_status rc = api_json(url, m->repo, o, stats, &j, err);
    if (rc) {
        free(url);
        return rc;
    }
    if (!json_is_array(j)) {
        rc = ggfit__fail(err, GGFIT_EFORMAT, "%s: the reply is not a list of files", url);
    } else if (json_array_size(j) &&
               !(m->files = ggfit__calloc(json_array_size(j), sizeof *m->files))) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    } else {
        json_t *it;
        size_t i;
        json_array_foreach(j, i, it) {
            const char *type = json_string_value(json_object_get(it, "type"));
            const char *path = json_string_value(json_object_get(it, "path"));
            /* a path that would leave the repo is skipped, as llama.cpp does */
            if (!type || strcmp(type, "file") || !path || !*path || path[0] == '/' ||
                strstr(path, ".."))
                continue;
            if (!(m->files[m->n_files] = dup_str(path))) {
                rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
                break;
            }
            m->n_files++;
        }
    }
    json_decref(j);
    free(url);
    return rc;
}

/* "no ... in REPO; its GGUF files: a, b" */
static ggfit_status not_found(const ggfit_hf_model *m, const char *what, char **err)
{
    ggfit_sb sb = {0};
    size_t k = 0;
    for (size_t i = 0; i < m->n_files; i++)
        if (ends_with(m->files[i], ".gguf"))
            ggfit__sb_printf(&sb, "%s%s", k++ ? ", " : "", m->files[i]);
    char *list = ggfit__sb_take(&sb);
    ggfit_status rc = ggfit__fail(err, GGFIT_EIO, "%s: %s; %s%s", m->repo, what,
                                  k ? "its GGUF files: " : "it has no GGUF file",
                                  k && list ? list : "");
    free(list);
    return rc;
}

ggfit_status ggfit_hf_resolve(const char *repo_tag, const char *file,
                              const ggfit_remote_options *o, ggfit_remote_stats *stats,
                              ggfit_hf_model *out, char **err)
{
    ggfit_remote_options dflt, with;
    if (err)
        *err = NULL;
    if (!repo_tag || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_hf_resolve: NULL argument");
    memset(out, 0, sizeof *out);
    if (!o) {
        ggfit_remote_options_init(&dflt);
        o = &dflt;
    }
    /* llama.cpp sends a token only when it is one of Hugging Face's */
    with = *o;
    if (with.token && !ggfit__hf_token_valid(with.token))
        with.token = NULL;
    /* user/model[:tag]: the tag is what follows the last ':' */
    const char *colon = strchr(repo_tag, ':'), *last = strrchr(repo_tag, ':');
    size_t rlen = colon ? (size_t)(colon - repo_tag) : strlen(repo_tag);
    out->repo = ggfit__strndup(repo_tag, rlen);
    out->tag = dup_str(last ? last + 1 : "");
    char *endpoint = ggfit_hf_endpoint();
    ggfit_status rc = GGFIT_OK;
    if (!out->repo || !out->tag || !endpoint) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto out;
    }
    if (!valid_repo_id(out->repo)) {
        rc = ggfit__fail(err, GGFIT_EINVAL, "-hf %s: invalid Hugging Face repository, "
                         "expected <user>/<model>[:quant]", repo_tag);
        goto out;
    }
    if ((rc = repo_commit(endpoint, out->repo, &with, stats, &out->commit, err)) ||
        (rc = repo_files(endpoint, out, &with, stats, err))) {
        if (o->token && o->token[0] && !with.token && err && *err &&
            strstr(*err, "access denied")) {
            char *inner = *err;
            *err = NULL;
            ggfit__fail(err, rc, "%s (the token given was not sent: a Hugging Face token is "
                        "hf_ and 34 or more letters and digits)", inner);
            free(inner);
        }
        goto out;
    }
    const char *pick = NULL;
    if (file && *file) {
        for (size_t i = 0; i < out->n_files && !pick; i++)
            if (!strcmp(out->files[i], file))
                pick = out->files[i];
        if (!pick) {
            char what[600];
            snprintf(what, sizeof what, "no file '%.500s' in the repository", file);
            rc = not_found(out, what, err);
            goto out;
        }
    } else if (!(pick = best_model(out->files, out->n_files, out->tag))) {
        char what[200];
        if (out->tag[0])
            snprintf(what, sizeof what, "no GGUF file for the quant '%.100s'", out->tag);
        else
            snprintf(what, sizeof what, "no GGUF model file");
        rc = not_found(out, what, err);
        goto out;
    }
    const char *mm = best_mmproj(out->files, out->n_files, pick);
    if (!(out->file = dup_str(pick)) ||
        !(out->url = printf_str("%s%s/resolve/%s/%s", endpoint, out->repo, out->commit,
                                pick)) ||
        (mm && (!(out->mmproj = dup_str(mm)) ||
                !(out->mmproj_url = printf_str("%s%s/resolve/%s/%s", endpoint, out->repo,
                                               out->commit, mm)))))
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
out:
    free(endpoint);
    if (rc)
        ggfit_hf_model_free(out);
    return rc;
}

/* ---- the model of a request ------------------------------------------------------ */

/* Whether one of the flags names (NULL-ended) is on r's command line: llama.cpp's
 * flags ggfit takes without applying are kept by name (ignored, not_counted). */
static bool given(const ggfit_request *r, const char *const *names)
{
    for (; *names; names++) {
        for (uint32_t i = 0; i < r->n_ignored; i++)
            if (!strcmp(r->ignored[i], *names))
                return true;
        for (uint32_t i = 0; i < r->n_not_counted; i++)
            if (!strcmp(r->not_counted[i], *names))
                return true;
    }
    return false;
}

static const char *const no_mmproj[] = { "--no-mmproj", "--no-mmproj-auto", NULL };

bool ggfit__mmproj_auto(const ggfit_request *r, const char *mmproj)
{
    static const char *const own[] = { "-mm", "--mmproj", "-mmu", "--mmproj-url", NULL };
    return mmproj[0] && ggfit__serves(r->program) && !r->mmproj && !given(r, no_mmproj) &&
           !given(r, own);
}

bool ggfit__mmproj_declined(const ggfit_request *r, const char *mmproj)
{
    return mmproj[0] && ggfit__serves(r->program) && !r->mmproj && given(r, no_mmproj);
}

ggfit_status ggfit__request_mmproj(const ggfit_request *r, ggfit_gguf **out, char **err)
{
    ggfit_remote_options o;
    ggfit_remote_options_init(&o);
    o.token = r->hf_token;
    o.offline = r->offline;
    o.progress = isatty(STDERR_FILENO);
    ggfit_hf_model hf;
    ggfit_status rc = ggfit_hf_resolve(r->hf_repo, r->hf_file, &o, NULL, &hf, err);
    if (rc)
        return rc;
    if (!ggfit__hf_token_valid(o.token))
        o.token = NULL;
    rc = hf.mmproj_url ? ggfit_gguf_open_url(hf.mmproj_url, &o, NULL, out, err)
                       : ggfit__fail(err, GGFIT_EIO, "%s: the repo has no mmproj now", r->hf_repo);
    ggfit_hf_model_free(&hf);
    return rc;
}

ggfit_status ggfit__request_model(const ggfit_request *r, ggfit_model **out, char *mmproj,
                                  size_t n, char **err)
{
    ggfit_remote_options o;
    mmproj[0] = '\0';
    const char *url = r->model_url ? r->model_url : ggfit_is_url(r->model) ? r->model : NULL;
    if (!r->hf_repo && !url)
        return ggfit_model_open(r->model, out, err);
    ggfit_remote_options_init(&o);
    o.token = r->hf_token;
    o.offline = r->offline;
    o.progress = isatty(STDERR_FILENO);
    if (!r->hf_repo) {
        /* The token goes to Hugging Face only, never to another host. */
        char *endpoint = ggfit_hf_endpoint();
        if (!endpoint)
            return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        if (strncmp(url, endpoint, strlen(endpoint)) || !ggfit__hf_token_valid(o.token))
            o.token = NULL;
        free(endpoint);
        return ggfit_model_open_url(url, &o, NULL, out, err);
    }
    ggfit_hf_model hf;
    ggfit_status rc = ggfit_hf_resolve(r->hf_repo, r->hf_file, &o, NULL, &hf, err);
    if (rc)
        return rc;
    if (!ggfit__hf_token_valid(o.token))
        o.token = NULL;
    if (hf.mmproj)
        snprintf(mmproj, n, "%s", hf.mmproj);
    rc = ggfit_model_open_url(hf.url, &o, NULL, out, err);
    ggfit_hf_model_free(&hf);
    return rc;
}
