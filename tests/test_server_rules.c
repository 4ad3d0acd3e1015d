/*
 * test_server_rules.c - ggfit --for server plans as llama-server itself
 * fits (ggfit_params_server): -np auto is 4 slots with a unified cache, the
 * graph is reserved for one output per slot (server_n_outputs_max) instead
 * of -b, and the prompt cache (--cache-ram) is host memory in the verdict.
 * The bytes are llama-server's own (tools/servercmp.py, the fit measurement
 * printed by its shim; -c 18688 is the context llama-server's fit chose on
 * a 12288 MiB device: tools/servercmp.py --fit-mib 12288).
 */
#include "test_util.h"

static void rules(void **state)
{
    (void)state;
    ggfit_params p;
    ggfit_params_init(&p);
    ggfit_params_server(&p, -2);
    assert_int_equal(p.n_seq, 4);
    assert_true(p.kv_unified);
    assert_int_equal(p.n_outputs_max, 4);
    assert_int_equal(p.cache_ram_mib, 8192);

    /* -np given: kept, and no unified cache unless asked */
    char line[] = "-np 2 -b 1 --embedding -ub 64 --pooling mean", *argv[9];
    int i = 0;
    for (char *t = strtok(line, " "); t && i < 9; t = strtok(NULL, " "))
        argv[i++] = t;
    i = 0;
    ggfit_params_init(&p);
    assert_int_equal(ggfit_params_parse_arg(&p, 2, argv, &i, NULL, NULL), GGFIT_OK);
    ggfit_params_server(&p, 0);
    assert_int_equal(p.n_seq, 2);
    assert_false(p.kv_unified);
    assert_int_equal(p.n_outputs_max, 2);
    assert_int_equal(p.cache_ram_mib, 0);

    /* at most -b */
    i = 2;
    ggfit_params_init(&p);
    assert_int_equal(ggfit_params_parse_arg(&p, 4, argv, &i, NULL, NULL), GGFIT_OK);
    ggfit_params_server(&p, -2);
    assert_int_equal(p.n_outputs_max, 1);

    /* embeddings: every token of the batch, -b cut to -ub */
    i = 4;
    ggfit_params_init(&p);
    assert_int_equal(ggfit_params_parse_arg(&p, 5, argv, &i, NULL, NULL), GGFIT_OK);
    assert_int_equal(ggfit_params_parse_arg(&p, 7, argv, &i, NULL, NULL), GGFIT_OK);
    ggfit_params_server(&p, -2);
    assert_int_equal(p.n_outputs_max, 64);

    /* a pooling other than none, even without --embedding */
    i = 7;
    ggfit_params_init(&p);
    assert_int_equal(ggfit_params_parse_arg(&p, 9, argv, &i, NULL, NULL), GGFIT_OK);
    ggfit_params_server(&p, -2);
    assert_int_equal(p.n_outputs_max, 2048);
}

static void plan_of(ggfit_plan *pl, const char *const *words, int n)
{
    ggfit_request r;
    ggfit_request_init(&r);
    static char store[32][512];
    char *argv[32];
    int argc = 0;
    snprintf(store[argc++], 512, "-m");
    model_path(store[argc++], 512, "qwen3-14b-Q4_K_M.gguf");
    snprintf(store[argc++], 512, "--gpu");
    snprintf(store[argc++], 512, "rpc:12288MiB");
    snprintf(store[argc++], 512, "--host-mem");
    snprintf(store[argc++], 512, "64GiB");
    for (int k = 0; k < n && argc < 32; k++)
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

/* llama-server's measurement of qwen3-14b Q4_K_M with every layer on one
 * device, its trained context (40960) and -np auto: 172 MiB of compute on
 * the device, where llama-fit-params' rules reserve 307 MiB. */
static void measured(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *const server[] = { "--for", "server", "-fitp", "on" };
    plan_of(&pl, server, 4);
    assert_int_equal(pl.projection.n_devices, 1);
    assert_int_equal(pl.projection.devices[0].model, 8558218240ull);
    assert_int_equal(pl.projection.devices[0].context, 6710886400ull);
    assert_int_equal(pl.projection.devices[0].compute, 180365344ull);
    assert_int_equal(pl.projection.host.model, 437575680ull);
    assert_int_equal(pl.projection.host.compute, 62926880ull);
    ggfit_plan_free(&pl);

    const char *const fitp[] = { "--for", "fit-params", "-fitp", "on" };
    plan_of(&pl, fitp, 4);
    assert_true(pl.projection.devices[0].compute > 300ull << 20);
    assert_int_equal(pl.verdict.prompt_cache, 0);
    ggfit_plan_free(&pl);
}

/* The fit: llama-server fits -c 18688 on 12288 MiB where llama-fit-params
 * fits -c 17664; the printed line, planned again, is the same memory. */
static void fitted(void **state)
{
    (void)state;
    static ggfit_plan pl, def;   /* 900 KB each: off the stack */
    const char *const fitp[] = { "--for", "fit-params" };
    plan_of(&pl, NULL, 0);   /* the default: llama-server */
    plan_of(&def, fitp, 2);
    assert_int_equal(pl.fit.projection.n_ctx, 18688);
    assert_int_equal(def.fit.projection.n_ctx, 17664);
    assert_int_equal(pl.verdict.prompt_cache, 8192ull << 20);
    assert_int_equal(def.verdict.prompt_cache, 0);
    const ggfit_pool *h = &pl.verdict.pools[pl.verdict.n_pools - 1], *hd =
        &def.verdict.pools[def.verdict.n_pools - 1];
    assert_int_equal(h->kind, GGFIT_POOL_HOST);
    assert_true(h->used >= pl.verdict.prompt_cache);
    assert_true(hd->used < h->used);

    char *line = ggfit_plan_args(&pl);
    assert_string_equal(line, "-c 18688 -ngl all -np 4 -kvu -fit off");
    const char *words[16];
    int n = 0;
    for (char *t = strtok(line, " "); t && n < 14; t = strtok(NULL, " "))
        words[n++] = t;
    words[n++] = "--for";
    words[n++] = "server";
    static ggfit_plan again;
    plan_of(&again, words, n);
    assert_int_equal(again.projection.n_ctx, 18688);
    assert_memory_equal(&again.projection.devices[0], &pl.projection.devices[0],
                        sizeof pl.projection.devices[0]);
    assert_memory_equal(&again.projection.host, &pl.projection.host, sizeof pl.projection.host);
    ggfit_free(line);
    ggfit_plan_free(&again);
    ggfit_plan_free(&pl);
    ggfit_plan_free(&def);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rules),
        cmocka_unit_test(measured),
        cmocka_unit_test(fitted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
