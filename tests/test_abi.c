/*
 * test_abi.c - ggfit.h as a program outside the tree sees it: this file
 * includes ggfit.h alone. Every struct it declares stays small (a program
 * allocates them; the large ones are handles), the version macros match
 * the library, and the handles' constructors, setters and getters give
 * what the flags and the fit give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ggfit.h"

/* No struct of ggfit.h is larger than this: a program allocates them, on
 * its stack as often as not, and a handle holds anything larger. */
#define SMALL 4096

#define ROW(t) { #t, sizeof(t) }
static const struct {
    const char *name;
    size_t size;
} structs[] = {
    ROW(ggfit_value), ROW(ggfit_value_iter), ROW(ggfit_tensor_info), ROW(ggfit_hparams),
    ROW(ggfit_layer_info), ROW(ggfit_tensor), ROW(ggfit_arch_info), ROW(ggfit_device),
    ROW(ggfit_host_info), ROW(ggfit_probe_options), ROW(ggfit_catalog_entry),
    ROW(ggfit_cpu_class), ROW(ggfit_mem), ROW(ggfit_buft_mem), ROW(ggfit_fit_options),
    ROW(ggfit_llama_version),
};

static void test_structs_are_small(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof structs / sizeof structs[0]; i++) {
        if (structs[i].size >= SMALL)
            fail_msg("%s is %zu bytes: make it a handle", structs[i].name, structs[i].size);
    }
}

/* Every struct ggfit.h defines is in the list above: a new one is checked
 * too. */
static void test_every_struct_is_listed(void **state)
{
    (void)state;
    FILE *f = fopen("include/ggfit.h", "r");
    assert_non_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char name[128];
        if (sscanf(line, "typedef struct %127s {", name) != 1 || !strstr(line, "{"))
            continue;
        bool listed = false;
        for (size_t i = 0; i < sizeof structs / sizeof structs[0]; i++)
            listed |= !strcmp(structs[i].name, name);
        if (!listed)
            fail_msg("ggfit.h defines struct %s, which test_abi.c does not list", name);
        n++;
    }
    fclose(f);
    assert_int_equal(n, (int)(sizeof structs / sizeof structs[0]));
}

static void test_version(void **state)
{
    (void)state;
    assert_string_equal(ggfit_version(), GGFIT_VERSION);
    assert_int_equal(ggfit_version_number(), GGFIT_VERSION_NUMBER);
    assert_int_equal(ggfit_abi_version(), GGFIT_ABI_VERSION);
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", GGFIT_VERSION_MAJOR, GGFIT_VERSION_MINOR,
             GGFIT_VERSION_PATCH);
    assert_string_equal(v, GGFIT_VERSION);
}

static void test_params(void **state)
{
    (void)state;
    ggfit_params *p = ggfit_params_new();
    assert_non_null(p);
    /* llama.cpp's defaults */
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_N_CTX), 0);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_N_BATCH), 2048);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_N_UBATCH), 512);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_N_SEQ), 1);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_TYPE_K), GGFIT_TYPE_F16);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_FLASH_ATTN), GGFIT_FA_AUTO);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_COUNT), 0);

    assert_int_equal(ggfit_params_set(p, GGFIT_PARAM_N_CTX, 16384), GGFIT_OK);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_N_CTX), 16384);
    assert_int_equal(ggfit_params_set(p, GGFIT_PARAM_TYPE_K, GGFIT_TYPE_Q8_0), GGFIT_OK);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_TYPE_K), GGFIT_TYPE_Q8_0);
    /* refused, and nothing changed */
    assert_int_equal(ggfit_params_set(p, GGFIT_PARAM_N_CTX, -1), GGFIT_EINVAL);
    assert_int_equal(ggfit_params_set(p, GGFIT_PARAM_N_SEQ, 0), GGFIT_EINVAL);
    assert_int_equal(ggfit_params_set(p, GGFIT_PARAM_TYPE_V, GGFIT_TYPE_Q4_K), GGFIT_EINVAL);
    assert_int_equal(ggfit_params_set(p, GGFIT_PARAM_USE_MMAP, 2), GGFIT_EINVAL);
    assert_int_equal(ggfit_params_set(p, GGFIT_PARAM_COUNT, 0), GGFIT_EINVAL);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_N_CTX), 16384);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_TYPE_V), GGFIT_TYPE_F16);

    /* flags as llama.cpp spells them */
    char *err = NULL;
    assert_int_equal(ggfit_params_set_flag(p, "-c", "8192", &err), GGFIT_OK);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_N_CTX), 8192);
    assert_int_equal(ggfit_params_set_flag(p, "--no-mmap", NULL, &err), GGFIT_OK);
    assert_int_equal(ggfit_params_get(p, GGFIT_PARAM_USE_MMAP), 0);
    assert_int_equal(ggfit_params_set_flag(p, "-ts", "3,1", &err), GGFIT_OK);
    assert_int_equal(ggfit_params_n_tensor_split(p), 2);
    assert_true(ggfit_params_tensor_split(p, 0) == 3.0f);
    assert_true(ggfit_params_tensor_split(p, 2) == 0.0f);
    assert_int_equal(ggfit_params_set_flag(p, "-ot", "exps=CPU", &err), GGFIT_OK);
    const char *pattern, *buffer;
    assert_int_equal(ggfit_params_n_overrides(p), 1);
    assert_true(ggfit_params_override(p, 0, &pattern, &buffer));
    assert_string_equal(pattern, "exps");
    assert_string_equal(buffer, "CPU");
    assert_false(ggfit_params_override(p, 1, &pattern, &buffer));

    assert_int_equal(ggfit_params_set_flag(p, "--no-mmap", "1", &err), GGFIT_EINVAL);
    assert_non_null(err);
    ggfit_free(err);
    assert_int_equal(ggfit_params_set_flag(p, "--frobnicate", NULL, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "--frobnicate"));
    ggfit_free(err);
    assert_int_equal(ggfit_params_set_flag(p, "-c", NULL, &err), GGFIT_EINVAL);
    ggfit_free(err);

    ggfit_params *d = ggfit_params_dup(p);
    assert_non_null(d);
    for (int k = 0; k < GGFIT_PARAM_COUNT; k++)
        assert_int_equal(ggfit_params_get(d, (ggfit_param)k), ggfit_params_get(p, (ggfit_param)k));
    assert_int_equal(ggfit_params_n_overrides(d), 1);
    ggfit_params_free(d);
    ggfit_params_free(p);
    ggfit_params_free(NULL);
}

static ggfit_model *open_model(const char *file)
{
    const char *dir = getenv("GGFIT_MODELS");
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "data/models", file);
    ggfit_model *m = NULL;
    char *err = NULL;
    if (ggfit_model_open(path, &m, &err) != GGFIT_OK)
        fail_msg("%s", err);
    return m;
}

/* A projection and a fit through the handles alone, as a binding makes
 * them. */
static void test_project_and_fit(void **state)
{
    (void)state;
    ggfit_model *m = open_model("qwen3-14b-f16.gguf");
    ggfit_device dev[GGFIT_MAX_DEVICES];
    size_t n = 0;
    char *err = NULL;
    assert_int_equal(ggfit_devices_parse("cuda:24576MiB/24077MiB", dev, GGFIT_MAX_DEVICES, &n,
                                         &err), GGFIT_OK);
    ggfit_params *p = ggfit_params_new();
    assert_int_equal(ggfit_params_set_flag(p, "-c", "8192", &err), GGFIT_OK);

    ggfit_projection *pr = ggfit_projection_new();
    assert_int_equal(ggfit_project(m, p, dev, n, pr, NULL, &err), GGFIT_OK);
    assert_int_equal(ggfit_projection_n_ctx(pr), 8192);
    assert_int_equal(ggfit_projection_n_devices(pr), 1);
    uint32_t d = 99;
    const ggfit_mem *row = ggfit_projection_device(pr, 0, &d);
    assert_non_null(row);
    assert_int_equal(d, 0);
    assert_true(row->model > 0 && row->context > 0 && row->compute > 0);
    assert_null(ggfit_projection_device(pr, 1, NULL));
    assert_non_null(ggfit_projection_host(pr));
    assert_non_null(ggfit_projection_buft(pr, 0));
    assert_null(ggfit_projection_buft(pr, ggfit_projection_n_bufts(pr)));
    assert_string_equal(ggfit_projection_warning(pr), "");
    char *text = ggfit_projection_text(pr, dev);
    assert_non_null(text);
    ggfit_free(text);
    ggfit_projection_free(pr);

    ggfit_fit_options o;
    ggfit_fit_options_init(&o);
    assert_int_equal(o.size, sizeof o);
    ggfit_fit_result *r = ggfit_fit_result_new();
    assert_int_equal(ggfit_fit(m, p, dev, n, &o, r, &err), GGFIT_OK);
    assert_int_equal(ggfit_fit_result_status(r), GGFIT_FIT_FITS);
    assert_int_equal(ggfit_params_get(ggfit_fit_result_params(r), GGFIT_PARAM_N_GPU_LAYERS), 33);
    assert_int_equal(ggfit_projection_n_ctx(ggfit_fit_result_projection(r)), 8192);
    assert_string_equal(ggfit_fit_result_reason(r), "");
    assert_non_null(ggfit_fit_result_log(r));
    assert_true(ggfit_fit_result_n_projections(r) > 0);
    char *args = ggfit_fit_args(r, dev, n);
    assert_non_null(args);
    assert_non_null(strstr(args, "-ngl 33"));
    ggfit_free(args);
    ggfit_fit_result_free(r);
    ggfit_fit_result_free(NULL);

    /* Options from a program built before no_log was added: their size
     * ends before it, and the library takes its default (the log). */
    ggfit_fit_options_init(&o);
    o.no_log = true;
    o.size = (uint32_t)offsetof(ggfit_fit_options, no_log);
    r = ggfit_fit_result_new();
    assert_int_equal(ggfit_fit(m, p, dev, n, &o, r, &err), GGFIT_OK);
    assert_non_null(ggfit_fit_result_log(r));
    ggfit_fit_result_free(r);
    o.size = sizeof o;
    r = ggfit_fit_result_new();
    assert_int_equal(ggfit_fit(m, p, dev, n, &o, r, &err), GGFIT_OK);
    assert_null(ggfit_fit_result_log(r));
    ggfit_fit_result_free(r);

    ggfit_params_free(p);
    ggfit_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structs_are_small),
        cmocka_unit_test(test_every_struct_is_listed),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_project_and_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
