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

/* A line of words split as a POSIX shell splits words that are bare or
 * single-quoted ('\'' is a quote inside one): the words, or -1 when the
 * line has anything else a shell would read otherwise (an unclosed quote,
 * a bare character ggfit_argv_quote quotes). */
#define WORD_MAX 4096   /* the longest word shell_split takes */

static int shell_split(const char *line, char out[][WORD_MAX], int max)
{
    int n = 0;
    const char *s = line;
    while (*s) {
        if (n == max)
            return -1;
        size_t k = 0;
        while (*s && *s != ' ') {
            if (*s == '\'') {
                const char *e = strchr(s + 1, '\'');
                if (!e || k + (size_t)(e - s) >= WORD_MAX)
                    return -1;
                memcpy(out[n] + k, s + 1, (size_t)(e - s - 1));
                k += (size_t)(e - s - 1);
                s = e + 1;
            } else if (*s == '\\' && s[1] == '\'' && k + 1 < WORD_MAX) {
                out[n][k++] = '\'';
                s += 2;
            } else if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                              "_-.,:=/+@%", *s) && k + 1 < WORD_MAX) {
                out[n][k++] = *s++;
            } else {
                return -1;
            }
        }
        out[n++][k] = '\0';
        while (*s == ' ')
            s++;
    }
    return n;
}

/* ggfit_argv_quote: a word a shell would read otherwise is single-quoted
 * (spaces, quotes, $, (, |, *, [, ;, &, <, !, ~, #, a backslash, a tab or
 * newline, the empty word), ' as '\'', and a shell splits the line back
 * into the same words. */
static void test_quote(void **state)
{
    (void)state;
    static const struct { const char *word, *quoted; } cases[] = {
        { "-c", "-c" },
        { "8192", "8192" },
        { "/models/a-b_c.1+2@x%y:z=w,v", "/models/a-b_c.1+2@x%y:z=w,v" },
        { "", "''" },
        { "two words", "'two words'" },
        { "it's", "'it'\\''s'" },
        { "'", "''\\'''" },
        { "\"q\"", "'\"q\"'" },
        { "$HOME", "'$HOME'" },
        { "$(rm -rf /)", "'$(rm -rf /)'" },
        { "`id`", "'`id`'" },
        { "blk[.]13[.]ffn_(gate|up|gate_up|down)=CUDA1",
          "'blk[.]13[.]ffn_(gate|up|gate_up|down)=CUDA1'" },
        { "a|b", "'a|b'" },
        { "*.gguf", "'*.gguf'" },
        { "x;y", "'x;y'" },
        { "a&b", "'a&b'" },
        { "<in", "'<in'" },
        { "!1", "'!1'" },
        { "~/m.gguf", "'~/m.gguf'" },
        { "#c", "'#c'" },
        { "back\\slash", "'back\\slash'" },
        { "tab\tnl\n", "'tab\tnl\n'" },
    };
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        char word[64];
        snprintf(word, sizeof word, "%s", cases[i].word);
        char *one[] = { word, NULL };
        char *q = ggfit_argv_quote(one);
        assert_non_null(q);
        assert_string_equal(q, cases[i].quoted);
        ggfit_free(q);
    }
    /* every word at once (but the last: the splitter here reads words
     * without a tab or newline) splits back into the same words */
    char *all[sizeof cases / sizeof cases[0]];
    static char buf[sizeof cases / sizeof cases[0]][64];
    for (size_t i = 0; i + 1 < n; i++) {
        snprintf(buf[i], sizeof buf[i], "%s", cases[i].word);
        all[i] = buf[i];
    }
    all[n - 1] = NULL;
    char *line = ggfit_argv_quote(all);
    assert_non_null(line);
    static char back[64][WORD_MAX];
    assert_int_equal(shell_split(line, back, 64), (int)(n - 1));
    for (size_t i = 0; i + 1 < n; i++)
        assert_string_equal(back[i], cases[i].word);
    ggfit_free(line);
    /* no words: an empty line */
    char *none[] = { NULL };
    line = ggfit_argv_quote(none);
    assert_non_null(line);
    assert_string_equal(line, "");
    ggfit_free(line);
}

/* ggfit_plan_command: the plan's program, the model as the request gave
 * it, then exactly ggfit_plan_argv's words. */
static void command_is(const ggfit_plan *pl, const ggfit_request *r, const char *program,
                       const char *const *model)
{
    char *line = ggfit_plan_command(pl, r, 0, NULL);
    assert_non_null(line);
    static char got[128][WORD_MAX];
    int n = shell_split(line, got, 128);
    if (n < 0)
        fail_msg("not shell words: %s", line);
    size_t nw;
    char **w = ggfit_plan_argv(pl, pl->program, &nw);
    assert_non_null(w);
    int k = 0;
    assert_string_equal(got[k++], program);
    for (size_t i = 0; model[i]; i++)
        assert_string_equal(got[k++], model[i]);
    assert_int_equal(n, k + (int)nw);
    for (size_t i = 0; i < nw; i++)
        assert_string_equal(got[k + (int)i], w[i]);
    ggfit_argv_free(w);
    ggfit_free(line);
}

static void test_command(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "gpt-oss-120b-mxfp4.gguf");
    char line[1024];
    snprintf(line, sizeof line, "-m %s --gpu rtx-3090 --host-mem 64GiB -c 32768", m);
    char *argv[16];
    int argc = split(line, argv, 16);
    static ggfit_request r, h;
    ggfit_request_init(&r);
    assert_int_equal(parse_into(&r, argv, argc), 0);
    static ggfit_plan pl;
    char *err = NULL;
    assert_int_equal(ggfit_request_plan(&r, &pl, &err), 0);
    assert_int_equal(pl.verdict.status, GGFIT_VERDICT_FITS);
    assert_true(pl.fit.params.n_overrides > 0);   /* an -ot, with ( | [ to quote */

    const char *by_path[] = { "-m", m, NULL };
    static const struct { ggfit_program prog; const char *name; } progs[] = {
        { GGFIT_FOR_DEFAULT, "llama-server" }, { GGFIT_FOR_SERVER, "llama-server" },
        { GGFIT_FOR_CLI, "llama-cli" }, { GGFIT_FOR_BENCH, "llama-bench" },
        { GGFIT_FOR_FIT_PARAMS, "llama-fit-params" },
    };
    ggfit_program was = pl.program;
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        pl.program = progs[i].prog;
        command_is(&pl, &r, progs[i].name, by_path);
    }
    pl.program = was;
    char *cmd = ggfit_plan_command(&pl, &r, 0, NULL);
    assert_non_null(cmd);
    assert_non_null(strstr(cmd, " -ot 'blk[.]12[.]ffn_(gate|up|gate_up|down)=CPU,"));
    ggfit_free(cmd);

    /* the model as given: -hf REPO:QUANT (and -hff), -mu URL, an -m URL */
    h = r;
    h.hf_repo = "ggml-org/gpt-oss-120b-GGUF:MXFP4";
    const char *by_hf[] = { "-hf", "ggml-org/gpt-oss-120b-GGUF:MXFP4", NULL };
    command_is(&pl, &h, "llama-server", by_hf);
    h.hf_file = "it's here.gguf";
    const char *by_hff[] = { "-hf", "ggml-org/gpt-oss-120b-GGUF:MXFP4", "-hff",
                             "it's here.gguf", NULL };
    command_is(&pl, &h, "llama-server", by_hff);
    h = r;
    h.model_url = "https://example.com/m.gguf?x=1&y=2";
    const char *by_url[] = { "-mu", "https://example.com/m.gguf?x=1&y=2", NULL };
    command_is(&pl, &h, "llama-server", by_url);
    h = r;
    h.model = "http://host/m.gguf";
    const char *by_m_url[] = { "-mu", "http://host/m.gguf", NULL };
    command_is(&pl, &h, "llama-server", by_m_url);
    h.model = "/my models/$x (1).gguf";
    const char *odd_path[] = { "-m", "/my models/$x (1).gguf", NULL };
    command_is(&pl, &h, "llama-server", odd_path);
    const char *no_model[] = { NULL };
    command_is(&pl, NULL, "llama-server", no_model);
    ggfit_plan_free(&pl);

    /* the user's flags the plan leaves out, as given, before its words;
     * one the program does not take (llama-bench's --port) left out */
    snprintf(line, sizeof line, "-m %s --gpu rtx-3090 --host-mem 64GiB -c 8192 --port 8080 "
             "--jinja -c 8192", m);
    argc = split(line, argv, 16);
    ggfit_request_init(&r);
    assert_int_equal(parse_into(&r, argv, argc), 0);
    assert_int_equal(ggfit_request_plan(&r, &pl, &err), 0);
    char **words = ggfit_plan_argv(&pl, pl.program, NULL);
    char *flags = ggfit_argv_quote(words), want[2048];
    assert_non_null(flags);
    ggfit_argv_free(words);
    snprintf(want, sizeof want, "llama-server -m %s --port 8080 --jinja %s", m, flags);
    cmd = ggfit_plan_command(&pl, &r, argc, argv);
    assert_non_null(cmd);
    assert_string_equal(cmd, want);
    ggfit_free(cmd);
    ggfit_free(flags);
    cmd = ggfit_plan_command(&pl, &r, 0, NULL);   /* without the command line: none */
    assert_null(strstr(cmd, "--port"));
    ggfit_free(cmd);
    pl.program = GGFIT_FOR_BENCH;
    cmd = ggfit_plan_command(&pl, &r, argc, argv);
    assert_non_null(cmd);
    assert_null(strstr(cmd, "--port"));
    ggfit_free(cmd);
    ggfit_plan_free(&pl);

    /* nothing fits: nothing to run, as ggfit_plan_args */
    snprintf(line, sizeof line, "-m %s --gpu 4GiB --host-mem 8GiB -c 32768", m);
    argc = split(line, argv, 16);
    ggfit_request_init(&r);
    assert_int_equal(parse_into(&r, argv, argc), 0);
    assert_int_equal(ggfit_request_plan(&r, &pl, &err), 0);
    assert_int_not_equal(pl.verdict.status, GGFIT_VERDICT_FITS);
    cmd = ggfit_plan_command(&pl, &r, 0, NULL);
    char *args = ggfit_plan_args(&pl);
    assert_non_null(cmd);
    assert_non_null(args);
    assert_string_equal(cmd, "");
    assert_string_equal(args, "");
    ggfit_free(cmd);
    ggfit_free(args);
    ggfit_plan_free(&pl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_programs),
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
