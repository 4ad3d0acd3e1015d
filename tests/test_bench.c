/*
 * test_bench.c - ggfit bench beside the plan: its verdict and exit status
 * are the plan's own for the same flags; a pasted llama-bench line planned
 * as llama-bench runs it (a context of n_prompt + n_gen + n_depth per test,
 * its comma lists combined in its order, its defaults); and this machine's
 * host bandwidth, measured once and kept in the cache folder, in the
 * speeds of a plan for this machine's memory.
 */
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "test_util.h"

/* ggfit bench -m ... (the library's, with the CLI's context rule). */
static void bench_of(const char *line, ggfit_bench_result *b)
{
    char buf[512], *argv[64], *err = NULL;
    int argc;
    ggfit_request r;
    ggfit_speed_options o;
    request_of(&r, line, buf, sizeof buf, argv, (int)(sizeof argv / sizeof argv[0]), &argc);
    ggfit_speed_options_init(&o);
    if (!r.params.set_n_ctx) {
        r.params.n_ctx = o.n_prompt + o.n_gen + o.depth;
        r.params.set_n_ctx = true;
    }
    r.fit.no_log = true;
    if (ggfit_bench(&r, &o, b, &err))
        fail_msg("%s: %s", line, err);
}

static void plan_of(const char *line, ggfit_plan *pl)
{
    char buf[512], *argv[64], *err = NULL;
    int argc;
    ggfit_request r;
    request_of(&r, line, buf, sizeof buf, argv, (int)(sizeof argv / sizeof argv[0]), &argc);
    r.fit.no_log = true;
    if (ggfit_request_plan(&r, pl, &err))
        fail_msg("%s: %s", line, err);
}

/* A llama-bench line (words after "llama-bench"), ggfit's flags first. */
static ggfit_status line_of(const char *ggfit_flags, const char *bench, ggfit_bench_result *b,
                            char **err)
{
    static char buf[1024], gbuf[512];
    char *argv[64], *gargv[64];
    int argc = 0, gargc;
    ggfit_request r;
    ggfit_bench_args *a = calloc(1, sizeof *a);
    ggfit_speed_options o;
    assert_non_null(a);
    request_of(&r, ggfit_flags, gbuf, sizeof gbuf, gargv,
               (int)(sizeof gargv / sizeof gargv[0]), &gargc);
    ggfit_bench_args_init(a);
    ggfit_speed_options_init(&o);
    snprintf(buf, sizeof buf, "%s", bench);
    for (char *t = strtok(buf, " "); t && argc < 62; t = strtok(NULL, " "))
        argv[argc++] = t;
    static char path[512];
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], "-m") && !strchr(argv[i + 1], ',')) {
            model_path(path, sizeof path, argv[i + 1]);
            argv[i + 1] = path;
        }
    ggfit_status rc = GGFIT_OK;
    for (int i = 0; i < argc && !rc;) {
        bool used;
        rc = ggfit_bench_parse_arg(a, &r, argc, argv, &i, &used, err);
        if (!rc && !used)
            fail_msg("%s: '%s' not taken", bench, argv[i]);
    }
    r.fit.no_log = true;
    if (!rc)
        rc = ggfit_bench_line(&r, a, &o, b, err);
    free(a);
    return rc;
}

static ggfit_bench_result *result(void)
{
    ggfit_bench_result *b = calloc(1, sizeof *b);
    assert_non_null(b);
    return b;
}

static void result_free(ggfit_bench_result *b)
{
    ggfit_bench_result_free(b);
    free(b);
}

/* ---- ggfit bench: the plan's verdict ----------------------------------------- */

/* Llama 3.3 70B with -ngl 99 on a 12 GB card: 6.6 t/s were it to fit, and
 * ggfit bench now says it does not, with the plan's own words and status. */
static void test_bench_says_no_fit(void **state)
{
    (void)state;
    const char *flags = "-m llama-3.3-70b-Q4_K_M.gguf --gpu rtx-3060-12gb -ngl 99 "
                        "--for fit-params";
    ggfit_bench_result *b = result();
    ggfit_plan *pl = calloc(1, sizeof *pl);
    assert_non_null(pl);
    bench_of(flags, b);
    char line[256];
    snprintf(line, sizeof line, "%s -c 640", flags);
    plan_of(line, pl);
    assert_int_equal(ggfit_plan_exit_status(pl), 1);
    assert_int_equal(b->exit_status, 1);
    assert_int_equal(b->tests[0].n_ctx, 640);
    char why[320], why_b[320];
    assert_string_equal(ggfit_verdict_summary(&b->tests[0].verdict, why_b, sizeof why_b),
                        ggfit_verdict_summary(&pl->verdict, why, sizeof why));
    assert_true(b->tests[0].speed.tg_tps > 6.0 && b->tests[0].speed.tg_tps < 7.5);
    char *t = ggfit_bench_text(b), *j = ggfit_bench_json(b), want[400];
    snprintf(want, sizeof want, "verdict: %s\n", why);
    assert_non_null(strstr(t, want));
    assert_non_null(strstr(t, "of the flags as given, were they to fit"));
    assert_non_null(strstr(j, "\"exit_status\": 1"));
    assert_non_null(strstr(j, "\"status\": \"no_fit\""));
    assert_non_null(strstr(j, "\"tg_tps\""));   /* the speed's fields stay */
    ggfit_free(t);
    ggfit_free(j);
    j = ggfit_speed_json(&b->tests[0].speed);   /* the speed alone, a document */
    assert_non_null(strstr(j, "\"kind\": \"speed\""));
    keep_json("bench-speed.json", j);
    ggfit_free(j);
    ggfit_plan_free(pl);
    free(pl);
    result_free(b);
    /* and a plan that fits says so, exit 0 */
    b = result();
    bench_of("-m llama-3.1-8b-Q4_K_M.gguf --gpu rtx-3090 --host-mem 64GiB --for fit-params", b);
    assert_int_equal(b->exit_status, 0);
    assert_int_equal(b->tests[0].status, GGFIT_VERDICT_FITS);
    result_free(b);
}

/* The devices hold it, system memory does not: 3, as the plan. */
static void test_bench_host_short(void **state)
{
    (void)state;
    const char *flags = "-m gpt-oss-120b-mxfp4.gguf --gpu rtx-3090 --host-mem 16GiB -c 4096 "
                        "--for fit-params";
    ggfit_bench_result *b = result();
    ggfit_plan *pl = calloc(1, sizeof *pl);
    assert_non_null(pl);
    bench_of(flags, b);
    plan_of(flags, pl);
    assert_int_equal(b->exit_status, ggfit_plan_exit_status(pl));
    assert_int_equal(b->exit_status, 3);
    char why[320], why_b[320];
    assert_string_equal(ggfit_verdict_summary(&b->tests[0].verdict, why_b, sizeof why_b),
                        ggfit_verdict_summary(&pl->verdict, why, sizeof why));
    ggfit_plan_free(pl);
    free(pl);
    result_free(b);
}

/* ---- a llama-bench line ------------------------------------------------------- */

/* -p 512 -n 128 -d 0,4096: four tests, each at its own context, memory
 * as the plan projects that context (the depth's state added on the host);
 * the largest context that does not fit decides. */
static void test_line_contexts(void **state)
{
    (void)state;
    ggfit_bench_result *b = result();
    char *err = NULL;
    assert_int_equal(line_of("--gpu rtx-3060-12gb",
                             "-m llama-3.3-70b-Q4_K_M.gguf -p 512 -n 128 -d 0,4096 -ngl 99", b,
                             &err),
                     GGFIT_OK);
    static const char *const names[] = { "pp512", "tg128", "pp512 @ d4096", "tg128 @ d4096" };
    static const uint32_t ctx[] = { 512, 128, 4608, 4224 };
    assert_int_equal(b->n_tests, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(b->tests[i].name, names[i]);
        assert_int_equal(b->tests[i].n_ctx, ctx[i]);
        assert_int_equal(b->tests[i].exit_status, 1);
        assert_true(b->tests[i].tps > 0);
    }
    assert_int_equal(b->decides, 2);
    assert_int_equal(b->exit_status, 1);
    /* the depth's K and V, f16: 80 layers x 8 heads x 128 x 2 x 2 bytes x 4096 */
    assert_int_equal(b->tests[2].state_bytes, (uint64_t)80 * 8 * 128 * 2 * 2 * 4096);
    assert_int_equal(b->tests[0].state_bytes, 0);
    /* the same projection as the plan's for that context and those flags */
    ggfit_plan *pl = calloc(1, sizeof *pl);
    assert_non_null(pl);
    plan_of("-m llama-3.3-70b-Q4_K_M.gguf --gpu rtx-3060-12gb -c 4608 -ngl 99 -fitp on "
            "--for bench", pl);
    assert_int_equal(b->tests[2].used[0], pl->verdict.pools[0].used);
    assert_int_equal(b->tests[2].used[1], pl->verdict.pools[1].used + b->tests[2].state_bytes);
    ggfit_plan_free(pl);
    free(pl);
    /* prompt at depth reads more cache: slower than at 0 */
    assert_true(b->tests[2].tps < b->tests[0].tps && b->tests[3].tps < b->tests[1].tps);
    char *t = ggfit_bench_text(b), *j = ggfit_bench_json(b);
    assert_non_null(strstr(t, "decided by pp512 @ d4096"));
    assert_non_null(strstr(t, "verdict: does not fit"));
    assert_null(strstr(t, "-c "));   /* no context change: the test decides it */
    assert_non_null(strstr(j, "\"test\": \"tg128 @ d4096\""));
    assert_non_null(strstr(j, "\"exit_status\": 1"));
    ggfit_free(t);
    ggfit_free(j);
    result_free(b);
}

/* llama-bench's defaults (-p 512 -n 128 -d 0, -ngl 99: every layer, no
 * fit), a -pg test, and what fits exits 0. */
static void test_line_defaults(void **state)
{
    (void)state;
    ggfit_bench_result *b = result();
    char *err = NULL;
    assert_int_equal(line_of("--gpu rtx-3090 --host-mem 64GiB",
                             "-m qwen3-0.6b-f16.gguf -pg 512,128 -r 3", b, &err),
                     GGFIT_OK);
    assert_int_equal(b->n_tests, 3);
    assert_string_equal(b->tests[0].name, "pp512");
    assert_string_equal(b->tests[1].name, "tg128");
    assert_string_equal(b->tests[2].name, "pp512+tg128");
    assert_int_equal(b->tests[2].n_ctx, 640);
    assert_int_equal(b->reps, 3);
    assert_int_equal(b->exit_status, 0);
    assert_int_equal(b->decides, 2);   /* every test fits: the largest context */
    /* every layer on the GPU */
    assert_int_equal(b->plan.projection.n_gpu_layers, 29);
    /* pp+tg: both tokens over both times */
    double pp = b->tests[0].tps, tg = b->tests[1].tps, pg = b->tests[2].tps;
    assert_true(pg < pp && pg > tg);
    assert_int_equal(b->n_ignored, 1);
    assert_string_equal(b->ignored[0], "-r");
    char *t = ggfit_bench_text(b);
    assert_non_null(strstr(t, "note: ignored (no effect on memory or on the predicted t/s): -r\n"));
    ggfit_free(t);
    result_free(b);
}

/* Comma lists and ranges combine as llama-bench combines them: -ctk outside
 * -fa, each instance with every test. */
static void test_line_lists(void **state)
{
    (void)state;
    ggfit_bench_result *b = result();
    char *err = NULL;
    assert_int_equal(line_of("--gpu rtx-3090 --host-mem 64GiB",
                             "-m qwen3-0.6b-f16.gguf -n 0 -p 256-1024*2 -fa 0,1 -ctk f16,q8_0",
                             b, &err),
                     GGFIT_OK);
    assert_int_equal(b->n_tests, 12);
    static const char *const flags[] = { "-ctk f16 -fa 0", "-ctk f16 -fa 1", "-ctk q8_0 -fa 0",
                                         "-ctk q8_0 -fa 1" };
    for (size_t i = 0; i < 12; i++) {
        assert_int_equal(b->tests[i].instance, i / 3);
        assert_string_equal(b->tests[i].flags, flags[i / 3]);
        assert_int_equal(b->tests[i].n_prompt, 256u << (i % 3));
    }
    /* a q8_0 K cache is smaller than f16 at the same context */
    assert_true(b->tests[8].used[0] < b->tests[2].used[0]);
    result_free(b);
}

/* -fitt: llama-bench fits at the test's context, its -ngl set aside. */
static void test_line_fit(void **state)
{
    (void)state;
    ggfit_bench_result *b = result();
    char *err = NULL;
    assert_int_equal(line_of("--gpu 6GiB", "-m llama-3.1-8b-Q4_K_M.gguf -ngl 99 -fitt 512 "
                                           "-d 65536 -n 0", b, &err),
                     GGFIT_OK);
    assert_true(b->fitted);
    assert_int_equal(b->exit_status, 0);
    assert_true(b->plan.fit.params.n_gpu_layers < 33);
    assert_int_equal(b->plan.verdict.pools[0].margin, (uint64_t)512 << 20);
    assert_non_null(strstr(b->tests[0].flags, "(fitted: -ngl "));
    result_free(b);
}

static void test_line_errors(void **state)
{
    (void)state;
    static const struct { const char *line, *want; } bad[] = {
        { "-m qwen3-0.6b-f16.gguf -sm tensor", "-sm tensor" },
        { "-m qwen3-0.6b-f16.gguf -ngl x", "expected numbers or ranges" },
        { "-m qwen3-0.6b-f16.gguf -p 1-100", "more than" },
        { "-m a.gguf,b.gguf", "one model at a time" },
        { "-m qwen3-0.6b-f16.gguf -nkvo 2", "expected 0 or 1" },
        { "-m qwen3-0.6b-f16.gguf -fa maybe", "expected on, off or auto" },
        { "-m qwen3-0.6b-f16.gguf -ctk q3_k", "unsupported cache type" },
        { "-m qwen3-0.6b-f16.gguf -p 0 -n 0", "no test to run" },
        { "-m qwen3-0.6b-f16.gguf -pg 512", "expected pp,tg" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ggfit_bench_result *b = result();
        char *err = NULL;
        ggfit_status rc = line_of("--gpu rtx-3090 --host-mem 64GiB", bad[i].line, b, &err);
        if (rc != GGFIT_EINVAL || !err || !strstr(err, bad[i].want))
            fail_msg("%s: status %d, '%s' (want '%s')", bad[i].line, rc, err ? err : "",
                     bad[i].want);
        ggfit_free(err);
        free(b);
    }
}

/* Any allocation of a line's planning can fail: GGFIT_ENOMEM, nothing
 * kept (the sanitizer and valgrind builds check the leaks). A failure
 * that only empties a text (the speed's assumptions) leaves GGFIT_OK. */
static void test_line_enomem(void **state)
{
    (void)state;
    uint64_t n, total = 0;
    for (n = 1;; n++) {
        ggfit_bench_result *b = result();
        char *err = NULL;
        ggfit__fail_alloc_after(n);
        ggfit_status rc = line_of("--gpu rtx-3090 --host-mem 64GiB",
                                  "-m qwen3-0.6b-f16.gguf -p 512 -n 0 -d 0,1024", b, &err);
        uint64_t made = ggfit__fail_alloc_after(0);
        if (rc != GGFIT_OK) {
            assert_int_equal(rc, GGFIT_ENOMEM);
            ggfit_free(err);
            free(b);
        } else {
            result_free(b);
        }
        total = made > total ? made : total;
        if (made < n)
            break;
    }
    assert_true(total > 20);   /* the lists, the plans, the speeds */
}

/* ---- this machine's host bandwidth ------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Kept, read back, measured again for another machine or when stale;
 * GGFIT_HOST_BW decides instead when set. */
static void test_host_bw_cache(void **state)
{
    (void)state;
    char dir[256], path[300], text[300];
    snprintf(dir, sizeof dir, "%s/cache-a", tmp_dir());
    snprintf(path, sizeof path, "%s/host-bw", dir);
    setenv("GGFIT_CACHE_DIR", dir, 1);
    unsetenv("GGFIT_HOST_BW");
    ggfit_host_bw m = { .single_gbs = 6.5, .all_gbs = 7.8, .n_threads = 2 };
    ggfit_host_bw_figure f;
    char *err = NULL;
    assert_int_equal(ggfit_host_bw_keep("Test CPU A", 1000, &m, &err), GGFIT_OK);
    assert_int_equal(ggfit_host_bw_cached("Test CPU A", 1000, &f, &err), GGFIT_OK);
    assert_true(f.gbs == 7.8 && !f.fresh);
    assert_non_null(strstr(f.source, "measured on this machine 2"));
    /* other memory: measured again (bounded), and kept for it */
    double t0 = (double)clock() / CLOCKS_PER_SEC;
    time_t w0 = time(NULL);
    assert_int_equal(ggfit_host_bw_cached("Test CPU A", 2000, &f, &err), GGFIT_OK);
    assert_true(f.fresh && f.gbs > 0.1);
    /* about a tenth of a second here; the bound is loose because ThreadSanitizer
     * on a loaded 2-core machine made it 2 s (a whole measure's buffers are
     * up to 1 GiB, each page touched) */
    assert_true(time(NULL) - w0 <= 10 && (double)clock() / CLOCKS_PER_SEC - t0 < 10.0);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(text, sizeof text, fp));
    assert_non_null(fgets(text, sizeof text, fp));
    assert_string_equal(text, "cpu Test CPU A\n");
    assert_non_null(fgets(text, sizeof text, fp));
    assert_string_equal(text, "memory 2000\n");
    fclose(fp);
    /* stale: older than GGFIT_HOST_BW_MAX_AGE_DAYS */
    snprintf(text, sizeof text, "ggfit-host-bw 2\ncpu Test CPU B\nmemory 1000\nmeasured %lld\n"
             "gbs 3.5\ngflops 100 200 2\n", (long long)time(NULL) - (GGFIT_HOST_BW_MAX_AGE_DAYS + 1) * 86400LL);
    write_file(path, text);
    assert_int_equal(ggfit_host_bw_cached("Test CPU B", 1000, &f, &err), GGFIT_OK);
    assert_true(f.fresh);
    /* young enough: read, not measured */
    snprintf(text, sizeof text, "ggfit-host-bw 2\ncpu Test CPU C\nmemory 1000\nmeasured %lld\n"
             "gbs 3.5\ngflops 100 200 2\n", (long long)time(NULL) - 86400LL);
    write_file(path, text);
    assert_int_equal(ggfit_host_bw_cached("Test CPU C", 1000, &f, &err), GGFIT_OK);
    assert_true(f.gbs == 3.5 && !f.fresh);
    assert_true(f.gflops_thread == 100 && f.gflops_all == 200 && f.n_cpus == 2);
    /* a version 1 file (no compute): measured again */
    snprintf(text, sizeof text, "ggfit-host-bw 1\ncpu Test CPU D\nmemory 1000\nmeasured %lld\n"
             "gbs 3.5\n", (long long)time(NULL) - 86400LL);
    write_file(path, text);
    assert_int_equal(ggfit_host_bw_cached("Test CPU D", 1000, &f, &err), GGFIT_OK);
    assert_true(f.fresh && f.gflops_thread > 0 && f.gflops_all > 0);
    /* GGFIT_HOST_BW: a figure, or the default */
    setenv("GGFIT_HOST_BW", "12.5", 1);
    assert_int_equal(ggfit_host_bw_cached("Test CPU C", 1000, &f, &err), GGFIT_OK);
    assert_true(f.gbs == 12.5);
    assert_string_equal(f.source, "GGFIT_HOST_BW=12.5");
    setenv("GGFIT_HOST_BW", "default", 1);
    assert_int_equal(ggfit_host_bw_cached("Test CPU C", 1000, &f, &err), GGFIT_OK);
    assert_true(f.gbs == 0);
    setenv("GGFIT_HOST_BW", "fast", 1);
    assert_int_equal(ggfit_host_bw_cached("Test CPU C", 1000, &f, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "GGFIT_HOST_BW=fast"));
    ggfit_free(err);
    setenv("GGFIT_HOST_BW", "default", 1);
    unsetenv("GGFIT_CACHE_DIR");
}

/* A plan for this machine's memory with part of it there takes the kept
 * figure (at 100%: a measured read is what llama.cpp's threads reach);
 * --host-mem describes another machine: the default. */
static void test_host_bw_in_plans(void **state)
{
    (void)state;
    char dir[256], path[300], text[300];
    snprintf(dir, sizeof dir, "%s/cache-b", tmp_dir());
    snprintf(path, sizeof path, "%s/host-bw", dir);
    mkdir(dir, 0755);
    setenv("GGFIT_CACHE_DIR", dir, 1);
    unsetenv("GGFIT_HOST_BW");
    ggfit_host_info h;
    char *err = NULL;
    assert_int_equal(ggfit_host_probe(NULL, &h, &err), GGFIT_OK);
    snprintf(text, sizeof text, "ggfit-host-bw 2\ncpu %s\nmemory %llu\nmeasured %lld\n"
             "gbs 7.8\ngflops 100 200 2\n", h.cpu_name[0] ? h.cpu_name : "unknown CPU",
             (unsigned long long)h.total, (long long)time(NULL));
    write_file(path, text);
    const char *line = "-m llama-3.1-8b-Q4_K_M.gguf --gpu 4GiB -ngl 20 -c 2048 --for fit-params";
    ggfit_plan *pl = calloc(1, sizeof *pl);
    assert_non_null(pl);
    plan_of(line, pl);
    assert_true(pl->host.this_machine);
    assert_true(pl->speed.host_used);
    assert_true(pl->speed.host_bw_gbs == 7.8);
    assert_int_equal(pl->speed.host_bw_kind, GGFIT_HOST_BW_MEASURED);
    char *t = ggfit_plan_text(pl, false);
    assert_non_null(strstr(t, "host memory 7.8 GB/s, measured on this machine"));
    ggfit_free(t);
    ggfit_plan_free(pl);
    ggfit_bench_result *b = result();
    bench_of(line, b);
    const ggfit_speed *s = &b->tests[0].speed;
    assert_true(s->host_bw_gbs == 7.8 && s->host_efficiency == 1.0);
    t = ggfit_bench_text(b);
    assert_non_null(strstr(t, "host memory 7.8 GB/s (measured on this machine "));
    ggfit_free(t);
    char *j = ggfit_bench_json(b);
    assert_non_null(strstr(j, "\"kind\": \"measured\""));
    ggfit_free(j);
    result_free(b);
    /* the sweep's points too, and its table says so */
    ggfit_sweep *sw = calloc(1, sizeof *sw);
    ggfit_speed_options so;
    char buf[512], *argv[64];
    int argc;
    ggfit_request r;
    assert_non_null(sw);
    ggfit_speed_options_init(&so);
    request_of(&r, line, buf, sizeof buf, argv, (int)(sizeof argv / sizeof argv[0]), &argc);
    r.fit.no_log = true;
    assert_int_equal(ggfit_request_sweep(&r, GGFIT_SWEEP_NGL, &so, sw, &err), GGFIT_OK);
    assert_true(sw->host_used && sw->host_bw_gbs == 7.8);
    t = ggfit_sweep_text(sw);
    assert_non_null(strstr(t, "; host memory 7.8 GB/s (measured on this machine "));
    ggfit_free(t);
    free(sw);
    /* another machine's memory: the default, nothing measured */
    char other[256];
    snprintf(other, sizeof other, "%s --host-mem 64GiB", line);
    plan_of(other, pl);
    assert_false(pl->host.this_machine);
    assert_int_equal(pl->speed.host_bw_kind, GGFIT_HOST_BW_DEFAULT);
    assert_true(pl->speed.host_bw_gbs == 89.6);
    ggfit_plan_free(pl);
    /* every layer on the GPU: the host's figure is not looked up */
    unlink(path);
    plan_of("-m llama-3.1-8b-Q4_K_M.gguf --gpu rtx-3090 -c 2048 --for fit-params", pl);
    assert_false(pl->speed.host_used);
    assert_int_equal(access(path, F_OK), -1);
    ggfit_plan_free(pl);
    free(pl);
    setenv("GGFIT_HOST_BW", "default", 1);
    unsetenv("GGFIT_CACHE_DIR");
}

int main(void)
{
    ggfit_text_set_columns(0);   /* whole lines: the phrases are checked, not the layout */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bench_says_no_fit),
        cmocka_unit_test(test_bench_host_short),
        cmocka_unit_test(test_line_contexts),
        cmocka_unit_test(test_line_defaults),
        cmocka_unit_test(test_line_lists),
        cmocka_unit_test(test_line_fit),
        cmocka_unit_test(test_line_errors),
        cmocka_unit_test(test_line_enomem),
        cmocka_unit_test(test_host_bw_cache),
        cmocka_unit_test(test_host_bw_in_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
