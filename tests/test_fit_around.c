/*
 * test_fit_around.c - --fit-around: where llama.cpp's fit aborts because
 * -ngl, -ts, -ot, -cmoe or -ncmoe are set, the set flags are kept and the
 * unset ones fitted around them. Every fitted-around plan is checked the
 * way a user would: its printed flags, planned again (they end in
 * -fit off), keep every device's margin and hold the set flags as given.
 */
#include "test_util.h"

#define HOST "256GiB"

/* A plan as the CLI makes it, from an argv without the program name. */
static int plan_of(ggfit_plan *pl, const char *const *args)
{
    static char store[64][2048];
    char *argv[64];
    int argc = 0;
    snprintf(store[argc], sizeof store[0], "ggfit");
    argv[argc] = store[argc];
    argc++;
    for (; *args && argc < 64; args++, argc++) {
        snprintf(store[argc], sizeof store[0], "%s", *args);
        argv[argc] = store[argc];
    }
    ggfit_request r;
    ggfit_request_init(&r);
    char *err = NULL;
    for (int i = 1; i < argc;)
        if (ggfit_request_parse_arg(&r, argc, argv, &i, NULL, &err)) {
            fprintf(stderr, "%s\n", err);
            ggfit_free(err);
            return -1;
        }
    int rc = ggfit_request_plan(&r, pl, &err);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        ggfit_free(err);
    }
    return rc;
}

/* Plans model on gpu with flags and --fit-around. */
static void around(ggfit_plan *pl, const char *model, const char *gpu, const char *const *flags)
{
    char m[512];
    model_path(m, sizeof m, model);
    const char *args[32] = { "-m", m, "--gpu", gpu, "--host-mem", HOST, "--fit-around" };
    size_t n = 7;
    for (; *flags && n < 31; flags++)
        args[n++] = *flags;
    args[n] = NULL;
    assert_int_equal(plan_of(pl, args), 0);
}

/* The set flags of asked, kept in p. */
static void assert_kept(const ggfit_params *asked, const ggfit_params *p, size_t nd)
{
    if (asked->n_gpu_layers != GGFIT_NGL_AUTO)
        assert_int_equal(p->n_gpu_layers, asked->n_gpu_layers);
    if (asked->set_n_ctx)
        assert_int_equal(p->n_ctx, asked->n_ctx);
    bool ts = false;
    for (size_t d = 0; nd > 1 && d < nd; d++)
        ts |= asked->tensor_split[d] != 0.0f;
    for (size_t d = 0; ts && d < nd; d++)
        assert_true(p->tensor_split[d] == asked->tensor_split[d]);
    assert_true(p->n_overrides >= asked->n_overrides);
    for (uint32_t i = 0; i < asked->n_overrides; i++) {
        assert_string_equal(p->overrides[i].pattern, asked->overrides[i].pattern);
        assert_string_equal(p->overrides[i].buffer, asked->overrides[i].buffer);
    }
    assert_int_equal(p->cpu_moe, asked->cpu_moe);
    assert_int_equal(p->n_cpu_moe, asked->n_cpu_moe);
}

/* The plan's printed flags, planned again: llama.cpp loads them as they
 * are (-fit off: unchanged), every device keeps its margin, the whole
 * machine holds them, and the set flags are there as given. */
static void verify(const ggfit_plan *pl, const char *model, const char *gpu)
{
    assert_true(pl->has_alternative);
    assert_true(pl->fit_around);
    assert_int_equal(pl->around, GGFIT_AROUND_FITS);
    assert_int_equal(pl->fit.status, GGFIT_FIT_FAILED);   /* llama.cpp's own decision */
    assert_non_null(strstr(pl->fit.reason, "already set by user"));
    assert_int_equal(ggfit_plan_exit_status(pl), 0);
    assert_kept(&pl->asked, &pl->alternative.params, pl->n_devices);

    size_t n;
    char **w = ggfit_plan_argv(pl, GGFIT_FOR_SERVER, &n);
    assert_non_null(w);
    assert_true(n >= 2 && !strcmp(w[n - 2], "-fit") && !strcmp(w[n - 1], "off"));
    char m[512];
    model_path(m, sizeof m, model);
    const char *args[64] = { "-m", m, "--gpu", gpu, "--host-mem", HOST };
    size_t k = 6;
    for (size_t i = 0; i < n && k < 63; i++)
        args[k++] = w[i];
    args[k] = NULL;
    static ggfit_plan again;
    assert_int_equal(plan_of(&again, args), 0);
    assert_int_equal(again.fit.status, GGFIT_FIT_UNCHANGED);
    assert_int_equal(again.verdict.status, GGFIT_VERDICT_FITS);
    for (uint32_t i = 0; i < again.verdict.n_pools; i++)
        assert_int_equal(again.verdict.pools[i].short_by, 0);
    assert_kept(&pl->asked, &again.asked, pl->n_devices);
    /* the same memory as the fit around the flags projected */
    for (uint32_t d = 0; d < again.projection.n_devices; d++) {
        const ggfit_mem *a = &again.projection.devices[d], *b = &pl->alternative.projection.devices[d];
        assert_int_equal(a->model + a->context + a->compute, b->model + b->context + b->compute);
    }
    ggfit_plan_free(&again);
    ggfit_argv_free(w);
}

/* -ngl 99 -c 65536 on a 3090: the experts of the front blocks go to system
 * RAM (the MoE overflow of llama.cpp's fit), -ngl and -c kept. */
static void test_ngl_ctx_one_gpu(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *f[] = { "-ngl", "99", "-c", "65536", NULL };
    around(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090", f);
    verify(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090");
    const ggfit_params *p = &pl.alternative.params;
    assert_int_equal(p->n_gpu_layers, 99);
    assert_int_equal(pl.alternative.projection.n_ctx, 65536);
    assert_true(p->n_overrides > 10);
    assert_non_null(strstr(p->overrides[p->n_overrides - 1].pattern, "exps"));
    /* the JSON keeps llama.cpp's decision; the plan is the fitted one */
    char *j = ggfit_plan_json(&pl);
    assert_non_null(j);
    assert_non_null(strstr(j, "\"kept\": \"-c 65536 -ngl 99\""));
    assert_non_null(strstr(j, "\"status\": \"failed\""));
    assert_non_null(strstr(j, "\"args\": \"-c 65536 -ngl 99\""));
    assert_non_null(strstr(j, "\"fit_around\": {"));
    assert_non_null(strstr(j, "\"fits\": true"));
    ggfit_free(j);
    char *t = ggfit_plan_text(&pl, false);
    assert_non_null(strstr(t, "--fit-around: kept as given: -c 65536 -ngl 99; fitted around "
                              "them: -ot with 26 tensor overrides (the experts of 25 blocks, "
                              "part of the FFN of 1)"));
    ggfit_free(t);
    ggfit_plan_free(&pl);
}

/* Two GPUs, -ngl 99 (every layer): the split and overrides are those
 * llama.cpp's own fit chooses for every layer, -ngl kept. */
static void test_ngl_two_gpus_as_llama(void **state)
{
    (void)state;
    static ggfit_plan pl, own;
    const char *f[] = { "-ngl", "99", "-c", "65536", NULL };
    around(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090,rtx-3090", f);
    verify(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090,rtx-3090");
    char m[512];
    model_path(m, sizeof m, "gpt-oss-120b-mxfp4.gguf");
    const char *args[] = { "-m", m, "--gpu", "rtx-3090,rtx-3090", "--host-mem", HOST, "-c",
                           "65536", NULL };
    assert_int_equal(plan_of(&own, args), 0);
    assert_int_equal(own.fit.status, GGFIT_FIT_FITS);
    const ggfit_params *a = &pl.alternative.params, *b = &own.fit.params;
    assert_int_equal(b->n_gpu_layers, 37);   /* every layer, as -ngl 99 */
    assert_true(a->tensor_split[0] == b->tensor_split[0]);
    assert_true(a->tensor_split[1] == b->tensor_split[1]);
    assert_int_equal(a->n_overrides, b->n_overrides);
    for (uint32_t i = 0; i < a->n_overrides; i++) {
        assert_string_equal(a->overrides[i].pattern, b->overrides[i].pattern);
        assert_string_equal(a->overrides[i].buffer, b->overrides[i].buffer);
    }
    ggfit_plan_free(&own);
    ggfit_plan_free(&pl);
}

/* -ts 3,1 kept: the context, -ngl and the experts in system RAM fitted
 * with that split. */
static void test_ts_kept(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *f[] = { "-ts", "3,1", NULL };
    around(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090,rtx-3090", f);
    verify(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090,rtx-3090");
    const ggfit_params *p = &pl.alternative.params;
    assert_true(p->tensor_split[0] == 3.0f && p->tensor_split[1] == 1.0f);
    assert_true(p->n_overrides > 0);
    ggfit_plan_free(&pl);

    /* -ts 1,0: everything on the first GPU, printed as -ts 1 (no -ts at
     * all would split by free memory) */
    const char *z[] = { "-ts", "1,0", NULL };
    around(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090,rtx-3090", z);
    verify(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090,rtx-3090");
    char *line = ggfit_plan_args(&pl);
    assert_non_null(strstr(line, " -ts 1 "));
    ggfit_free(line);
    ggfit_plan_free(&pl);

    /* a dense model: the largest -ngl with that split */
    const char *g[] = { "-ts", "1,1", "-c", "32768", NULL };
    around(&pl, "llama-3.3-70b-Q4_K_M.gguf", "rtx-3090,rtx-3090", g);
    verify(&pl, "llama-3.3-70b-Q4_K_M.gguf", "rtx-3090,rtx-3090");
    uint32_t ngl = (uint32_t)pl.alternative.params.n_gpu_layers;
    assert_true(ngl > 40 && ngl < 81);
    assert_int_equal(pl.alternative.params.n_overrides, 0);
    ggfit_plan_free(&pl);

    /* -ngl and -ts on a dense model, -c unset: the context is what is left
     * to fit, the largest that does */
    const char *k[] = { "-ts", "1,3", "-ngl", "99", NULL };
    around(&pl, "llama-3.1-8b-Q4_K_M.gguf", "rtx-3090,rtx-4060", k);
    verify(&pl, "llama-3.1-8b-Q4_K_M.gguf", "rtx-3090,rtx-4060");
    uint32_t c = pl.alternative.projection.n_ctx;
    assert_true(c >= 4096 && c < 131072 && c % 256 == 0);
    ggfit_plan_free(&pl);
    char cs[16];
    snprintf(cs, sizeof cs, "%u", c + 256);   /* 256 more do not fit */
    const char *k2[] = { "-ts", "1,3", "-ngl", "99", "-c", cs, NULL };
    around(&pl, "llama-3.1-8b-Q4_K_M.gguf", "rtx-3090,rtx-4060", k2);
    assert_false(pl.has_alternative);
    assert_int_equal(pl.around, GGFIT_AROUND_FAILED);
    assert_non_null(strstr(pl.alternative.reason, "(-c as given)"));
    ggfit_plan_free(&pl);

    /* -ngl and -ts on a MoE model on unequal GPUs: only the experts move */
    const char *h[] = { "-ts", "3,1", "-ngl", "99", "-c", "16384", NULL };
    around(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090,rtx-4060", h);
    verify(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090,rtx-4060");
    ggfit_plan_free(&pl);
}

/* -ot kept in front of the fit's own overrides; -ncmoe kept, the fit's
 * overrides leave its blocks to it. */
static void test_overrides_kept(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *f[] = { "-ot", "ffn_up_exps=CPU", "-c", "32768", NULL };
    around(&pl, "qwen3-30b-a3b-Q4_K_M.gguf", "rtx-4060", f);
    verify(&pl, "qwen3-30b-a3b-Q4_K_M.gguf", "rtx-4060");
    assert_true(pl.alternative.params.n_overrides > 1);
    assert_string_equal(pl.alternative.params.overrides[0].pattern, "ffn_up_exps");
    ggfit_plan_free(&pl);

    const char *g[] = { "-ncmoe", "10", NULL };
    around(&pl, "qwen3-30b-a3b-Q4_K_M.gguf", "rtx-4060", g);
    verify(&pl, "qwen3-30b-a3b-Q4_K_M.gguf", "rtx-4060");
    const ggfit_params *p = &pl.alternative.params;
    assert_int_equal(p->n_cpu_moe, 10);
    for (uint32_t i = 0; i < p->n_overrides; i++) {
        unsigned il = 0;
        assert_int_equal(sscanf(p->overrides[i].pattern, "blk\\.%u", &il), 1);
        assert_true(il >= 10);
    }
    ggfit_plan_free(&pl);

    const char *h[] = { "-cmoe", "-c", "131072", "-np", "2", NULL };
    around(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-4060", h);
    if (pl.has_alternative)
        verify(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-4060");
    else
        assert_true(pl.around != GGFIT_AROUND_FITS);
    ggfit_plan_free(&pl);
}

/* A dense model, -ngl 99 on two small GPUs: the split fitted (and the
 * context, as llama.cpp reduces it first). */
static void test_dense_ngl(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *f[] = { "-ngl", "99", NULL };
    around(&pl, "qwen3-14b-Q4_K_M.gguf", "rtx-4060,rtx-4060", f);
    verify(&pl, "qwen3-14b-Q4_K_M.gguf", "rtx-4060,rtx-4060");
    const ggfit_params *p = &pl.alternative.params;
    assert_true(p->tensor_split[0] + p->tensor_split[1] == 41.0f);
    assert_true(pl.alternative.projection.n_ctx < 40960);
    ggfit_plan_free(&pl);
}

/* Combinations with nothing to fit say so, and the nearest changes stay. */
static void test_no_meaning(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *f[] = { "-ngl", "99", "-ts", "1,1", "-c", "32768", NULL };
    around(&pl, "llama-3.3-70b-Q4_K_M.gguf", "rtx-3090,rtx-3090", f);
    assert_false(pl.has_alternative);
    assert_true(pl.fit_around);
    assert_int_equal(pl.around, GGFIT_AROUND_FAILED);
    assert_non_null(strstr(pl.alternative.reason, "dense model"));
    assert_true(pl.n_changes > 0);
    assert_int_equal(ggfit_plan_exit_status(&pl), 1);
    char *t = ggfit_plan_text(&pl, false);
    assert_non_null(strstr(t, "nothing fits around them"));
    ggfit_free(t);
    ggfit_plan_free(&pl);

    const char *g[] = { "-ngl", "99", NULL };   /* one GPU, dense: -ngl is all there is */
    around(&pl, "qwen3-14b-Q4_K_M.gguf", "rtx-4060", g);
    assert_false(pl.has_alternative);
    assert_non_null(strstr(pl.alternative.reason, "-ngl 99 does not fit"));
    ggfit_plan_free(&pl);

    const char *o[] = { "-ngl", "99", "-fit", "off", NULL };   /* nothing is fitted */
    around(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090", o);
    assert_false(pl.has_alternative);
    assert_true(pl.fit_around);
    assert_int_equal(pl.around, GGFIT_AROUND_NOT_FITTED);
    char *u = ggfit_plan_text(&pl, false);
    assert_non_null(strstr(u, "--fit-around: -fit off checks the flags as given"));
    ggfit_free(u);
    ggfit_plan_free(&pl);

    const char *h[] = { "-ngl", "0", NULL };   /* a 1 GiB GPU: its margin is all of it */
    around(&pl, "qwen3-14b-Q4_K_M.gguf", "1GiB", h);
    assert_int_equal(pl.fit.status, GGFIT_FIT_FAILED);
    assert_false(pl.has_alternative);
    assert_non_null(strstr(pl.alternative.reason, "-ngl 0 keeps every layer in system memory"));
    ggfit_plan_free(&pl);
}

/* Without --fit-around nothing changes; with it, flags that fit as given
 * or a fit llama.cpp does itself are left alone. */
static void test_default_unchanged(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "gpt-oss-120b-mxfp4.gguf");
    static ggfit_plan pl;
    const char *a[] = { "-m", m, "--gpu", "rtx-3090", "--host-mem", HOST, "-ngl", "99", NULL };
    assert_int_equal(plan_of(&pl, a), 0);
    assert_false(pl.fit_around);
    assert_false(pl.has_alternative);
    char *j = ggfit_plan_json(&pl);
    assert_null(strstr(j, "fit_around"));
    ggfit_free(j);
    ggfit_plan_free(&pl);

    const char *f[] = { "-c", "32768", NULL };   /* nothing set: llama.cpp's fit */
    around(&pl, "gpt-oss-120b-mxfp4.gguf", "rtx-3090", f);
    assert_false(pl.fit_around);
    assert_int_equal(pl.fit.status, GGFIT_FIT_FITS);
    ggfit_plan_free(&pl);

    /* the library call: fit_around in the options */
    ggfit_model *mod;
    char *err = NULL;
    assert_int_equal(ggfit_model_open(m, &mod, &err), 0);
    ggfit_device dev[1];
    size_t nd;
    assert_int_equal(ggfit_devices_parse("rtx-3090", dev, 1, &nd, &err), 0);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_gpu_layers = 99;
    ggfit_fit_options o;
    ggfit_fit_options_init(&o);
    ggfit_fit_result r;
    assert_int_equal(ggfit_fit(mod, &p, dev, nd, &o, &r, &err), 0);
    assert_int_equal(r.status, GGFIT_FIT_FAILED);
    ggfit_fit_result_clear(&r);
    o.fit_around = true;
    assert_int_equal(ggfit_fit(mod, &p, dev, nd, &o, &r, &err), 0);
    assert_int_equal(r.status, GGFIT_FIT_FITS);
    assert_int_equal(r.params.n_gpu_layers, 99);
    assert_true(r.params.n_overrides > 0);
    assert_non_null(r.log);
    /* no_log: the same fit around the set flags, without the log */
    ggfit_fit_result q;
    o.no_log = true;
    assert_int_equal(ggfit_fit(mod, &p, dev, nd, &o, &q, &err), 0);
    assert_null(q.log);
    assert_int_equal(q.status, r.status);
    assert_string_equal(q.reason, r.reason);
    assert_int_equal(q.n_projections, r.n_projections);
    assert_int_equal(q.params.n_overrides, r.params.n_overrides);
    assert_memory_equal(q.params.overrides, r.params.overrides,
                        r.params.n_overrides * sizeof *r.params.overrides);
    assert_memory_equal(&q.projection, &r.projection, sizeof r.projection);
    ggfit_fit_result_clear(&r);
    ggfit_model_free(mod);
}

int main(void)
{
    ggfit_text_set_columns(0);   /* whole lines: the phrases are checked, not the layout */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ngl_ctx_one_gpu),
        cmocka_unit_test(test_ngl_two_gpus_as_llama),
        cmocka_unit_test(test_ts_kept),
        cmocka_unit_test(test_overrides_kept),
        cmocka_unit_test(test_dense_ngl),
        cmocka_unit_test(test_no_meaning),
        cmocka_unit_test(test_default_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
