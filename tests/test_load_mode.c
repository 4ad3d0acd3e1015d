/*
 * test_load_mode.c - llama.cpp's default load mode (LOAD_MODE_AUTO, b10364,
 * 153d324bc): auto maps the file unless a device the model uses reports no
 * mmap support (integrated CUDA and HIP GPUs, integrated Vulkan GPUs;
 * Metal maps though unified); --mmap / --no-mmap set it. b10309 always
 * mapped by default.
 */
#include "test_util.h"

static ggfit_device dev(ggfit_backend kind, bool unified)
{
    ggfit_device d;
    memset(&d, 0, sizeof d);
    d.kind = kind;
    d.unified = unified;
    d.total = d.free = (uint64_t)8 << 30;
    return d;
}

static void by_device(void **state)
{
    (void)state;
    const struct {
        ggfit_backend kind;
        bool unified, maps;
    } rows[] = {
        { GGFIT_BACKEND_CUDA, false, true },   { GGFIT_BACKEND_CUDA, true, false },
        { GGFIT_BACKEND_ROCM, true, false },   { GGFIT_BACKEND_VULKAN, true, false },
        { GGFIT_BACKEND_VULKAN, false, true }, { GGFIT_BACKEND_METAL, true, true },
        { GGFIT_BACKEND_RPC, false, true },
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        ggfit_device d[2] = { dev(GGFIT_BACKEND_CUDA, false), dev(rows[k].kind, rows[k].unified) };
        ggfit_params p;
        ggfit_params_init(&p);
        ggfit_params_load_mode(&p, d, 2);
        assert_int_equal(p.use_mmap, rows[k].maps);
        /* b10309: mapped whatever the devices */
        ggfit_params_init(&p);
        p.llama_build = 10309;
        ggfit_params_load_mode(&p, d, 2);
        assert_true(p.use_mmap);
        /* --mmap given: kept */
        ggfit_params_init(&p);
        p.set_use_mmap = true;
        ggfit_params_load_mode(&p, d, 2);
        assert_true(p.use_mmap);
    }
    ggfit_params p;
    ggfit_params_init(&p);
    ggfit_params_load_mode(&p, NULL, 0);   /* CPU only: maps */
    assert_true(p.use_mmap);
}

/* A plan on a DGX Spark (integrated CUDA): b10587 loads without mmap. */
static bool planned_mmap(const char *version, const char *extra)
{
    ggfit_request r;
    ggfit_request_init(&r);
    assert_int_equal(ggfit_llama_version_parse(version, &r.llama, NULL), GGFIT_OK);
    char model[512];
    model_path(model, sizeof model, "qwen3-0.6b-f16.gguf");
    char *argv[] = { (char *)(uintptr_t)"-m", model, (char *)(uintptr_t)"--gpu",
                     (char *)(uintptr_t)"dgx-spark", (char *)(uintptr_t)extra, NULL };
    int argc = extra ? 5 : 4;
    char *err = NULL;
    for (int i = 0; i < argc;)
        if (ggfit_request_parse_arg(&r, argc, argv, &i, NULL, &err))
            fail_msg("%s", err);
    static ggfit_plan pl;
    if (ggfit_request_plan(&r, &pl, &err))
        fail_msg("%s", err);
    bool m = pl.asked.use_mmap;
    ggfit_plan_free(&pl);
    return m;
}

static void in_a_plan(void **state)
{
    (void)state;
    assert_false(planned_mmap("b10587", NULL));
    assert_true(planned_mmap("b10309", NULL));
    assert_true(planned_mmap("b10587", "--mmap"));
    assert_false(planned_mmap("b10309", "--no-mmap"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_device),
        cmocka_unit_test(in_a_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
