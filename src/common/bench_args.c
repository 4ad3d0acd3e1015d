/*
 * bench_args.c - llama-bench's command line (tools/llama-bench/
 * llama-bench.cpp, parse_cmd_params), so that a pasted llama-bench line is
 * planned as llama-bench runs it. Its flags take comma lists (numbers also
 * as ranges, first-last[+step|*mult]) and may be repeated; every
 * combination of the values is one instance (get_cmd_params_instances, in
 * its loop order), and each instance makes a test per -p, -n and -pg. The
 * values are applied to the flags as llama.cpp's common flags (where the
 * rest of ggfit lands them: common/params.c, by the table's landings), so
 * that a value means here what it means everywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/args.h"
#include "common/bench_args.h"

/* How a flag's values are read. */
enum kind {
    K_UINT,    /* a comma list of numbers (-fitt, -fitc: no ranges) */
    K_RANGE,   /* numbers and ranges, not negative */
    K_SRANGE,  /* numbers and ranges, a negative first allowed (-ngl) */
    K_WORD,    /* a comma list of words */
    K_BOOL,    /* a comma list of 0 and 1 */
    K_GROUP,   /* -ot: a comma list of groups, ';' inside a group */
    K_PAIR,    /* -pg: one "pp,tg" pair per flag */
};

/* The lists, in llama-bench's order of combination (the loops of
 * get_cmd_params_instances, outermost first; the tests last). label: no
 * effect on memory or on ggfit's speeds, kept for the rows it makes. */
enum {
    L_FITT, L_FITC, L_NGL, L_NCMOE, L_SM, L_LM, L_MG, L_DEV, L_TS, L_OT, L_NOH, L_EMBD, L_NOPO,
    L_NB, L_NUB, L_CTK, L_CTV, L_NKVO, L_FA, L_T, L_CPU_MASK, L_CPU_STRICT, L_DEPTH, L_POLL,
    L_PROMPT, L_GEN, L_PG,
};

static const struct list_flag {
    const char *names;        /* comma-separated */
    enum kind kind;
    bool label;               /* no effect on memory or on ggfit's speed */
    const char *dflt;         /* llama-bench's default (cmd_params_defaults) */
} flags[] = {
    [L_FITT] = { "-fitt,--fit-target", K_UINT, false, "0" },
    [L_FITC] = { "-fitc,--fit-ctx", K_UINT, false, "0" },
    [L_NGL] = { "-ngl,--n-gpu-layers", K_SRANGE, false, "-1" },
    [L_NCMOE] = { "-ncmoe,--n-cpu-moe", K_RANGE, false, "0" },
    [L_SM] = { "-sm,--split-mode", K_WORD, false, "layer" },
    [L_LM] = { "-lm,--load-mode,-mmp,--mmap,-dio,--direct-io", K_WORD, false, "mmap" },
    [L_MG] = { "-mg,--main-gpu", K_RANGE, false, "0" },
    [L_DEV] = { "-dev,--device", K_WORD, true, "auto" },
    [L_TS] = { "-ts,--tensor-split", K_WORD, false, "0" },
    [L_OT] = { "-ot,--override-tensor", K_GROUP, false, "" },
    [L_NOH] = { "--no-host", K_BOOL, false, "0" },
    [L_EMBD] = { "-embd,--embeddings", K_BOOL, false, "0" },
    [L_NOPO] = { "-nopo,--no-op-offload", K_BOOL, true, "0" },
    [L_NB] = { "-b,--batch-size", K_RANGE, false, "2048" },
    [L_NUB] = { "-ub,--ubatch-size", K_RANGE, false, "512" },
    [L_CTK] = { "-ctk,--cache-type-k", K_WORD, false, "f16" },
    [L_CTV] = { "-ctv,--cache-type-v", K_WORD, false, "f16" },
    [L_NKVO] = { "-nkvo,--no-kv-offload", K_BOOL, false, "0" },
    [L_FA] = { "-fa,--flash-attn", K_WORD, false, "auto" },
    [L_T] = { "-t,--threads", K_RANGE, false, "" },
    [L_CPU_MASK] = { "-C,--cpu-mask", K_WORD, true, "0x0" },
    [L_CPU_STRICT] = { "--cpu-strict", K_BOOL, true, "0" },
    [L_DEPTH] = { "-d,--n-depth", K_RANGE, false, "0" },
    [L_POLL] = { "--poll", K_RANGE, true, "50" },
    [L_PROMPT] = { "-p,--n-prompt", K_RANGE, false, "512" },
    [L_GEN] = { "-n,--n-gen", K_RANGE, false, "128" },
    [L_PG] = { "-pg", K_PAIR, false, "" },
};
_Static_assert(sizeof flags / sizeof flags[0] == GGFIT_BENCH_LISTS, "one row per list");

/* Flags of llama-bench's that change nothing ggfit plans or predicts. */
static const struct { const char *names; int values; } plain[] = {
    { "-r,--repetitions", 1 }, { "--prio", 1 }, { "--delay", 1 }, { "-o,--output", 1 },
    { "-oe,--output-err", 1 }, { "--numa", 1 }, { "-v,--verbose", 0 }, { "--progress", 0 },
    { "--no-warmup", 0 },
};

/* Whether a is one of the comma-separated names (llama-bench reads '_' in
 * a --long flag as '-'). */
static bool named(const char *names, const char *a)
{
    char norm[64];
    size_t n = strlen(a);
    if (n >= sizeof norm)
        return false;
    memcpy(norm, a, n + 1);
    for (size_t k = 2; !strncmp(norm, "--", 2) && k < n; k++)
        if (norm[k] == '_')
            norm[k] = '-';
    for (const char *p = names; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, norm, n))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

/* Whether f is one of the flags of the model's source and the machine that
 * ggfit takes as ggfit_request_parse_arg does (-hf, -hff, -hft, --offline,
 * --gpu, --host-mem, --rpc). */
static bool machine_or_model(const char *f)
{
    bool negated;
    ggfit__flag row;
    int k = ggfit__flag_find(f, &negated);
    if (k < 0 || !ggfit__flag_row((size_t)k, &row))
        return false;
    switch (row.lands) {
    case GGFIT__AT_HF_REPO: case GGFIT__AT_HF_FILE: case GGFIT__AT_HF_TOKEN:
    case GGFIT__AT_OFFLINE: case GGFIT__AT_GPU: case GGFIT__AT_HOST_MEM: case GGFIT__AT_RPC:
        return true;
    default:
        return false;
    }
}

void ggfit_bench_args_init(ggfit_bench_args *a)
{
    memset(a, 0, sizeof *a);
    a->reps = 5;
}

static ggfit_status add_given(ggfit_bench_args *a, int list, const char *flag, const char *v,
                              char **err)
{
    ggfit_bench_list *l = &a->lists[list];
    if (l->n_given >= GGFIT_BENCH_MAX_GIVEN)
        return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s: given more than %d times", flag,
                           GGFIT_BENCH_MAX_GIVEN);
    l->given[l->n_given] = v;
    l->flag[l->n_given++] = flag;
    return GGFIT_OK;
}

ggfit_status ggfit_bench_parse_arg(ggfit_bench_args *a, ggfit_request *r, int argc, char **argv,
                                   int *i, bool *used, char **err)
{
    const char *f = argv[*i];
    *used = true;
    if (err)
        *err = NULL;
    if (named("-m,--model", f)) {
        if (*i + 1 >= argc)
            return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s needs a value", f);
        /* llama-bench benchmarks each of a comma list of models in turn */
        if (strchr(argv[*i + 1], ',') || a->n_models++)
            return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s: one model at a time (plan "
                                                  "each line of them on its own)", f);
        r->model = argv[*i + 1];
        *i += 2;
        return GGFIT_OK;
    }
    if (!strcmp(f, "-rpc")) {   /* llama-bench's short name of --rpc */
        if (*i + 1 >= argc)
            return ggfit__fail(err, GGFIT_EINVAL, "llama-bench -rpc needs a value");
        r->rpc = argv[++*i];
        (*i)++;
        return GGFIT_OK;
    }
    if (machine_or_model(f))
        return ggfit_request_parse_arg(r, argc, argv, i, NULL, err);
    for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++)
        if (named(plain[k].names, f)) {
            if (*i + plain[k].values >= argc)
                return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s needs a value", f);
            if (named("-r,--repetitions", f)) {
                char *end;
                long n = strtol(argv[*i + 1], &end, 10);
                if (*end || end == argv[*i + 1] || n < 1 || n > 1000000)
                    return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s: expected a count, "
                                                          "got '%s'", f, argv[*i + 1]);
                a->reps = (int32_t)n;
            }
            if (a->n_ignored < GGFIT_MAX_IGNORED)
                a->ignored[a->n_ignored++] = f;
            *i += 1 + plain[k].values;
            return GGFIT_OK;
        }
    for (int k = 0; k < GGFIT_BENCH_LISTS; k++)
        if (named(flags[k].names, f)) {
            if (*i + 1 >= argc)
                return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s needs a value", f);
            /* -mg sets the list rather than adding to it, in llama-bench */
            if (k == L_MG)
                a->lists[k].n_given = 0;
            ggfit_status rc = add_given(a, k, f, argv[*i + 1], err);
            if (rc)
                return rc;
            if (flags[k].label && !(k == L_CPU_MASK || k == L_CPU_STRICT ||
                                    k == L_POLL) &&
                a->n_not_counted < GGFIT_MAX_IGNORED)
                a->not_counted[a->n_not_counted++] = f;
            else if (flags[k].label && a->n_ignored < GGFIT_MAX_IGNORED)
                a->ignored[a->n_ignored++] = f;
            *i += 2;
            return GGFIT_OK;
        }
    *used = false;
    return GGFIT_OK;
}

/* ---- the values of a list --------------------------------------------------- */

/* Reads "first[-last[(+|*)step]]" at *s (parse_int_range). */
static ggfit_status range_of(const char *flag, const char *v, const char **s, bool negative,
                             ggfit__bench_vals *out, char **err)
{
    char *end;
    long first = strtol(*s, &end, 10), last, step = 1;
    char op = '+';
    if (end == *s || (first < 0 && !negative) || (**s == '+'))
        goto bad;
    last = first;
    if (*end == '-') {
        const char *t = end + 1;
        last = strtol(t, &end, 10);
        if (end == t || *t == '-' || *t == '+')
            goto bad;
        if (*end == '+' || *end == '*') {
            op = *end;
            t = end + 1;
            step = strtol(t, &end, 10);
            if (end == t || *t == '-' || *t == '+')
                goto bad;
        }
    }
    if (*end && *end != ',')
        goto bad;
    *s = *end ? end + 1 : end;
    for (long x = first; x <= last;) {
        if (out->n >= GGFIT__BENCH_MAX_VALUES)
            return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s %s: more than %d values", flag,
                               v, GGFIT__BENCH_MAX_VALUES);
        snprintf(out->v[out->n++], sizeof out->v[0], "%ld", x);
        long prev = x;
        x = op == '+' ? x + step : x * step;
        if (x <= prev)   /* a step that goes nowhere: llama-bench's "invalid range" */
            goto bad;
    }
    return GGFIT_OK;
bad:
    return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s: expected numbers or ranges like "
                                          "512,1024 or 256-2048*2, got '%s'", flag, v);
}

ggfit_status ggfit__bench_values(const ggfit_bench_args *a, int list, ggfit__bench_vals *out,
                                 char **err)
{
    const ggfit_bench_list *l = &a->lists[list];
    const struct list_flag *lf = &flags[list];
    memset(out, 0, sizeof *out);
    out->given = l->n_given > 0;
    if (!l->n_given) {
        if (lf->dflt[0] || list == L_OT)
            snprintf(out->v[out->n++], sizeof out->v[0], "%s", lf->dflt);
        return GGFIT_OK;
    }
    for (uint32_t g = 0; g < l->n_given; g++) {
        const char *v = l->given[g], *s = v, *flag = l->flag[g];
        if (lf->kind == K_PAIR) {
            char *e1, *e2;
            long pp = strtol(v, &e1, 10), tg = *e1 == ',' ? strtol(e1 + 1, &e2, 10) : -1;
            if (*e1 != ',' || *e2 || e1 == v || e2 == e1 + 1 || pp < 0 || tg < 0)
                return ggfit__fail(err, GGFIT_EINVAL, "llama-bench -pg: expected pp,tg like "
                                                      "512,128, got '%s'", v);
            if (out->n >= GGFIT__BENCH_MAX_VALUES)
                return ggfit__fail(err, GGFIT_EINVAL, "llama-bench -pg: more than %d pairs",
                                   GGFIT__BENCH_MAX_VALUES);
            snprintf(out->v[out->n++], sizeof out->v[0], "%ld,%ld", pp, tg);
            continue;
        }
        if (lf->kind == K_RANGE || lf->kind == K_SRANGE) {
            while (*s) {
                ggfit_status rc = range_of(flag, v, &s, lf->kind == K_SRANGE, out, err);
                if (rc)
                    return rc;
            }
            continue;
        }
        /* a comma list: words, 0/1, numbers or -ot's groups */
        do {
            size_t len = strcspn(s, ",");
            if (out->n >= GGFIT__BENCH_MAX_VALUES || len >= sizeof out->v[0])
                return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s %.*s: too many or too long "
                                   "values", flag, (int)(len < 200 ? len : 200), v);
            char *w = out->v[out->n++];
            memcpy(w, s, len);
            w[len] = '\0';
            bool bad = false;
            if (lf->kind == K_BOOL)
                bad = strcmp(w, "0") && strcmp(w, "1");
            else if (lf->kind == K_UINT)
                bad = !len || strspn(w, "0123456789") != len;
            else if (lf->kind == K_WORD)
                bad = !len;
            if (bad)
                return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s: bad value '%s' in '%s'%s",
                                   flag, w, v, lf->kind == K_BOOL ? " (expected 0 or 1)" : "");
            /* -mmp and -dio give 0 or 1, as load modes */
            if (named("-mmp,--mmap", flag) || named("-dio,--direct-io", flag)) {
                if (strcmp(w, "0") && strcmp(w, "1"))
                    return ggfit__fail(err, GGFIT_EINVAL, "llama-bench %s: expected 0 or 1, got "
                                                          "'%s'", flag, w);
                snprintf(w, sizeof out->v[0], "%s",
                         w[0] == '0' ? "none" : named("-mmp,--mmap", flag) ? "mmap" : "dio");
            }
            s += len;
        } while (*s++ == ',');
    }
    return GGFIT_OK;
}

/* ---- instances ---------------------------------------------------------------- */

ggfit_status ggfit__bench_lists(const ggfit_bench_args *a, ggfit__bench_vals *vals,
                                size_t *n_instances, char **err)
{
    size_t n = 1;
    for (int k = 0; k < GGFIT_BENCH_LISTS; k++) {
        ggfit_status rc = ggfit__bench_values(a, k, &vals[k], err);
        if (rc)
            return rc;
        if (k < L_PROMPT) {
            n *= vals[k].n ? vals[k].n : 1;
            if (n > GGFIT_BENCH_MAX_TESTS)
                return ggfit__fail(err, GGFIT_EINVAL, "llama-bench: the flags' values combine "
                                   "into more than %d runs; plan fewer at a time",
                                   GGFIT_BENCH_MAX_TESTS);
        }
    }
    *n_instances = n;
    return GGFIT_OK;
}

/* One of llama.cpp's common flags (and its value) into p, as the rest of
 * ggfit lands it (common/params.c), under the name a plan prints it with
 * (for messages); on false: its negated form (-nkvo). */
static ggfit_status apply(ggfit_params *p, ggfit__flag_at at, bool on, const char *v, char **err)
{
    return ggfit__params_set(p, at, ggfit__flag_printed(at, false), on, v, err);
}

/* llama-bench's words for true, false and auto (common_arg_utils). */
static const char *fa_word(const char *v)
{
    if (!strcmp(v, "on") || !strcmp(v, "enabled") || !strcmp(v, "true") || !strcmp(v, "1"))
        return "on";
    if (!strcmp(v, "off") || !strcmp(v, "disabled") || !strcmp(v, "false") || !strcmp(v, "0"))
        return "off";
    if (!strcmp(v, "auto") || !strcmp(v, "-1"))
        return "auto";
    return NULL;
}

/* Value v of list k applied to p (as llama-bench's to_llama_mparams and
 * to_llama_cparams set them). */
static ggfit_status apply_value(int k, const char *v, ggfit_params *p, ggfit__bench_inst *in,
                                char **err)
{
    char buf[GGFIT__BENCH_VALUE_LEN];
    ggfit_status rc = GGFIT_OK;
    switch (k) {
    case L_FITT:
        in->fit_margin_mib = strtoull(v, NULL, 10);
        break;
    case L_FITC:
        in->fit_min_ctx = (uint32_t)strtoul(v, NULL, 10);
        break;
    case L_NGL:   /* llama.cpp's -1 (its default) is every layer */
        rc = apply(p, GGFIT__AT_NGL, true, v[0] == '-' ? "all" : v, err);
        break;
    case L_NCMOE:
        rc = apply(p, GGFIT__AT_N_CPU_MOE, true, v, err);
        break;
    case L_SM:
        if (!strcmp(v, "tensor"))
            return ggfit__fail(err, GGFIT_EINVAL, "llama-bench -sm tensor: ggfit plans the "
                                                  "none, layer and row splits only");
        rc = apply(p, GGFIT__AT_SPLIT_MODE, true, v, err);
        break;
    case L_LM:   /* what is mapped stays the file's; the rest is read into buffers */
        if (!strcmp(v, "mmap") || !strcmp(v, "mmap+mlock"))
            p->use_mmap = true;
        else if (!strcmp(v, "none") || !strcmp(v, "mlock") || !strcmp(v, "dio"))
            p->use_mmap = false;
        else
            return ggfit__fail(err, GGFIT_EINVAL, "llama-bench -lm: expected none, mmap, mlock, "
                                                  "mmap+mlock or dio, got '%s'", v);
        break;
    case L_MG:
        rc = apply(p, GGFIT__AT_MAIN_GPU, true, v, err);
        break;
    case L_TS:   /* "3/1" or "3;1" per instance */
        if (!strcmp(v, "0"))
            break;
        snprintf(buf, sizeof buf, "%s", v);
        for (char *c = buf; *c; c++)
            if (*c == ';')
                *c = '/';
        rc = apply(p, GGFIT__AT_TENSOR_SPLIT, true, buf, err);
        break;
    case L_OT:   /* a group: "pattern=buffer;pattern=buffer" */
        if (!v[0])
            break;
        snprintf(buf, sizeof buf, "%s", v);
        for (char *c = buf; *c; c++)
            if (*c == ';')
                *c = ',';
        rc = apply(p, GGFIT__AT_OVERRIDE_TENSOR, true, buf, err);
        break;
    case L_NOH:
        if (v[0] == '1')
            rc = apply(p, GGFIT__AT_NO_HOST, true, NULL, err);
        break;
    case L_EMBD:
        if (v[0] == '1')
            rc = apply(p, GGFIT__AT_EMBEDDINGS, true, NULL, err);
        break;
    case L_NB:
        rc = apply(p, GGFIT__AT_BATCH, true, v, err);
        break;
    case L_NUB:
        rc = apply(p, GGFIT__AT_UBATCH, true, v, err);
        break;
    case L_CTK:
        rc = apply(p, GGFIT__AT_TYPE_K, true, v, err);
        break;
    case L_CTV:
        rc = apply(p, GGFIT__AT_TYPE_V, true, v, err);
        break;
    case L_NKVO:
        if (v[0] == '1')
            rc = apply(p, GGFIT__AT_KV_OFFLOAD, false, NULL, err);
        break;
    case L_FA:
        if (!fa_word(v))
            return ggfit__fail(err, GGFIT_EINVAL, "llama-bench -fa: expected on, off or auto, "
                                                  "got '%s'", v);
        rc = apply(p, GGFIT__AT_FLASH_ATTN, true, fa_word(v), err);
        break;
    case L_DEPTH:
        in->depth = (uint32_t)strtoul(v, NULL, 10);
        break;
    case L_T:   /* no value: llama-bench's default, one per core */
        if (v[0])
            rc = apply(p, GGFIT__AT_THREADS, true, v, err);
        break;
    default:   /* labels */
        break;
    }
    if (rc) {   /* say which of llama-bench's flags it was */
        char *inner = err ? *err : NULL;
        if (err)
            *err = NULL;
        rc = ggfit__fail(err, rc, "llama-bench: %s", inner ? inner : "bad value");
        ggfit_free(inner);
    }
    return rc;
}

ggfit_status ggfit__bench_instance(const ggfit__bench_vals *vals, size_t k, ggfit_params *p,
                                   ggfit__bench_inst *in, char **err)
{
    /* instance k's index in each list: the innermost list varies fastest */
    uint32_t idx[GGFIT_BENCH_LISTS] = { 0 };
    for (int l = L_PROMPT - 1; l >= 0; l--) {
        uint32_t n = vals[l].n ? vals[l].n : 1;
        idx[l] = (uint32_t)(k % n);
        k /= n;
    }
    memset(in, 0, sizeof *in);
    /* llama-bench's context: no sequences beyond one, no unified cache, a
     * sliding window cache of the window only (to_llama_cparams) */
    p->n_seq = 1;
    p->kv_unified = false;
    p->swa_full = false;
    size_t w = 0;
    for (int l = 0; l < L_PROMPT; l++) {
        if (!vals[l].n)
            continue;
        const char *v = vals[l].v[idx[l]];
        ggfit_status rc = apply_value(l, v, p, in, err);
        if (rc)
            return rc;
        /* the flags given, as llama-bench names them (the depth is the test's) */
        if (vals[l].given && l != L_DEPTH && w < sizeof in->flags) {
            size_t len = strcspn(flags[l].names, ",");
            w += (size_t)snprintf(in->flags + w, sizeof in->flags - w, "%s%.*s %s",
                                  w ? " " : "", (int)len, flags[l].names, v[0] ? v : "\"\"");
        }
    }
    in->fit = in->fit_margin_mib || in->fit_min_ctx;
    return GGFIT_OK;
}

size_t ggfit__bench_tests(const ggfit__bench_vals *vals, ggfit__bench_test *out, size_t max)
{
    size_t n = 0;
    for (uint32_t i = 0; i < vals[L_PROMPT].n; i++) {
        uint32_t pp = (uint32_t)strtoul(vals[L_PROMPT].v[i], NULL, 10);
        if (pp && n < max)
            out[n++] = (ggfit__bench_test){ pp, 0 };
    }
    for (uint32_t i = 0; i < vals[L_GEN].n; i++) {
        uint32_t tg = (uint32_t)strtoul(vals[L_GEN].v[i], NULL, 10);
        if (tg && n < max)
            out[n++] = (ggfit__bench_test){ 0, tg };
    }
    for (uint32_t i = 0; i < vals[L_PG].n; i++) {
        char *e;
        uint32_t pp = (uint32_t)strtoul(vals[L_PG].v[i], &e, 10);
        uint32_t tg = (uint32_t)strtoul(e + 1, NULL, 10);
        if ((pp || tg) && n < max)
            out[n++] = (ggfit__bench_test){ pp, tg };
    }
    return n;
}
