/*
 * args.c - the one loop that parses flags (args.h): a flag is looked up
 * in the table (common/llama_args.h), its value taken as its row says, and
 * the value landed where its row says (the request's fields here; llama.cpp's
 * model and context flags in params.c, the speculative ones in draft.c, the
 * projector's in mmproj.c); the flags ggfit recognises but does not apply
 * are listed in the plan's notes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/args.h"
#include "common/params.h"
#include "common/preset.h"
#include "devices/spec.h"
#include "versions/version.h"

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
    case GGFIT__AT_VS_VERSION:
        if (!(rc = ggfit_llama_version_parse(v, &r->vs, err)))
            r->vs_version = v;
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
static int lookup(const char *a, bool params_only, ggfit__flag *f, bool *negated)
{
    int row = ggfit__flag_find(a, negated);
    if (row < 0 || !ggfit__flag_row((size_t)row, f) || f->scope == GGFIT_SCOPE_TOOL)
        return -1;
    return !params_only || (lands_in_params(f) && f->scope != GGFIT_SCOPE_DRAFT) ? row : -1;
}

/* Row row given (by a flag or a variable): llama.cpp's config files yield. */
static void given(ggfit_request *r, int row)
{
    if (row >= 0 && row < GGFIT_MAX_FLAG_ROWS)
        r->rows_given[row / 64] |= (uint64_t)1 << (row % 64);
}

bool ggfit__request_row_given(const ggfit_request *r, size_t row)
{
    return row < GGFIT_MAX_FLAG_ROWS && (r->rows_given[row / 64] >> (row % 64) & 1);
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
    int row = lookup(a, !r, &f, &negated);
    if (row < 0)
        return not_ours(a, used, err);
    int nv = negated ? 0 : f.values;
    if (*i + nv >= argc)
        return ggfit__fail(err, GGFIT_EINVAL, "%s needs a value", a);
    const char *v = nv ? argv[*i + 1] : NULL;
    ggfit_status rc = r ? land(r, &f, a, !negated, v, err)
                        : ggfit__params_set(p, f.lands, a, !negated, v, err);
    if (rc)
        return rc;
    if (r) {
        note(r, &f, a, negated);
        given(r, row);
        if (ggfit__flag_versioned(&f) && r->n_versioned < GGFIT_MAX_IGNORED) {
            r->versioned[r->n_versioned][0] = a;
            r->versioned[r->n_versioned++][1] = v;
        }
    }
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

/* Row f's value v, given by name (where: the variable or the key), as
 * llama.cpp reads LLAMA_ARG_*: a bool's on/off (inverted under a negated
 * key), landed under the first name; noted nowhere. */
static ggfit_status by_name(ggfit_request *r, const ggfit__flag *f, const char *where,
                            const char *v, bool negated_key, char **err)
{
    char name[64];
    bool on = true;
    if (f->values == 0) {
        if (!ggfit__truthy(v) && !ggfit__falsey(v))
            return ggfit__fail(err, GGFIT_EINVAL, "%s=%s: expected on/off, true/false or "
                                                  "1/0", where, v);
        on = ggfit__truthy(v) != negated_key;
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
        if (v)
            given(r, (int)i);
        /* a value some versions refuse (LLAMA_ARG_LOAD_MODE=auto before
         * b10364): checked with the version, as a typed flag */
        if (v && f.value_since && r->n_versioned < GGFIT_MAX_IGNORED) {
            r->versioned[r->n_versioned][0] = f.env;
            r->versioned[r->n_versioned++][1] = v;
        }
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

/* ---- llama.cpp's config files ------------------------------------------------- */

/* llama.cpp's INI (common/preset.cpp; its lines: ggfit__ini_parse_line). A
 * section named again starts over; a key given twice keeps its last value. */
typedef struct ini_kv {
    const char *key, *value;  /* into the file's text */
    size_t key_n, value_n;
    int section;              /* 0: the default one (no header, [default]),
                                 1: [*], 2: another (a model's preset) */
    unsigned line;
} ini_kv;

enum { INI_MAX_KEYS = 256, INI_MAX_BYTES = 1 << 20 };

/* Parses text into kv (at most INI_MAX_KEYS, *n of them); 0, or the number
 * of the first line llama.cpp would not read. */
static unsigned ini_parse(const char *text, ini_kv *kv, size_t *n)
{
    int section = 0;
    unsigned line = 0;
    *n = 0;
    for (const char *p = text; *p;) {
        line++;
        size_t len = strcspn(p, "\r\n");
        ggfit__ini_line l;
        switch (ggfit__ini_parse_line(p, len, &l)) {
        case GGFIT__INI_BAD:
            return line;
        case GGFIT__INI_NOTHING:
            break;
        case GGFIT__INI_SECTION:
            section = l.n == 1 && *l.text == '*' ? 1
                      : l.n == 7 && !strncmp(l.text, "default", 7) ? 0 : 2;
            for (size_t i = 0; i < *n;)   /* a section named again starts over */
                if (kv[i].section == section && section != 2)
                    kv[i] = kv[--*n];
                else
                    i++;
            break;
        case GGFIT__INI_KEY:
            if (*n == INI_MAX_KEYS)
                return line;
            kv[(*n)++] = (ini_kv){ l.text, l.value, l.n, l.value_n, section, line };
            break;
        }
        p += len;
        if (*p == '\r')   /* "\r\n", "\n" or "\r" ends a line */
            p++;
        if (*p == '\n')
            p++;
    }
    return 0;
}

/* Appends to the note (cut, never overrun). */
static void config_note(ggfit_request *r, const char *fmt, ...) GGFIT_PRINTF(2, 3);

static void config_note(ggfit_request *r, const char *fmt, ...)
{
    size_t len = strlen(r->llama_config_note);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->llama_config_note + len, sizeof r->llama_config_note - len, fmt, ap);
    va_end(ap);
}

static unsigned program_bit(ggfit_program prog)
{
    switch (prog) {
    case GGFIT_FOR_CLI: return GGFIT_PROGRAM_CLI;
    case GGFIT_FOR_FIT_PARAMS: return GGFIT_PROGRAM_FIT_PARAMS;
    case GGFIT_FOR_BENCH: return GGFIT_PROGRAM_BENCH;
    default: return GGFIT_PROGRAM_SERVER;
    }
}

/* One key=value of a config file (path, for messages): landed as the flag
 * its key names, unless a flag or a variable gave that flag; *used (the
 * values' buffer) grows by what it keeps. */
static ggfit_status config_key(ggfit_request *r, const char *path, const ini_kv *kv,
                               size_t *used, bool *first, char **err)
{
    char key[128];
    if (kv->key_n >= sizeof key)
        return GGFIT_OK;   /* no flag's name is that long: ignored, as llama.cpp does */
    memcpy(key, kv->key, kv->key_n);
    key[kv->key_n] = 0;
    if (!strcmp(key, "version"))
        return GGFIT_OK;   /* reserved by llama.cpp */
    bool negated;
    ggfit__flag f;
    int row = ggfit__flag_find_key(key, &negated);
    uint32_t build = r->llama.rules;
    bool known = row >= 0 && ggfit__flag_row((size_t)row, &f) && f.llama &&
                 (f.programs & program_bit(r->program)) &&
                 ggfit__flag_in_version(&f, key, NULL, false, build, r->program, NULL) == GGFIT_OK;
    config_note(r, "%s%s", *first ? "" : ", ", key);
    *first = false;
    if (!known) {
        config_note(r, " ignored (not a flag of this llama.cpp program)");
        return GGFIT_OK;
    }
    if (ggfit__request_row_given(r, (size_t)row)) {
        config_note(r, " (a flag or variable given wins)");
        return GGFIT_OK;
    }
    /* the value, kept in the request: the fields it lands in point to it */
    const char *v = "1";
    if (f.values > 0 || f.negated[0]) {
        if (*used + kv->value_n + 1 > sizeof r->llama_config_values)
            return ggfit__fail(err, GGFIT_ELIMIT, "%s: the config files' values pass %zu bytes",
                               path, sizeof r->llama_config_values);
        char *dst = r->llama_config_values + *used;
        memcpy(dst, kv->value, kv->value_n);
        dst[kv->value_n] = 0;
        *used += kv->value_n + 1;
        v = dst;
        if (f.values == 0)   /* llama.cpp's is_truthy; anything else is off */
            v = ggfit__truthy(dst) ? "1" : "0";
    }
    /* a flag without a negated form is turned on whatever its value
     * (common_preset::apply_to_params calls its handler) */
    config_note(r, " = %.*s", (int)kv->value_n, kv->value);
    ggfit_status rc = by_name(r, &f, key, v, negated, err);
    if (rc) {
        char *inner = err ? *err : NULL;
        if (err)
            *err = NULL;
        rc = ggfit__fail(err, rc, "%s:%u: %s (llama.cpp stops there too)", path, kv->line,
                         inner ? inner : "bad value");
        ggfit_free(inner);
    }
    return rc;
}

/* One config file: its [*] keys, then its default ones. */
static ggfit_status config_file(ggfit_request *r, const char *path, size_t *used, char **err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return GGFIT_OK;   /* llama.cpp reads those that exist */
    char *text = ggfit__malloc(INI_MAX_BYTES + 1);
    ini_kv *kv = ggfit__malloc(INI_MAX_KEYS * sizeof *kv);
    ggfit_status rc = GGFIT_OK;
    if (!text || !kv) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto out;
    }
    size_t len = fread(text, 1, INI_MAX_BYTES + 1, f);
    if (len > INI_MAX_BYTES) {
        rc = ggfit__fail(err, GGFIT_ELIMIT, "%s: longer than %d bytes: not a llama.cpp config "
                         "file", path, INI_MAX_BYTES);
        goto out;
    }
    text[len] = 0;
    if (memchr(text, 0, len)) {
        rc = ggfit__fail(err, GGFIT_EINVAL, "%s: not text: llama.cpp stops with \"failed to "
                         "parse server config file\"", path);
        goto out;
    }
    size_t n;
    unsigned bad = ini_parse(text, kv, &n);
    if (bad) {
        rc = ggfit__fail(err, GGFIT_EINVAL, "%s:%u: not a line llama.cpp's config reads "
                         "([section], key = value, ; or # comments): it stops with \"failed to "
                         "parse server config file\"", path, bad);
        goto out;
    }
    bool first = true;
    for (int section = 1; section >= 0 && !rc; section--)
        for (size_t i = 0; i < n && !rc; i++)
            if (kv[i].section == section) {
                if (first)
                    config_note(r, "%s%s: ", r->llama_config_note[0] ? "; " : "", path);
                rc = config_key(r, path, &kv[i], used, &first, err);
            }
out:
    free(text);
    free(kv);
    fclose(f);
    return rc;
}

ggfit_status ggfit__request_config(ggfit_request *r, char **err)
{
    /* llama-bench parses its own flags, and reads no config file */
    if (r->llama_config_done || r->program == GGFIT_FOR_BENCH ||
        !ggfit__llama_has(r->llama.rules, LLAMA_CHANGE_CONFIG_INI))
        return GGFIT_OK;
    r->llama_config_done = true;
    r->llama_config_note[0] = 0;
    const char *list = r->llama_config ? r->llama_config : getenv("GGFIT_LLAMA_CONFIG");
    char own[2][1100];
    const char *paths[64];
    size_t n_paths = 0;
    char split[4096];
    if (list) {
        snprintf(split, sizeof split, "%s", list);
        for (char *p = split, *save = NULL; n_paths < 64 && (p = strtok_r(p, ":", &save));
             p = NULL)
            paths[n_paths++] = p;
    } else {
        /* common/arg.cpp: the system's, then the user's (fs_get_config_directory) */
        paths[n_paths++] = "/etc/llama.cpp/config.ini";
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(own[0], sizeof own[0], "%s%sllama.cpp/config.ini", xdg,
                     xdg[strlen(xdg) - 1] == '/' ? "" : "/");
        else if (home && *home)
            snprintf(own[0], sizeof own[0], "%s/.config/llama.cpp/config.ini", home);
        else
            own[0][0] = 0;
        if (own[0][0])
            paths[n_paths++] = own[0];
    }
    size_t used = 0;
    for (size_t i = 0; i < n_paths; i++) {
        ggfit_status rc = config_file(r, paths[i], &used, err);
        if (rc)
            return rc;
    }
    return GGFIT_OK;
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
