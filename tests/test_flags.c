/*
 * test_flags.c - the one table of flags (common/llama_args.h) and the one
 * loop that parses them (common/args.c): every row, by each of its names
 * and negated names, with a valid value of its kind, lands in the same
 * place from a command line, a pasted llama.cpp line, the LLAMA_ARG_*
 * environment and a router preset's keys; and "did you mean".
 */
#include "test_util.h"

#include "common/args.h"

/* A fresh request, zeroed whole (the override slots too), so that two of
 * them compare with memcmp. */
static ggfit_request *fresh(void)
{
    ggfit_request *r = calloc(1, sizeof *r);
    assert_non_null(r);
    ggfit_request_init(r);
    return r;
}

static void same_string(const char **a, const char **b, const char *what)
{
    if (!*a || !*b) {
        if (*a != *b)
            fail_msg("%s: %s against %s", what, *a ? *a : "NULL", *b ? *b : "NULL");
    } else if (strcmp(*a, *b)) {
        fail_msg("%s: '%s' against '%s'", what, *a, *b);
    }
    *a = *b = NULL;
}

/* Whether a and b landed the same values (their strings equal, wherever
 * they point); notes left out (only a typed flag is noted, under the name
 * typed). Both are changed. */
static void same_landing(ggfit_request *a, ggfit_request *b, const char *what)
{
    same_string(&a->model, &b->model, what);
    same_string(&a->gpu, &b->gpu, what);
    same_string(&a->rpc, &b->rpc, what);
    same_string(&a->host_mem, &b->host_mem, what);
    same_string(&a->cpu, &b->cpu, what);
    same_string(&a->hf_repo, &b->hf_repo, what);
    same_string(&a->hf_file, &b->hf_file, what);
    same_string(&a->hf_token, &b->hf_token, what);
    same_string(&a->model_url, &b->model_url, what);
    same_string(&a->draft_model, &b->draft_model, what);
    same_string(&a->mmproj, &b->mmproj, what);
    same_string(&a->llama_version, &b->llama_version, what);
    same_string(&a->llama_bin, &b->llama_bin, what);
    same_string(&a->vs_version, &b->vs_version, what);
    same_string(&a->llama_server, &b->llama_server, what);
    assert_int_equal(a->n_gpu_more, b->n_gpu_more);
    for (uint32_t k = 0; k < a->n_gpu_more; k++)
        same_string(&a->gpu_more[k], &b->gpu_more[k], what);
    memset(a->ignored, 0, sizeof a->ignored);
    memset(b->ignored, 0, sizeof b->ignored);
    memset(a->not_counted, 0, sizeof a->not_counted);
    memset(b->not_counted, 0, sizeof b->not_counted);
    a->n_ignored = b->n_ignored = a->n_not_counted = b->n_not_counted = 0;
    memset(a->from_env, 0, sizeof a->from_env);   /* where a value came from, not where it lands */
    memset(b->from_env, 0, sizeof b->from_env);
    a->n_from_env = b->n_from_env = 0;
    /* which rows were typed or given: how, not where */
    memset(a->rows_given, 0, sizeof a->rows_given);
    memset(b->rows_given, 0, sizeof b->rows_given);
    memset(a->versioned, 0, sizeof a->versioned);
    memset(b->versioned, 0, sizeof b->versioned);
    a->n_versioned = b->n_versioned = 0;
    if (memcmp(a, b, sizeof *a))
        fail_msg("%s: lands elsewhere", what);
}

/* Whether a and b noted the same flags. */
static void same_notes(const ggfit_request *a, const ggfit_request *b, const char *what)
{
    if (a->n_ignored != b->n_ignored || a->n_not_counted != b->n_not_counted)
        fail_msg("%s: noted differently", what);
    for (uint32_t k = 0; k < a->n_ignored; k++)
        assert_string_equal(a->ignored[k], b->ignored[k]);
    for (uint32_t k = 0; k < a->n_not_counted; k++)
        assert_string_equal(a->not_counted[k], b->not_counted[k]);
}

/* name (and its values, as the row takes them) on a command line. */
static ggfit_request *by_argv(const ggfit__flag *f, const char *name, bool negated)
{
    ggfit_request *r = fresh();
    char *argv[4] = { (char *)(uintptr_t)name, (char *)(uintptr_t)f->example,
                      (char *)(uintptr_t)f->example, NULL };
    int argc = 1 + (negated ? 0 : f->values), i = 0;
    char *err = NULL;
    if (ggfit_request_parse_arg(r, argc, argv, &i, NULL, &err))
        fail_msg("%s: %s", name, err);
    assert_int_equal(i, argc);
    return r;
}

/* The same as a pasted llama-server line. */
static ggfit_request *by_line(const ggfit__flag *f, const char *name, bool negated, char *line,
                              size_t n)
{
    ggfit_request *r = fresh();
    char *words[8], *err = NULL;
    if (negated || f->values == 0)
        snprintf(line, n, "llama-server %s", name);
    else if (f->values == 1)
        snprintf(line, n, "/usr/bin/llama-server %s '%s'", name, f->example);
    else
        snprintf(line, n, "llama-server %s \"%s\" %s", name, f->example, f->example);
    if (ggfit__request_parse_line(r, line, words, 8, &err))
        fail_msg("%s: %s", name, err);
    return r;
}

/* The same as its LLAMA_ARG_* variable (var=value). */
static ggfit_request *by_env(const char *var, const char *value, const char *name)
{
    ggfit_request *r = fresh();
    char *err = NULL;
    assert_int_equal(setenv(var, value, 1), 0);
    ggfit_status rc = ggfit_request_env(r, &err);
    unsetenv(var);
    if (rc)
        fail_msg("%s (%s=%s): %s", name, var, value, err);
    return r;
}

/* The same as a router preset's key=value. */
static ggfit_request *by_preset(const char *key, const char *value)
{
    ggfit_request *r = fresh();
    char *err = NULL;
    if (ggfit__request_preset(r, key, value, &err))
        fail_msg("%s=%s: %s", key, value, err);
    return r;
}

static void compare(ggfit_request *ref, ggfit_request *other, const char *what)
{
    ggfit_request *copy = fresh();
    memcpy(copy, ref, sizeof *copy);
    same_landing(copy, other, what);
    free(copy);
    free(other);
}

/* One name of row f (negated: one of its negated names) through every entry
 * point. */
static void walk_name(size_t row, const ggfit__flag *f, const char *name, bool negated)
{
    char what[256], line[256];
    bool neg;
    ggfit__flag found;
    /* the row, or one llama.cpp repeats (-np) */
    int at = ggfit__flag_find(name, &neg);
    assert_true(at >= 0 && ggfit__flag_row((size_t)at, &found));
    assert_true((size_t)at == row || !strcmp(found.names, f->names));
    assert_true(neg == negated);

    ggfit_request *ref = by_argv(f, name, negated);
    /* a pasted line: the same values, the same notes */
    ggfit_request *l = by_line(f, name, negated, line, sizeof line);
    snprintf(what, sizeof what, "%s as a pasted line", name);
    same_notes(ref, l, what);
    compare(ref, l, what);

    /* the environment; a value by name is never noted */
    if (f->env[0] && f->values < 2) {
        snprintf(what, sizeof what, "%s as %s", name, f->env);
        if (f->values == 1) {
            compare(ref, by_env(f->env, f->example, name), what);
        } else if (!negated) {
            compare(ref, by_env(f->env, "1", name), what);
            compare(ref, by_env(f->env, "on", name), what);
        } else {
            char no[96];
            const char *tail = strncmp(f->env, "LLAMA_ARG_", 10) ? f->env : f->env + 10;
            compare(ref, by_env(f->env, "0", name), what);
            snprintf(no, sizeof no, "LLAMA_ARG_NO_%s", tail);
            compare(ref, by_env(no, "1", name), what);
        }
        ggfit_request *r = fresh();
        char *err = NULL;
        assert_int_equal(ggfit_request_env(r, &err), GGFIT_OK);   /* and unset again */
        free(r);
    }

    /* a preset's keys: the name without its dashes, and the variable */
    if (f->values < 2) {
        const char *key = name;
        while (*key == '-')
            key++;
        const char *value = f->values ? f->example : "true";
        snprintf(what, sizeof what, "%s as the preset key %s", name, key);
        compare(ref, by_preset(key, value), what);
        if (f->values == 0 && negated) {
            /* off under a negated key is on */
            ggfit_request *on = by_argv(f, ggfit__flag_first(f->names, line, sizeof line),
                                        false);
            compare(on, by_preset(key, "false"), what);
            free(on);
        }
        if (f->env[0] && !negated) {
            snprintf(what, sizeof what, "%s as the preset key %s", name, f->env);
            compare(ref, by_preset(f->env, value), what);
        }
    }
    free(ref);
}

static void walk_list(size_t row, const ggfit__flag *f, const char *list, bool negated)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        char name[80];
        assert_true(len < sizeof name);
        memcpy(name, p, len);
        name[len] = '\0';
        walk_name(row, f, name, negated);
        p += len + (p[len] == ',');
    }
}

static void test_every_row(void **state)
{
    (void)state;
    ggfit__flag f;
    size_t n = 0, applied = 0;
    for (size_t row = 0; ggfit__flag_row(row, &f); row++, n++) {
        assert_true(f.names[0] == '-');
        assert_true(f.kind <= GGFIT_FLAG_PAIR && f.lands < GGFIT__AT_COUNT &&
                    f.scope <= GGFIT_SCOPE_OTHER && f.memory < GGFIT__MEM_COUNT);
        assert_int_equal(f.values, f.kind == GGFIT_FLAG_BOOL ? 0
                                   : f.kind == GGFIT_FLAG_PAIR ? 2 : 1);
        assert_true((f.values == 0) == (f.example[0] == '\0'));
        assert_true(f.programs != 0 || f.scope == GGFIT_SCOPE_OTHER);
        if (f.scope == GGFIT_SCOPE_TOOL) {
            /* the command line tool's: the library leaves it to the caller,
             * or takes it as llama.cpp's flag of that name (-v, -p) */
            ggfit_request *r = fresh();
            char *argv[] = { (char *)(uintptr_t)f.names, NULL }, name[64];
            argv[0] = name;
            ggfit__flag_first(f.names, name, sizeof name);
            bool neg;
            assert_true(f.cli != GGFIT_CLI_NONE && f.lands == GGFIT__AT_CLI);
            if (ggfit__flag_find(name, &neg) != (int)row) {
                free(r);
                continue;
            }
            int i = 0;
            bool used = true;
            assert_int_equal(ggfit_request_parse_arg(r, 1, argv, &i, &used, NULL), GGFIT_OK);
            assert_false(used);
            assert_int_equal(i, 0);
            free(r);
            continue;
        }
        walk_list(row, &f, f.names, false);
        walk_list(row, &f, f.negated, true);
        if (f.lands == GGFIT__AT_NOTE)
            continue;
        /* an applied flag changes something, under one name or the other */
        char name[64];
        ggfit_request *base = fresh(), *on = by_argv(&f, ggfit__flag_first(f.names, name, 64),
                                                     false);
        ggfit_request *off = f.negated[0] ? by_argv(&f, ggfit__flag_first(f.negated, name, 64),
                                                    true)
                                          : NULL;
        on->n_ignored = on->n_not_counted = 0;
        if (off)
            off->n_ignored = off->n_not_counted = 0;
        assert_true(memcmp(base, on, sizeof *on) || (off && memcmp(base, off, sizeof *off)));
        applied++;
        free(base);
        free(on);
        free(off);
    }
    assert_true(n > 300);
    assert_true(applied > 50);
}

/* Every landing has a row, and llama.cpp's model and context flags are
 * ggfit_params_parse_arg's as well. */
static void test_every_landing(void **state)
{
    (void)state;
    ggfit__flag f;
    bool seen[GGFIT__AT_COUNT] = { 0 };
    for (size_t row = 0; ggfit__flag_row(row, &f); row++) {
        seen[f.lands] = true;
        if (f.lands < GGFIT__AT_PARAMS_FIRST || f.lands > GGFIT__AT_PARAMS_LAST)
            continue;
        char name[64];
        char *argv[] = { name, (char *)(uintptr_t)f.example, NULL };
        int i = 0;
        bool used = false;
        ggfit_params p;
        ggfit_params_init(&p);
        ggfit__flag_first(f.names, name, sizeof name);
        assert_int_equal(ggfit_params_parse_arg(&p, 1 + f.values, argv, &i, &used, NULL),
                         GGFIT_OK);
        /* the draft's land in the request's draft, not in these params */
        assert_true(used == (f.scope != GGFIT_SCOPE_DRAFT));
    }
    for (int at = 0; at < GGFIT__AT_COUNT; at++)
        if (!seen[at])
            fail_msg("landing %d has no row", at);
}

/* The names a printed plan gives the flags (render/argv.c, render/flags.c). */
static void test_printed(void **state)
{
    (void)state;
    static const struct { ggfit__flag_at at; bool draft; const char *name; } cases[] = {
        { GGFIT__AT_CTX, false, "-c" }, { GGFIT__AT_NGL, false, "-ngl" },
        { GGFIT__AT_TYPE_K, false, "-ctk" }, { GGFIT__AT_TYPE_K, true, "-ctkd" },
        { GGFIT__AT_NGL, true, "-ngld" }, { GGFIT__AT_KV_OFFLOAD, false, "-nkvo" },
        { GGFIT__AT_MMAP, false, "--no-mmap" }, { GGFIT__AT_REPACK, false, "--no-repack" },
        { GGFIT__AT_CACHE_RAM, false, "--cache-ram" }, { GGFIT__AT_DRAFT_MODEL, true, "-md" },
        { GGFIT__AT_OVERRIDE_TENSOR, true, "-otd" }, { GGFIT__AT_RPC, false, "--rpc" },
        { GGFIT__AT_WARMUP, false, "--no-warmup" }, { GGFIT__AT_FIT, false, "-fit" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        assert_string_equal(ggfit__flag_printed(cases[k].at, cases[k].draft), cases[k].name);
    /* every applied flag of llama.cpp's model and context has one */
    for (int at = GGFIT__AT_PARAMS_FIRST; at <= GGFIT__AT_PARAMS_LAST; at++)
        assert_true(ggfit__flag_printed((ggfit__flag_at)at, false)[0] != '\0');
}

/* Whether llama-bench's parser (ggfit_bench_parse_arg) takes a name of
 * list, with a value. */
static bool bench_takes(const char *list, const char *value)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        char name[80];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        char *argv[] = { name, (char *)(uintptr_t)value, NULL };
        ggfit_bench_args *a = calloc(1, sizeof *a);
        ggfit_request *r = fresh();
        int i = 0;
        bool used = false;
        char *err = NULL;
        assert_non_null(a);
        ggfit_bench_args_init(a);
        ggfit_status rc = ggfit_bench_parse_arg(a, r, 2, argv, &i, &used, &err);
        ggfit_free(err);
        free(a);
        free(r);
        if (!rc && used)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

/* The rows that say llama-bench takes them are flags of its parser, and the
 * rest of llama.cpp's model and context flags are not (or mean otherwise
 * there). */
static void test_bench_programs(void **state)
{
    (void)state;
    ggfit__flag f;
    size_t n = 0;
    for (size_t row = 0; ggfit__flag_row(row, &f); row++) {
        if (!(f.programs & GGFIT_PROGRAM_BENCH) || f.scope == GGFIT_SCOPE_TOOL)
            continue;
        const char *value = f.values ? f.example : "1";
        if (!bench_takes(f.names, value) && !bench_takes(f.negated, value))
            fail_msg("%s: not a flag of llama-bench's", f.names);
        n++;
    }
    assert_true(n >= 20);
}

static void test_preset(void **state)
{
    (void)state;
    ggfit_request *r = fresh();
    char *err = NULL;
    assert_int_equal(ggfit__request_preset(r, "LLAMA_ARG_CTX_SIZE", "8192", &err), GGFIT_OK);
    assert_int_equal(r->params.n_ctx, 8192);
    assert_int_equal(ggfit__request_preset(r, "c", "4096", &err), GGFIT_OK);
    assert_int_equal(r->params.n_ctx, 4096);
    assert_int_equal(ggfit__request_preset(r, "no-mmap", "true", &err), GGFIT_OK);
    assert_false(r->params.use_mmap);
    assert_int_equal(ggfit__request_preset(r, "no-mmap", "off", &err), GGFIT_OK);
    assert_true(r->params.use_mmap);
    assert_int_equal(ggfit__request_preset(r, "spec-draft-ngl", "7", &err), GGFIT_OK);
    assert_int_equal(r->draft.n_gpu_layers, 7);
    assert_int_equal(r->n_not_counted + r->n_ignored, 0);

    assert_int_equal(ggfit__request_preset(r, "frobnicate", "1", &err), GGFIT_EINVAL);
    assert_string_equal(err, "unknown preset key 'frobnicate'");
    ggfit_free(err);
    assert_int_equal(ggfit__request_preset(r, "--ctx-size", "1", &err), GGFIT_EINVAL);
    ggfit_free(err);
    assert_int_equal(ggfit__request_preset(r, "json", "1", &err), GGFIT_EINVAL);   /* ggfit's CLI */
    ggfit_free(err);
    assert_int_equal(ggfit__request_preset(r, "mmap", "maybe", &err), GGFIT_EINVAL);
    assert_string_equal(err, "mmap=maybe: expected on/off, true/false or 1/0");
    ggfit_free(err);
    assert_int_equal(ggfit__request_preset(r, "ctx-size", "lots", &err), GGFIT_EINVAL);
    assert_string_equal(err, "ctx-size: -c: expected a non-negative integer, got 'lots'");
    ggfit_free(err);
    free(r);
}

/* Every integer flag of the library's given a count past any type: its
 * limit said ("too large (at most N)", or the range), never "expected an
 * integer"; and its value cut to 40 characters in the message. */
static void test_too_large(void **state)
{
    (void)state;
    static char huge[] = "99999999999999999999999999999999999999999999999999";
    ggfit_flag_info f;
    size_t n = 0;
    for (size_t i = 0; ggfit_flag_get(i, &f); i++) {
        if (f.kind != GGFIT_FLAG_INT || f.cli != GGFIT_CLI_NONE || f.n_values != 1)
            continue;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(f.names, ","), f.names);
        char *argv[] = { name, huge };
        int k = 0;
        char *err = NULL;
        ggfit_request *r = fresh();
        assert_int_equal(ggfit_request_parse_arg(r, 2, argv, &k, NULL, &err), GGFIT_EINVAL);
        if (!err || (!strstr(err, "is too large (at most ") && !strstr(err, " to 256 ")) ||
            !strstr(err, "9999999999999999999999999999999999999999..."))
            fail_msg("%s %s: '%s'", name, huge, err ? err : "(none)");
        ggfit_free(err);
        free(r);
        n++;
    }
    assert_true(n >= 15);
}

static void test_pasted_line(void **state)
{
    (void)state;
    ggfit_request *r = fresh();
    char line[] = "/opt/llama/llama-cli -m 'my model.gguf' -c 8192 --no-mmap \\\n  --port 8080";
    char *words[16], *err = NULL;
    assert_int_equal(ggfit__request_parse_line(r, line, words, 16, &err), GGFIT_OK);
    assert_int_equal(r->program, GGFIT_FOR_CLI);
    assert_string_equal(r->model, "my model.gguf");
    assert_int_equal(r->params.n_ctx, 8192);
    assert_false(r->params.use_mmap);
    assert_int_equal(r->n_ignored, 1);
    assert_string_equal(r->ignored[0], "--port");
    free(r);

    char bench[] = "llama-bench -m x.gguf", open[] = "-m 'x.gguf", many[] = "-c 1 -b 2 -ub 3";
    r = fresh();
    assert_int_equal(ggfit__request_parse_line(r, bench, words, 16, &err), GGFIT_EINVAL);
    ggfit_free(err);
    assert_int_equal(ggfit__request_parse_line(r, open, words, 16, &err), GGFIT_EINVAL);
    ggfit_free(err);
    assert_int_equal(ggfit__request_parse_line(r, many, words, 4, &err), GGFIT_EINVAL);
    ggfit_free(err);
    free(r);
}

static void test_did_you_mean(void **state)
{
    (void)state;
    char buf[64];
    static const char *const cases[][2] = {
        { "--ctx-sise", "--ctx-size" }, { "-ngll", "-ngl" }, { "--no-mmapp", "--no-mmap" },
        { "--gpus", "--gpu" }, { "--host-men", "--host-mem" }, { "--fit-arround", "--fit-around" },
        { "--cache-type-kk", "--cache-type-k" }, { "--n-gpu-layer", "--n-gpu-layers" },
        { "--flash-atn", "--flash-attn" }, { "--jsonn", "--json" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *got = ggfit__flag_nearest(cases[k][0], 0, buf, sizeof buf);
        if (!got || strcmp(got, cases[k][1]))
            fail_msg("%s: %s, not %s", cases[k][0], got ? got : "nothing", cases[k][1]);
    }
    /* nothing close, or a name already */
    assert_null(ggfit__flag_nearest("--frobnicate", 0, buf, sizeof buf));
    assert_null(ggfit__flag_nearest("-ctk", 0, buf, sizeof buf));
    assert_null(ggfit__flag_nearest("-zz", 0, buf, sizeof buf));
    assert_null(ggfit__flag_nearest("-q", GGFIT_COMMAND_BENCH, buf, sizeof buf));
    assert_null(ggfit__flag_nearest("--a-name-far-longer-than-any-flag-ggfit-or-llama-has", 0,
                                    buf, sizeof buf));
}

/* The table's public face (ggfit_app.h): every row once, the tool's rows
 * found for their commands before llama.cpp's of the same name, each of
 * the tool's flags a row with a line of help. */
static void test_public(void **state)
{
    (void)state;
    ggfit_flag_info f;
    ggfit__flag g;
    size_t n = 0, rows = 0;
    bool tool[GGFIT_CLI_COUNT] = { 0 };
    while (ggfit__flag_row(rows, &g))
        rows++;
    for (; ggfit_flag_get(n, &f); n++) {
        bool neg;
        char name[64];
        ggfit__flag_first(f.names, name, sizeof name);
        int k = ggfit_flag_find(name, f.commands, &neg);
        ggfit_flag_info h;
        assert_true(k >= 0 && ggfit_flag_get((size_t)k, &h) && !neg);
        /* the row, one llama.cpp repeats (-np), or the tool's that takes
         * the name for its commands (-h, -v, -p, -n) */
        if ((size_t)k != n && strcmp(h.names, f.names) &&
            (f.cli != GGFIT_CLI_NONE || h.cli == GGFIT_CLI_NONE))
            fail_msg("%s: found %s", f.names, h.names);
        assert_true(f.commands != 0 && f.n_values >= 0 && f.n_values <= 2);
        if (f.help[0] && f.n_values)
            assert_true(f.metavar[0] != '\0');
        if (f.cli != GGFIT_CLI_NONE) {
            assert_true(f.scope == GGFIT_SCOPE_TOOL && f.help[0] && f.cli < GGFIT_CLI_COUNT);
            tool[f.cli] = true;
        }
    }
    assert_int_equal(n, rows);
    for (int c = GGFIT_CLI_NONE + 1; c < GGFIT_CLI_COUNT; c++)
        if (!tool[c])
            fail_msg("the tool's flag %d has no row", c);

    /* the tool's rows first for their commands; llama.cpp's for the rest */
    static const struct { const char *name; unsigned commands; int cli; bool neg; } finds[] = {
        { "-p", GGFIT_COMMAND_BENCH, GGFIT_CLI_N_PROMPT, false },
        { "-p", GGFIT_COMMAND_PLAN, GGFIT_CLI_NONE, false },
        { "-v", GGFIT_COMMAND_PLAN, GGFIT_CLI_VERBOSE, false },
        { "-v", GGFIT_COMMAND_BENCH, GGFIT_CLI_NONE, false },
        { "--help", GGFIT_COMMAND_ARCHS, GGFIT_CLI_HELP, false },
        { "--no-mmap", GGFIT_COMMAND_PLAN, GGFIT_CLI_NONE, true },
        { "--no-mmap", 0, GGFIT_CLI_NONE, true },
        { "--svg", GGFIT_COMMAND_SWEEP, GGFIT_CLI_SVG, false },
        { "--", GGFIT_COMMAND_PLAN, GGFIT_CLI_COMMAND_LINE, false },
        { "--svg", GGFIT_COMMAND_BENCH, -1, false },
        { "-c", GGFIT_COMMAND_INSPECT, -1, false },
        { "--frobnicate", 0, -1, false },
    };
    for (size_t k = 0; k < sizeof finds / sizeof finds[0]; k++) {
        bool neg = !finds[k].neg;
        int i = ggfit_flag_find(finds[k].name, finds[k].commands, &neg);
        if (finds[k].cli < 0) {
            assert_int_equal(i, -1);
            continue;
        }
        assert_true(i >= 0 && ggfit_flag_get((size_t)i, &f));
        if ((int)f.cli != finds[k].cli || neg != finds[k].neg)
            fail_msg("%s: row %s", finds[k].name, f.names);
    }

    char buf[64];
    const char *s = ggfit_flag_suggest("--ctx-sise", GGFIT_COMMAND_PLAN, buf, sizeof buf);
    assert_true(s && !strcmp(s, "--ctx-size"));
    s = ggfit_flag_suggest("--tensor", GGFIT_COMMAND_INSPECT, buf, sizeof buf);
    assert_true(s && !strcmp(s, "--tensors"));
    s = ggfit_flag_suggest("--svgg", GGFIT_COMMAND_SWEEP, buf, sizeof buf);
    assert_true(s && !strcmp(s, "--svg"));
    assert_null(ggfit_flag_suggest("--ctx-sise", GGFIT_COMMAND_ARCHS, buf, sizeof buf));

    ggfit_speed_options so;
    ggfit_speed_options_init(&so);
    assert_ptr_equal(ggfit_speed_field(&so, GGFIT_CLI_BANDWIDTH), &so.bandwidth_gbs);
    assert_ptr_equal(ggfit_speed_field(&so, GGFIT_CLI_CROSS_MS), &so.cross_ms);
    assert_null(ggfit_speed_field(&so, GGFIT_CLI_JSON));
    ggfit_program prog;
    assert_true(ggfit_program_named("/opt/bin/llama-bench", &prog) && prog == GGFIT_FOR_BENCH);
    assert_false(ggfit_program_named("llama-quantize", &prog));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row),
        cmocka_unit_test(test_every_landing),
        cmocka_unit_test(test_printed),
        cmocka_unit_test(test_bench_programs),
        cmocka_unit_test(test_preset),
        cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_pasted_line),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_public),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
