/*
 * test_speed_plans.c - speeds beyond ggfit bench: every plan carries its
 * predicted speeds (the same as ggfit bench's for the same flags), the quant
 * list ranks plans with part in RAM by them, --objective speed finds a
 * faster plan than llama.cpp's where one exists and never a slower one,
 * ggfit sweep's points, and the host bandwidth measurement stays bounded.
 */
#include <time.h>

#include "test_util.h"

static void test_plan_carries_bench_speed(void **state)
{
    (void)state;
    char buf[512], *argv[32];
    int argc;
    ggfit_request r;
    ggfit_plan pl;
    ggfit_bench_result *b = calloc(1, sizeof *b);
    ggfit_speed_options o;
    char *err = NULL;
    const char *line = "-m gpt-oss-120b-mxfp4.gguf --gpu rtx-3090 --host-mem 128GiB";
    assert_non_null(b);
    request_of(&r, line, buf, sizeof buf, argv, (int)(sizeof argv / sizeof argv[0]), &argc);
    assert_int_equal(ggfit_request_plan(&r, &pl, &err), GGFIT_OK);
    assert_true(pl.speed.ok);
    assert_int_equal(pl.speed.n_prompt, 512);
    assert_int_equal(pl.speed.n_gen, 128);
    assert_int_equal(pl.speed.depth, 0);
    /* experts in RAM: the host reads a part of every token */
    assert_true(pl.speed.host_bytes_per_token > 100000000u);
    ggfit_speed_options_init(&o);
    request_of(&r, line, buf, sizeof buf, argv, (int)(sizeof argv / sizeof argv[0]), &argc);
    assert_int_equal(ggfit_bench(&r, &o, b, &err), GGFIT_OK);
    const ggfit_speed *sp = &b->tests[0].speed;
    assert_true(sp->tg_tps == pl.speed.tg_tps && sp->pp_tps == pl.speed.pp_tps);
    /* the plan's own verdict and exit status */
    assert_int_equal(b->exit_status, ggfit_plan_exit_status(&pl));
    char why[320], why_b[320];
    assert_string_equal(ggfit_verdict_summary(&b->tests[0].verdict, why_b, sizeof why_b),
                        ggfit_verdict_summary(&pl.verdict, why, sizeof why));
    ggfit_bench_result_free(b);
    free(b);
    char *text = ggfit_plan_text(&pl, false), *json = ggfit_plan_json(&pl);
    assert_non_null(strstr(text, "predicted speed: pp512 "));
    assert_non_null(strstr(json, "\"tg_tps\""));
    /* llama-fit-params' own fields stay as they were */
    assert_non_null(strstr(json, "\"status\": \"fits\""));
    ggfit_free(text);
    ggfit_free(json);
    ggfit_plan_free(&pl);
}

static void test_quants_part_in_ram_by_speed(void **state)
{
    (void)state;
    char buf[512], *argv[32];
    int argc;
    ggfit_request r;
    ggfit_quant_list l;
    char *err = NULL;
    request_of(&r, "--gpu rtx-3060-12gb --host-mem 64GiB", buf, sizeof buf, argv,
               (int)(sizeof argv / sizeof argv[0]), &argc);
    char a[512], b[512], c[512];
    model_path(a, sizeof a, "qwen3-14b-f16.gguf");
    model_path(b, sizeof b, "gpt-oss-20b-mxfp4.gguf");
    model_path(c, sizeof c, "qwen3-30b-a3b-Q4_K_M.gguf");
    const char *models[] = { a, b, c };
    assert_int_equal(ggfit_request_quants(&r, models, 3, &l, &err), GGFIT_OK);
    assert_int_equal(l.n, 3);
    for (size_t i = 0; i < l.n; i++)
        assert_int_equal(l.quants[i].rank, GGFIT_RANK_PART_IN_RAM);
    /* the largest file (f16) would come first by size; by speed it is last */
    for (size_t i = 1; i < l.n; i++)
        assert_true(l.quants[i - 1].plan->speed.tg_tps >= l.quants[i].plan->speed.tg_tps);
    assert_non_null(strstr(l.quants[2].name, "qwen3-14b-f16"));
    char *t = ggfit_quant_list_text(&l);
    assert_non_null(strstr(t, "tg t/s"));
    ggfit_free(t);
    ggfit_quant_list_free(&l);
}

static void fastest_of(const char *line, ggfit_fastest *f)
{
    char buf[512], *argv[32];
    int argc;
    ggfit_request r;
    ggfit_fastest_options o;
    char *err = NULL;
    request_of(&r, line, buf, sizeof buf, argv, (int)(sizeof argv / sizeof argv[0]), &argc);
    ggfit_fastest_options_init(&o);
    if (ggfit_request_fastest(&r, &o, f, &err))
        fail_msg("%s: %s", line, err);
}

/* An RTX 3090 beside an RTX 3060: llama.cpp splits Llama 3.1 8B by free
 * memory, a third on the slow card; all on the 3090 is faster. */
static void test_fastest_fills_the_fast_gpu(void **state)
{
    (void)state;
    ggfit_fastest *f = calloc(1, sizeof *f);
    assert_non_null(f);
    fastest_of("-m llama-3.1-8b-Q4_K_M.gguf --gpu rtx-3090,rtx-3060-12gb --host-mem 64GiB", f);
    assert_true(f->found && f->faster && f->has_best_plan);
    assert_true(f->best_speed.tg_tps > 1.3 * f->own_speed.tg_tps);
    assert_int_equal(f->best.verdict.status, GGFIT_VERDICT_FITS);
    assert_int_equal(f->best.projection.n_ctx, 131072);   /* the trained context still fits */
    char *args = ggfit_plan_args(&f->best);
    assert_non_null(strstr(args, "-ts "));
    ggfit_free(args);
    char *json = ggfit_fastest_json(f);
    assert_non_null(strstr(json, "\"faster\": true"));
    ggfit_free(json);
    ggfit_fastest_free(f);
    free(f);
}

/* On the shared layouts, the chosen plan is never slower than llama.cpp's
 * and always fits. */
static void test_fastest_never_slower(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "-m gpt-oss-120b-mxfp4.gguf --gpu rtx-3090 --host-mem 128GiB",
        "-m gpt-oss-20b-mxfp4.gguf --gpu rtx-3060-12gb --host-mem 32GiB",
        "-m qwen3-30b-a3b-Q4_K_M.gguf --gpu rtx-4060-ti-16gb --host-mem 64GiB",
        "-m qwen3-14b-Q4_K_M.gguf --gpu rtx-3060-12gb --host-mem 32GiB -c 32768",
        "-m llama-3.3-70b-Q4_K_M.gguf --gpu rtx-3090,rtx-3090 --host-mem 64GiB",
        "-m mixtral-8x7b-Q4_K_M.gguf --gpu rtx-4090,rtx-3060-12gb --host-mem 64GiB",
        "-m qwen3-14b-Q4_K_M.gguf --gpu none --host-mem 32GiB",
    };
    ggfit_fastest *f = calloc(1, sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        fastest_of(lines[i], f);
        if (f->own_speed.ok) {
            assert_true(f->found);
            if (f->best_speed.tg_tps < f->own_speed.tg_tps)
                fail_msg("%s: %.2f t/s against llama.cpp's %.2f", lines[i],
                         f->best_speed.tg_tps, f->own_speed.tg_tps);
        }
        if (f->faster)
            assert_int_equal(f->best.verdict.status, GGFIT_VERDICT_FITS);
        ggfit_fastest_free(f);
    }
    free(f);
}

static void test_sweep_context(void **state)
{
    (void)state;
    char buf[512], *argv[32];
    int argc;
    ggfit_request r;
    ggfit_speed_options o;
    char *err = NULL;
    ggfit_sweep *s = calloc(1, sizeof *s);
    assert_non_null(s);
    request_of(&r, "-m qwen3-14b-Q4_K_M.gguf --gpu rtx-3060-12gb --host-mem 64GiB", buf,
               sizeof buf, argv, (int)(sizeof argv / sizeof argv[0]), &argc);
    ggfit_speed_options_init(&o);
    assert_int_equal(ggfit_request_sweep(&r, GGFIT_SWEEP_CTX, &o, s, &err), GGFIT_OK);
    /* 512 doubling to 32768, then the trained 40960 */
    assert_int_equal(s->n_points, 8);
    assert_int_equal(s->points[0].x, 512);
    assert_int_equal(s->points[7].x, 40960);
    assert_int_equal(s->n_pools, 2);
    for (size_t k = 1; k < s->n_points; k++) {
        /* llama.cpp's fit offloads fewer layers as the cache grows */
        assert_true(s->points[k].n_gpu_layers <= s->points[k - 1].n_gpu_layers);
        assert_true(s->points[k].tg_tps <= s->points[k - 1].tg_tps + 1e-9);
        assert_true(s->points[k].tg_tps_full <= s->points[k].tg_tps);
        assert_true(s->points[k].fits);
    }
    assert_true(s->points[7].n_gpu_layers < 41);
    char *svg = ggfit_sweep_svg(s), *csv = ggfit_sweep_csv(s), *js = ggfit_sweep_json(s);
    assert_true(!strncmp(svg, "<svg ", 5));
    assert_non_null(strstr(svg, "<polyline"));
    assert_non_null(strstr(csv, "ctx,n_ctx,n_gpu_layers,fits,pp_tps,tg_tps,tg_tps_full,"
                                "used_CUDA0,limit_CUDA0,used_Host,limit_Host\n512,"));
    assert_non_null(strstr(js, "\"axis\": \"ctx\""));
    ggfit_free(svg);
    ggfit_free(csv);
    ggfit_free(js);
    /* -ncmoe: fewer blocks' experts in RAM, more memory on the GPU */
    request_of(&r, "-m qwen3-30b-a3b-Q4_K_M.gguf --gpu rtx-4060-ti-16gb --host-mem 64GiB", buf,
               sizeof buf, argv, (int)(sizeof argv / sizeof argv[0]), &argc);
    assert_int_equal(ggfit_request_sweep(&r, GGFIT_SWEEP_NCMOE, &o, s, &err), GGFIT_OK);
    assert_int_equal(s->n_points, 49);
    assert_false(s->points[0].fits);
    assert_true(s->points[48].fits);
    assert_true(s->points[48].used[0] < s->points[0].used[0]);
    assert_true(s->points[48].tg_tps < s->points[0].tg_tps);
    free(s);
}

static void test_host_measure_bounded(void **state)
{
    (void)state;
    ggfit_host_bw b;
    char *err = NULL;
    assert_int_equal(ggfit_host_measure((uint64_t)32 << 20, &b, &err), GGFIT_OK);
    assert_true(b.single_gbs > 0.1 && b.all_gbs > 0.1);
    assert_true(b.n_threads >= 1);
    assert_int_equal(b.buffer_bytes, (uint64_t)32 << 20);
    assert_true(b.ms < 2000);
    char *t = ggfit_host_bw_text(&b);
    assert_non_null(strstr(t, "GPU memory is not measured"));
    ggfit_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_carries_bench_speed),
        cmocka_unit_test(test_quants_part_in_ram_by_speed),
        cmocka_unit_test(test_fastest_fills_the_fast_gpu),
        cmocka_unit_test(test_fastest_never_slower),
        cmocka_unit_test(test_sweep_context),
        cmocka_unit_test(test_host_measure_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
