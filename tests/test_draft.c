/*
 * test_draft.c - llama-server's draft model (-md) in a --for server plan:
 * measured as the server measures it before its fit (server-context.cpp
 * load_model, common_base_params_to_speculative: the target's -c, the
 * draft's -ngld/-ctkd/-ctvd/-otd, one output per slot), its bytes per
 * device added to that device's fit target, counted in the verdict's
 * pools, and printed in the plan's line. The figures are llama-server's
 * own: tools/servercmp.py --draft data/models/qwen3-0.6b-f16.gguf (the
 * draft's rows, 15 same on 0-2 devices) and with --fit-mib 16384 (the
 * targets and the fitted context, 6 same).
 */
#include "test_util.h"

static void plan_of(ggfit_plan *pl, const char *gpu, const char *const *words, int n)
{
    ggfit_request r;
    ggfit_request_init(&r);
    /* llama.cpp b10309's figures and decisions: the draft added to the
     * targets (from b10584 it is fitted beside the model: test_spec.c) */
    assert_int_equal(ggfit_llama_version_parse("b10309", &r.llama, NULL), GGFIT_OK);
    static char store[40][512];
    char *argv[40];
    int argc = 0;
    snprintf(store[argc++], 512, "-m");
    model_path(store[argc++], 512, "qwen3-14b-Q4_K_M.gguf");
    snprintf(store[argc++], 512, "-md");
    model_path(store[argc++], 512, "qwen3-0.6b-f16.gguf");
    snprintf(store[argc++], 512, "--gpu");
    snprintf(store[argc++], 512, "%s", gpu);
    snprintf(store[argc++], 512, "--host-mem");
    snprintf(store[argc++], 512, "64GiB");
    for (int k = 0; k < n && argc < 40; k++)
        snprintf(store[argc++], 512, "%s", words[k]);
    for (int k = 0; k < argc; k++)
        argv[k] = store[k];
    char *err = NULL;
    for (int i = 0; i < argc;)
        if (ggfit_request_parse_arg(&r, argc, argv, &i, NULL, &err))
            fail_msg("%s", err);
    if (ggfit_request_plan(&r, pl, &err))
        fail_msg("%s", err);
}

/* The draft at -c 0: its own trained context (40960), F16 cache: 5683
 * MiB on the device (the 5,959,067,680 B), llama-server's rows. */
static void measured(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *const w[] = { "--for", "server", "-np", "1" };
    plan_of(&pl, "rpc:16384MiB", w, 4);
    assert_true(pl.has_draft);
    assert_int_equal(pl.draft.n_ctx, 40960);
    assert_int_equal(pl.draft.n_devices, 1);
    assert_int_equal(pl.draft.devices[0].model, 1192230912ull);
    assert_int_equal(pl.draft.devices[0].context, 4697620480ull);
    assert_int_equal(pl.draft.devices[0].compute, 69216288ull);
    assert_int_equal(pl.draft.host.model, 311164928ull);
    assert_int_equal(pl.draft.host.compute, 46149664ull);
    assert_int_equal(pl.fit_options.extra_used[0], 5959067680ull);
    /* llama-server's fit with the draft in the target: -c 8704 */
    assert_int_equal(pl.fit.projection.n_ctx, 8704);
    /* the verdict's device pool holds the target and the draft */
    const ggfit_mem *t = &pl.projection.devices[0];
    assert_int_equal(pl.verdict.pools[0].used,
                     t->model + t->context + t->compute + 5959067680ull);
    char *line = ggfit_plan_args(&pl);
    assert_non_null(strstr(line, "-c 8704 -ngl all -np 1 -md "));
    assert_non_null(strstr(line, "qwen3-0.6b-f16.gguf -fit off"));
    ggfit_free(line);
    char *json = ggfit_plan_json(&pl);
    assert_non_null(strstr(json, "\"draft\""));
    assert_non_null(strstr(json, "4697620480"));
    ggfit_free(json);
    ggfit_plan_free(&pl);
}

/* Two devices, -ngld 20: llama-server's targets 2986.10 and 3092.84 MiB
 * (1024 + the draft's bytes on each), and its fit: the trained context. */
static void two_devices(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *const w[] = { "--for", "server", "-c", "0", "-ngld", "20" };
    plan_of(&pl, "rpc:16384MiB,rpc:16384MiB", w, 6);
    assert_int_equal(pl.draft.n_devices, 2);
    assert_int_equal(pl.fit_options.extra_used[0], 2057408512ull);
    assert_int_equal(pl.fit_options.extra_used[1], 2169338912ull);
    assert_int_equal(pl.fit.projection.n_ctx, 40960);
    char *line = ggfit_plan_args(&pl);
    assert_non_null(strstr(line, "-md "));
    assert_non_null(strstr(line, " -ngld 20 "));
    ggfit_free(line);
    ggfit_plan_free(&pl);
}

/* For llama-fit-params there is no draft (it refuses -md): noted as not
 * counted, the fit unchanged. The draft's own flags are parsed into the
 * draft's params, under every name. Without --for, the draft counts. */
static void not_server(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *const w[] = { "--for", "fit-params", "-ctkd", "q8_0",
                              "--spec-draft-type-v", "q8_0" };
    plan_of(&pl, "rpc:16384MiB", w, 6);
    assert_false(pl.has_draft);
    assert_int_equal(pl.fit_options.extra_used[0], 0);
    assert_non_null(strstr(notes_of(&pl), "not counted yet"));
    assert_non_null(strstr(notes_of(&pl), " -md"));
    ggfit_plan_free(&pl);

    const char *const s[] = { "-np", "1", "-ctkd", "q8_0", "-ctvd", "q8_0" };
    plan_of(&pl, "rpc:16384MiB", s, 6);
    assert_true(pl.has_draft);
    assert_null(strstr(notes_of(&pl), "not counted"));
    assert_non_null(strstr(notes_of(&pl), "-md: planned as on a GPU machine"));
    assert_true(pl.draft.devices[0].context < 4697620480ull * 6 / 10);
    char *line = ggfit_plan_args(&pl);
    assert_non_null(strstr(line, " -ctkd q8_0 -ctvd q8_0 "));
    ggfit_free(line);
    ggfit_plan_free(&pl);

    ggfit_request r;
    ggfit_request_init(&r);
    /* llama.cpp b10309's figures and decisions: the draft added to the
     * targets (from b10584 it is fitted beside the model: test_spec.c) */
    assert_int_equal(ggfit_llama_version_parse("b10309", &r.llama, NULL), GGFIT_OK);
    char *argv[] = { (char *)(uintptr_t)"-ngld", (char *)(uintptr_t)"x", NULL };
    int i = 0;
    char *err = NULL;
    assert_int_equal(ggfit_request_parse_arg(&r, 2, argv, &i, NULL, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "-ngld"));
    ggfit_free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measured),
        cmocka_unit_test(two_devices),
        cmocka_unit_test(not_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
