/*
 * args.c - the one loop that parses flags (args.h): a flag is looked up
 * in the table (common/llama_args.h), its value taken as its row says, and
 * the value landed where its row says (the request's fields here; llama.cpp's
 * model and context flags in params.c, the speculative ones in draft.c, the
 * projector's in mmproj.c); the flags ggfit recognises but does not apply
 * are listed in the plan's notes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/args.h"
#include "common/params.h"
#include "devices/spec.h"

/* ---- the request's landings ----------------------------------------------- */

/* -fitt: MiB per device, comma-separated, as llama.cpp's --fit-target. */
static ggfit_status parse_margins(ggfit_fit_options *fo, const char *v, char **err)
{
    static const char bad_margins[] = "-fitt: expected MiB values like 1024 or 512,2048";
    fo->n_margins = 0;
    while (*v) {
        char item[64];
        size_t len = strcspn(v, ",");
        if (len == 0 || len >= sizeof item || fo->n_margins >= GGFIT_MAX_DEVICES)
            return ggfit__fail(err, GGFIT_EINVAL, "%s", bad_margins);
        memcpy(item, v, len);
        item[len] = '\0';
        if (ggfit_size_parse(item, &fo->margin[fo->n_margins++]) != GGFIT_OK)
            return ggfit__fail(err, GGFIT_EINVAL, "%s", bad_margins);
        v += len + (v[len] == ',');
    }
    return GGFIT_OK;
}

static ggfit_status on_off(const char *a, const char *v, bool *on, char **err)
{
    if (strcmp(v, "on") && strcmp(v, "off"))
        return ggfit__fail(err, GGFIT_EINVAL, "%s: expected on or off, got '%.*s%s'", a,
                           GGFIT__CLIP(v));
    *on = !strcmp(v, "on");
    return GGFIT_OK;
}

/* -m FILE|URL, -mu URL: a name, and a URL of a scheme ggfit reads. */
static ggfit_status model_source(const char *a, const char *v, char **err)
{
    if (!v[0])
        return ggfit__fail(err, GGFIT_EINVAL, "%s: empty file name", a);
    static const char scheme_chars[] = "abcdefghijklmnopqrstuvwxyz"
                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-";
    const char *scheme = strstr(v, "://");
    if (scheme && scheme > v && !ggfit_is_url(v) &&
        strspn(v, scheme_chars) == (size_t)(scheme - v))
        return ggfit__fail(err, GGFIT_EINVAL, "%s %.*s%s: only http and https URLs (or a local "
                           "file)", a, GGFIT__CLIP(v));
    return GGFIT_OK;
}

static ggfit_status request_set(ggfit_request *r, ggfit__flag_at at, const char *a,
                                const char *v, char **err)
{
    ggfit_status rc = GGFIT_OK;
    bool on;
    switch (at) {
    case GGFIT__AT_MODEL:
        if ((rc = model_source(a, v, err)))
            return rc;
        r->model = v;
        break;
    case GGFIT__AT_HF_REPO:
        r->hf_repo = v;
        break;
    case GGFIT__AT_HF_FILE:
        r->hf_file = v;
        break;
    case GGFIT__AT_HF_TOKEN:
        r->hf_token = v;
        break;
    case GGFIT__AT_MODEL_URL:
        if ((rc = model_source(a, v, err)))
            return rc;
        r->model_url = v;
        break;
    case GGFIT__AT_OFFLINE:
        r->offline = true;
        break;
    case GGFIT__AT_GPU:
        if (!r->gpu)
            r->gpu = v;
        else if (r->n_gpu_more < GGFIT_MAX_DEVICES)
            r->gpu_more[r->n_gpu_more++] = v;
        else
            rc = ggfit__fail(err, GGFIT_EINVAL, "--gpu: more than %d devices",
                             GGFIT_MAX_DEVICES);
        break;
    case GGFIT__AT_RPC:
        r->rpc = v;
        break;
    case GGFIT__AT_HOST_MEM:
        if ((rc = ggfit__sizes_have_units(a, v, err)))
            return rc;
        r->host_mem = v;
        break;
    case GGFIT__AT_CPU:
        r->cpu = v;   /* parsed with the devices (devices/order.c) */
        break;
    case GGFIT__AT_FIT_PRINT:
        if (!(rc = on_off(a, v, &on, err)))
            r->print_memory = on;
        break;
    case GGFIT__AT_FOR: {
        static const struct { const char *name; ggfit_program prog; } progs[] = {
            { "server", GGFIT_FOR_SERVER }, { "cli", GGFIT_FOR_CLI },
            { "fit-params", GGFIT_FOR_FIT_PARAMS }, { "bench", GGFIT_FOR_BENCH },
        };
        size_t k = 0;
        while (k < 4 && strcmp(v, progs[k].name))
            k++;
        if (k == 4)
            return ggfit__fail(err, GGFIT_EINVAL, "--for: expected server, cli, fit-params or "
                                                  "bench, got '%.*s%s'", GGFIT__CLIP(v));
        r->program = progs[k].prog;
        break;
    }
    case GGFIT__AT_PRINT_MEMORY:
        r->print_memory = true;
        break;
    case GGFIT__AT_FIT_AROUND:
        r->fit.fit_around = true;
        break;
    case GGFIT__AT_FIT:
        if (!(rc = on_off(a, v, &on, err)))
            r->fit.check_only = !on;
        break;
    case GGFIT__AT_FIT_TARGET:
        rc = parse_margins(&r->fit, v, err);
        break;
    case GGFIT__AT_FIT_CTX: {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (*end || end == v || v[0] == '-')
            return ggfit__fail(err, GGFIT_EINVAL, "-fitc: expected a context size, got "
                               "'%.*s%s'", GGFIT__CLIP(v));
        if (errno == ERANGE || n > UINT32_MAX)
            return ggfit__fail(err, GGFIT_EINVAL, "-fitc: %.*s%s is too large (at most %u)",
                               GGFIT__CLIP(v), UINT32_MAX);
        r->fit.n_ctx_min = (uint32_t)n;
        break;
    }
    case GGFIT__AT_LLAMA_VERSION:
        if (!(rc = ggfit_llama_version_parse(v, &r->llama, err))) {
            r->llama_version = v;
            r->params.llama_build = r->draft.llama_build = r->llama.rules;
        }
        break;
    case GGFIT__AT_LLAMA_BIN:
        r->llama_bin = v;
        break;
    case GGFIT__AT_DETECT:
        r->detect = true;
        break;
    case GGFIT__AT_LLAMA_SERVER:
        r->llama_server = v;
        break;
    case GGFIT__AT_CACHE_RAM: {
        /* llama-server's prompt cache: counted with --for server, noted
         * as not counted otherwise */
        char *end;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (*end || end == v || n < -1)
            return ggfit__fail(err, GGFIT_EINVAL, "%s: expected MiB, 0 or -1, got '%.*s%s'", a,
                               GGFIT__CLIP(v));
        if (errno == ERANGE || n > INT32_MAX)
            return ggfit__fail(err, GGFIT_EINVAL, "%s: %.*s%s is too large (at most %d)", a,
                               GGFIT__CLIP(v), INT32_MAX);
        r->cache_ram_mib = (int32_t)n;
        break;
    }
    default:
        break;
    }
    return rc;
}

/* ---- the loop -------------------------------------------------------------- */

static bool lands_in_params(const ggfit__flag *f)
{
    return f->lands >= GGFIT__AT_PARAMS_FIRST && f->lands <= GGFIT__AT_PARAMS_LAST;
}

/* Flag a of row f, with value v (NULL for none), where the row says. */
static ggfit_status land(ggfit_request *r, const ggfit__flag *f, const char *a, bool on,
                         const char *v, char **err)
{
    ggfit__flag_at at = f->lands;
    if (lands_in_params(f))
        return ggfit__params_set(f->scope == GGFIT_SCOPE_DRAFT ? &r->draft : &r->params, at, a,
                                 on, v, err);
    if (at >= GGFIT__AT_REQUEST_FIRST && at <= GGFIT__AT_REQUEST_LAST)
        return request_set(r, at, a, v, err);
    if (at >= GGFIT__AT_DRAFT_FIRST && at <= GGFIT__AT_DRAFT_LAST)
        return ggfit__draft_set(r, at, a, on, v, err);
    if (at >= GGFIT__AT_MMPROJ_FIRST && at <= GGFIT__AT_MMPROJ_LAST)
        return ggfit__mmproj_set(r, at, a, on, v, err);
    return GGFIT_OK;   /* GGFIT__AT_NOTE: recognised, and noted */
}

/* The plan's notes on a flag typed (a, a pointer into argv): those ggfit
 * does not count, and those without effect on memory. The plan leaves out
 * those it does count after all (--for server, request.c notes()). */
static void note(ggfit_request *r, const ggfit__flag *f, const char *a, bool negated)
{
    ggfit__flag_memory m = f->memory;
    if (m == GGFIT__MEM_UNCOUNTED_OFF)
        m = negated ? GGFIT__MEM_UNCOUNTED : GGFIT__MEM_NONE;
    if (m == GGFIT__MEM_UNCOUNTED && r->n_not_counted < GGFIT_MAX_IGNORED)
        r->not_counted[r->n_not_counted++] = a;
    else if (m == GGFIT__MEM_NONE && r->n_ignored < GGFIT_MAX_IGNORED)
        r->ignored[r->n_ignored++] = a;
}

/* Whether a is a flag the library's parsers take (params_only: one that
 * lands in ggfit_params, ggfit_params_parse_arg's); its row in *f, and
 * whether a is a negated name in *negated. */
static bool lookup(const char *a, bool params_only, ggfit__flag *f, bool *negated)
{
    int row = ggfit__flag_find(a, negated);
    if (row < 0 || !ggfit__flag_row((size_t)row, f) || f->scope == GGFIT_SCOPE_TOOL)
        return false;
    return !params_only || (lands_in_params(f) && f->scope != GGFIT_SCOPE_DRAFT);
}

/* Not a flag of ours: the caller's to judge (used), or an error. */
static ggfit_status not_ours(const char *a, bool *used, char **err)
{
    if (!used)
        return ggfit__fail(err, GGFIT_EINVAL, "unknown argument '%s'", a);
    *used = false;
    return GGFIT_OK;
}

/* The step of every command-line parser: the flag at argv[*i] looked up,
 * its values taken and landed in r, and noted; or, r NULL, landed in p
 * (ggfit_params_parse_arg: llama.cpp's model and context flags alone). */
static ggfit_status take(ggfit_request *r, ggfit_params *p, int argc, char **argv, int *i,
                         bool *used, char **err)
{
    const char *a = argv[*i];
    ggfit__flag f;
    bool negated;
    if (used)
        *used = true;
    if (!lookup(a, !r, &f, &negated))
        return not_ours(a, used, err);
    int nv = negated ? 0 : f.values;
    if (*i + nv >= argc)
        return ggfit__fail(err, GGFIT_EINVAL, "%s needs a value", a);
    const char *v = nv ? argv[*i + 1] : NULL;
    ggfit_status rc = r ? land(r, &f, a, !negated, v, err)
                        : ggfit__params_set(p, f.lands, a, !negated, v, err);
    if (rc)
        return rc;
    if (r)
        note(r, &f, a, negated);
    *i += 1 + nv;
    return GGFIT_OK;
}

ggfit_status ggfit_params_parse_arg(ggfit_params *p, int argc, char **argv, int *i, bool *used,
                                    char **err)
{
    return take(NULL, p, argc, argv, i, used, err);
}

ggfit_status ggfit_request_parse_arg(ggfit_request *r, int argc, char **argv, int *i,
                                     bool *used, char **err)
{
    return take(r, NULL, argc, argv, i, used, err);
}

/* ---- values by name: LLAMA_ARG_* and presets -------------------------------- */

static bool truthy(const char *v)
{
    return !strcmp(v, "on") || !strcmp(v, "enabled") || !strcmp(v, "true") || !strcmp(v, "1");
}

static bool falsey(const char *v)
{
    return !strcmp(v, "off") || !strcmp(v, "disabled") || !strcmp(v, "false") ||
           !strcmp(v, "0");
}

/* Row f's value v, given by name (where: the variable or the key), as
 * llama.cpp reads LLAMA_ARG_*: a bool's on/off (inverted under a negated
 * key), landed under the first name; noted nowhere. */
static ggfit_status by_name(ggfit_request *r, const ggfit__flag *f, const char *where,
                            const char *v, bool negated_key, char **err)
{
    char name[64];
    bool on = true;
    if (f->values == 0) {
        if (!truthy(v) && !falsey(v))
            return ggfit__fail(err, GGFIT_EINVAL, "%s=%s: expected on/off, true/false or "
                                                  "1/0", where, v);
        on = truthy(v) != negated_key;
        if (!on && !f->negated[0])
            return GGFIT_OK;   /* off, and no negated form: the default */
    }
    const char *a = ggfit__flag_first(on ? f->names : f->negated, name, sizeof name);
    ggfit_status rc = f->values == 2 ? ggfit__fail(err, GGFIT_EINVAL, "%s needs a value", a)
                                     : land(r, f, a, on, f->values ? v : NULL, err);
    if (rc) {
        /* say where the value came from */
        char *inner = err ? *err : NULL;
        if (err)
            *err = NULL;
        rc = ggfit__fail(err, rc, "%s: %s", where, inner ? inner : "bad value");
        ggfit_free(inner);
    }
    return rc;
}

ggfit_status ggfit_request_env(ggfit_request *r, char **err)
{
    if (err)
        *err = NULL;
    ggfit__flag f;
    /* in the table's order, which is llama.cpp's (common_params_parse_ex
     * reads them first) */
    for (size_t i = 0; ggfit__flag_row(i, &f); i++) {
        if (!f.env[0])
            continue;
        const char *v = getenv(f.env);
        if (f.negated[0]) {
            /* llama.cpp also reads LLAMA_ARG_NO_X for a flag with a --no- form */
            char neg_env[96];
            const char *tail = strncmp(f.env, "LLAMA_ARG_", 10) ? f.env : f.env + 10;
            snprintf(neg_env, sizeof neg_env, "LLAMA_ARG_NO_%s", tail);
            if (getenv(neg_env))
                v = "0";
        }
        ggfit_status rc = v ? by_name(r, &f, f.env, v, false, err) : GGFIT_OK;
        if (rc)
            return rc;
        if (v && r->n_from_env < GGFIT_MAX_IGNORED)   /* the plan's text names it */
            r->from_env[r->n_from_env++] = f.env;
    }
    return GGFIT_OK;
}

ggfit_status ggfit__request_preset(ggfit_request *r, const char *key, const char *value,
                                   char **err)
{
    ggfit__flag f;
    bool negated;
    if (err)
        *err = NULL;
    int row = ggfit__flag_find_key(key, &negated);
    if (row < 0 || !ggfit__flag_row((size_t)row, &f) || f.scope == GGFIT_SCOPE_TOOL)
        return ggfit__fail(err, GGFIT_EINVAL, "unknown preset key '%s'", key);
    return by_name(r, &f, key, value, negated, err);
}

/* ---- a pasted command line --------------------------------------------------- */

/* Splits line in place into words (quotes group and are dropped), at most
 * max; their count, or -1 past max or at an unclosed quote. */
static int split_words(char *line, char **words, int max)
{
    int n = 0;
    char *s = line, *o = line;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
            s++;
        if (!*s)
            break;
        if (n == max)
            return -1;
        words[n++] = o;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
            if (*s == '"' || *s == '\'') {
                char q = *s++;
                while (*s && *s != q)
                    *o++ = *s++;
                if (!*s)
                    return -1;
                s++;
            } else {
                *o++ = *s++;
            }
        }
        bool end = !*s;
        *o++ = '\0';
        if (!end)
            s++;
        /* o never passes s: a word is written where it was read, or before */
    }
    return n;
}

ggfit_status ggfit__request_parse_line(ggfit_request *r, char *line, char **words, int max,
                                       char **err)
{
    if (err)
        *err = NULL;
    int n = split_words(line, words, max);
    if (n < 0)
        return ggfit__fail(err, GGFIT_EINVAL, "a command line of more than %d words, or an "
                                              "unclosed quote", max);
    int i = 0;
    if (n > 0 && words[0][0] != '-') {
        /* llama-bench's flags are its own parser's (ggfit_bench_parse_arg) */
        ggfit_program prog;
        if (!ggfit_program_named(words[0], &prog) || prog == GGFIT_FOR_BENCH)
            return ggfit__fail(err, GGFIT_EINVAL, "'%s': expected llama-server, llama-cli or "
                                                  "llama-fit-params", words[0]);
        r->program = prog;
        i = 1;
    }
    while (i < n) {
        ggfit_status rc = ggfit_request_parse_arg(r, n, words, &i, NULL, err);
        if (rc)
            return rc;
    }
    return GGFIT_OK;
}
