/*
 * test_params.c - llama.cpp's flags and the --gpu device descriptions.
 */
#include "test_util.h"

static int parse(ggfit_params *p, const char *line, char **err)
{
    char buf[512], *argv[32];
    int argc = 0, rc = GGFIT_OK;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *tok = strtok(buf, " "); tok && argc < 32; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    ggfit_params_init(p);
    for (int i = 0; i < argc && rc == GGFIT_OK;)
        rc = ggfit_params_parse_arg(p, argc, argv, &i, err);
    return rc;
}

static void test_defaults(void **state)
{
    (void)state;
    ggfit_params p;
    ggfit_params_init(&p);
    assert_int_equal(p.n_ctx, 0);
    assert_int_equal(p.n_batch, 2048);
    assert_int_equal(p.n_ubatch, 512);
    assert_int_equal(p.n_seq, 1);
    assert_int_equal(p.flash_attn, GGFIT_FA_AUTO);
    assert_int_equal(p.type_k, GGFIT_TYPE_F16);
    assert_int_equal(p.n_gpu_layers, GGFIT_NGL_AUTO);
    assert_false(p.set_n_ctx);
}

static void test_flags(void **state)
{
    (void)state;
    ggfit_params p;
    char *err = NULL;
    assert_int_equal(parse(&p, "-c 8192 -b 4096 -ub 1024 -np 4 -kvu -fa off -ctk q8_0 "
                               "-ctv q4_0 --swa-full -ngl 12 -ts 3,1 -nkvo --no-repack", &err),
                     GGFIT_OK);
    assert_int_equal(p.n_ctx, 8192);
    assert_true(p.set_n_ctx);
    assert_int_equal(p.n_batch, 4096);
    assert_int_equal(p.n_ubatch, 1024);
    assert_int_equal(p.n_seq, 4);
    assert_true(p.kv_unified && p.swa_full && p.no_kv_offload && p.no_repack);
    assert_int_equal(p.flash_attn, GGFIT_FA_OFF);
    assert_int_equal(p.type_k, GGFIT_TYPE_Q8_0);
    assert_int_equal(p.type_v, GGFIT_TYPE_Q4_0);
    assert_int_equal(p.n_gpu_layers, 12);
    assert_true(p.tensor_split[0] == 3.0f && p.tensor_split[1] == 1.0f);

    assert_int_equal(parse(&p, "-ngl all --cpu-moe --n-cpu-moe 6 -ot a=CPU,b\\.c=CUDA0", &err),
                     GGFIT_OK);
    assert_int_equal(p.n_gpu_layers, GGFIT_NGL_ALL);
    assert_true(p.cpu_moe);
    assert_int_equal(p.n_cpu_moe, 6);
    assert_int_equal(p.n_overrides, 2);
    assert_string_equal(p.overrides[1].pattern, "b\\.c");
    assert_string_equal(p.overrides[1].buffer, "CUDA0");
    /* The pattern is everything before the last '='. */
    assert_int_equal(parse(&p, "-ot x=y=CPU", &err), GGFIT_OK);
    assert_string_equal(p.overrides[0].pattern, "x=y");
}

static void test_bad_flags(void **state)
{
    (void)state;
    static const struct { const char *line; const char *msg; } bad[] = {
        { "-c", "-c needs a value" },
        { "-c -5", "expected a non-negative integer" },
        { "-c 12x", "expected a non-negative integer" },
        { "-fa maybe", "expected on, off or auto" },
        { "-ctk q3_k", "unsupported cache type 'q3_k'" },
        { "-ot nothing", "expected PATTERN=BUFFER" },
        { "-ot =CPU", "expected PATTERN=BUFFER" },
        { "-np 0", "at least 1 sequence" },
        { "-sm diagonal", "expected none, layer or row" },
        { "-ts 1,x", "expected proportions" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ggfit_params p;
        char *err = NULL;
        assert_int_equal(parse(&p, bad[k].line, &err), GGFIT_EINVAL);
        if (!err || !strstr(err, bad[k].msg))
            fail_msg("'%s': got '%s'", bad[k].line, err ? err : "(null)");
        ggfit_free(err);
    }
    ggfit_params p;
    char flag[] = "--frobnicate", *argv[] = { flag };
    int i = 0;
    ggfit_params_init(&p);
    assert_int_equal(ggfit_params_parse_arg(&p, 1, argv, &i, NULL), -1);
}

static void test_devices(void **state)
{
    (void)state;
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n;
    char *err = NULL;
    assert_int_equal(ggfit_devices_parse("24GiB,cuda:12GiB,rpc:81920MiB,rocm:24000MB/20000MB,"
                                         "metal:18GB",
                                         d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(n, 5);
    assert_string_equal(d[0].name, "CUDA0");
    assert_int_equal(d[0].total, 24ull << 30);
    assert_string_equal(d[1].name, "CUDA1");
    assert_string_equal(d[2].name, "RPC0");
    assert_int_equal(d[2].kind, GGFIT_BACKEND_RPC);
    assert_int_equal(d[2].total, 81920ull << 20);
    assert_string_equal(d[3].name, "ROCm0");
    assert_int_equal(d[3].total, 24000000000ull);
    assert_int_equal(d[3].free, 20000000000ull);
    assert_string_equal(d[4].name, "Metal");
    assert_int_equal(ggfit_devices_parse("none", d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(n, 0);
    static const char *const bad[] = { "tpu:8GiB", "cuda:", "8XB", "8GiB/9GiB", "8GiB,,4GiB" };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(ggfit_devices_parse(bad[k], d, GGFIT_MAX_DEVICES, &n, &err),
                         GGFIT_EINVAL);
        assert_non_null(strstr(err, "--gpu"));
        ggfit_free(err);
    }
    assert_int_equal(ggfit_devices_parse("1GiB,1GiB,1GiB", d, 2, &n, &err), GGFIT_EINVAL);
    ggfit_free(err);
    uint64_t b;
    assert_int_equal(ggfit_size_parse("1024", &b), GGFIT_OK);   /* bare: MiB */
    assert_int_equal(b, 1ull << 30);
    assert_int_equal(ggfit_size_parse("1.5GiB", &b), GGFIT_OK);
    assert_int_equal(b, 3ull << 29);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_bad_flags),
        cmocka_unit_test(test_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
