/*
 * test_argv.c - plans that carry their own assumptions: the printed flags,
 * parsed back and projected with -fit off, use exactly the memory the plan
 * projected, for a matrix of the user's flags; and the line survives
 * xargs-style splitting.
 */
#include "test_util.h"

static int parse_into(ggfit_request *r, char **argv, int argc)
{
    char *err = NULL;
    for (int i = 0; i < argc;)
        if (ggfit_request_parse_arg(r, argc, argv, &i, NULL, &err)) {
            fprintf(stderr, "%s\n", err);
            ggfit_free(err);
            return -1;
        }
    return 0;
}

/* Splits a line on spaces (the words ggfit prints have no quotes unless a
 * word needs them, which these plans never do). */
static int split(char *line, char **argv, int max)
{
    int n = 0;
    for (char *t = strtok(line, " "); t && n < max; t = strtok(NULL, " "))
        argv[n++] = t;
    return n;
}

static void same_memory(const ggfit_projection *a, const ggfit_projection *b, const char *what)
{
    if (a->n_devices != b->n_devices || a->n_ctx != b->n_ctx ||
        memcmp(&a->host, &b->host, sizeof a->host) ||
        memcmp(a->devices, b->devices, a->n_devices * sizeof a->devices[0]) ||
        memcmp(&a->cpu_extra, &b->cpu_extra, sizeof a->cpu_extra))
        fail_msg("%s: the printed flags project other bytes (n_ctx %u vs %u)", what, a->n_ctx,
                 b->n_ctx);
}

static void round_trip(const char *model, const char *gpu, const char *flags)
{
    char m[512], line[1024], what[1024];
    model_path(m, sizeof m, model);
    snprintf(line, sizeof line, "-m %s --gpu %s --host-mem 512GiB/500GiB %s", m, gpu, flags);
    snprintf(what, sizeof what, "%s --gpu %s %s", model, gpu, flags);
    char *argv[64];
    int argc = split(line, argv, 64);
    ggfit_request r;
    ggfit_request_init(&r);
    assert_int_equal(parse_into(&r, argv, argc), 0);
    static ggfit_plan a;
    char *err = NULL;
    assert_int_equal(ggfit_request_plan(&r, &a, &err), 0);
    if (a.verdict.status != GGFIT_VERDICT_FITS) {
        ggfit_plan_free(&a);
        return;
    }
    char *printed = ggfit_plan_args(&a);
    assert_non_null(printed);
    if (!strstr(printed, "-fit off"))
        fail_msg("%s: printed \"%s\"", what, printed);

    /* ggfit -m M --gpu G $(flags) */
    char again[4096];
    snprintf(again, sizeof again, "-m %s --gpu %s --host-mem 512GiB/500GiB %s", m, gpu, printed);
    argc = split(again, argv, 64);
    ggfit_request r2;
    ggfit_request_init(&r2);
    assert_int_equal(parse_into(&r2, argv, argc), 0);
    static ggfit_plan b;
    assert_int_equal(ggfit_request_plan(&r2, &b, &err), 0);
    assert_int_equal(b.fit.status, GGFIT_FIT_UNCHANGED);
    same_memory(&a.projection, &b.projection, what);
    ggfit_free(printed);
    ggfit_plan_free(&a);
    ggfit_plan_free(&b);
}

static void test_round_trip(void **state)
{
    (void)state;
    static const char *const flags[] = {
        "", "-c 8192", "-ctk q8_0 -ctv q8_0", "-ctk q4_0 -ctv q4_0 -fa on", "-np 4",
        "-np 2 -kvu", "-b 1024 -ub 256", "-nkvo", "--swa-full", "-fa off", "--no-mmap",
        "-c 16384 -np 3 -ctk q8_0 -ctv q8_0 -ub 128", "-c 32768 -ncmoe 4", "-cmoe -c 8192",
        "-c 8192 -ngl 20", "-sm none -c 8192", "--no-repack -c 4096",
        "--embedding --pooling mean -c 4096", "--rerank -c 2048",
    };
    static const char *const cases[][2] = {
        { "qwen3-14b-Q4_K_M.gguf", "rtx-3060-12gb" },
        { "gpt-oss-20b-mxfp4.gguf", "rtx-4060" },
        { "gemma-3-4b-Q4_K_M.gguf", "rtx-3060-12gb,rtx-4060" },
        { "qwen3-30b-a3b-Q4_K_M.gguf", "rtx-3090,rtx-3060-12gb" },
        { "lfm2-1.2b-Q4_K_M.gguf", "8GiB" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++)
            round_trip(cases[c][0], cases[c][1], flags[f]);
}

/* Each program's line: llama-server's says -np, llama-bench has no -c
 * and its own separators; llama-fit-params' is ggfit_fit_args. */
static void test_programs(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "qwen3-30b-a3b-Q4_K_M.gguf");
    char line[1024];
    snprintf(line, sizeof line, "-m %s --gpu rtx-3090,rtx-3060-12gb --host-mem 64GiB -ctk q8_0 "
             "-ctv q8_0 -fa on -ts 3,1", m);
    char *argv[16];
    assert_int_equal(split(line, argv, 16), 14);
    ggfit_request r;
    ggfit_request_init(&r);
    assert_int_equal(parse_into(&r, argv, 14), 0);
    static ggfit_plan pl;
    char *err = NULL;
    assert_int_equal(ggfit_request_plan(&r, &pl, &err), 0);
    char *fp = ggfit_fit_args(&pl.fit, pl.devices, pl.n_devices);
    size_t n;
    char **w = ggfit_plan_argv(&pl, GGFIT_FOR_FIT_PARAMS, &n);
    assert_non_null(w);
    assert_string_equal(w[0], "-c");
    char *joined = ggfit_argv_join(w);
    assert_non_null(joined);
    /* the same words, only quoted differently */
    assert_int_equal(strncmp(joined, fp, 12), 0);
    ggfit_free(joined);
    ggfit_argv_free(w);
    ggfit_free(fp);

    /* the default plan is llama-server's: its 4 slots on a unified cache */
    w = ggfit_plan_argv(&pl, GGFIT_FOR_DEFAULT, &n);
    bool np = false, ctk = false, fit_off = false;
    for (size_t i = 0; i + 1 < n; i++) {
        np |= !strcmp(w[i], "-np") && !strcmp(w[i + 1], "4") && !strcmp(w[i + 2], "-kvu");
        ctk |= !strcmp(w[i], "-ctk") && !strcmp(w[i + 1], "q8_0");
        fit_off |= !strcmp(w[i], "-fit") && !strcmp(w[i + 1], "off");
    }
    assert_true(np && ctk && fit_off);
    ggfit_argv_free(w);

    w = ggfit_plan_argv(&pl, GGFIT_FOR_BENCH, &n);
    bool fa = false, ts = false;
    for (size_t i = 0; i < n; i++) {
        assert_string_not_equal(w[i], "-c");
        assert_string_not_equal(w[i], "-fit");
        fa |= i + 1 < n && !strcmp(w[i], "-fa") && !strcmp(w[i + 1], "1");
        ts |= i + 1 < n && !strcmp(w[i], "-ts") && strchr(w[i + 1], '/') != NULL;
    }
    assert_true(fa && ts);
    ggfit_argv_free(w);
    ggfit_plan_free(&pl);

    /* A word xargs or $(...) would change is single-quoted. */
    char w1[] = "-ot", w2[] = "a b=CPU", w3[] = "it's";
    char *odd[] = { w1, w2, w3, NULL };
    joined = ggfit_argv_join(odd);
    assert_string_equal(joined, "-ot 'a b=CPU' 'it'\\''s'");
    ggfit_free(joined);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_programs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
