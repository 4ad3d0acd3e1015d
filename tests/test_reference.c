/*
 * test_reference.c - the projection against what llama.cpp itself reported
 * on the shipped layouts (data/reference/cases.jsonl, "print" cases):
 * weights, KV cache and recurrent state per device and for the host must be
 * equal to the byte, and n_ctx the same. Compute buffers are held to
 * llama.cpp's tolerance (1% or 4 MiB); until the graph replay lands they
 * are estimates, so this test guards the number of cases already within it
 * against regressions.
 */
#include <jansson.h>

#include "test_util.h"

#define MiB (1024ull * 1024ull)
/* Print cases whose estimated compute bytes are within tolerance today. */
#define COMPUTE_FLOOR 150

static const char *reference_file(void)
{
    const char *f = getenv("GGFIT_REFERENCE");
    return f && *f ? f : "data/reference/cases.jsonl";
}

typedef struct tally {
    int cases, exact, compute_ok;
} tally;

static uint64_t field(json_t *o, const char *k)
{
    return (uint64_t)json_integer_value(json_object_get(o, k));
}

static void check_case(json_t *c, tally *t)
{
    const char *id = json_string_value(json_object_get(c, "id"));
    char path[512], *err = NULL;
    model_path(path, sizeof path, json_string_value(json_object_get(c, "model")));
    ggfit_model *m;
    if (ggfit_model_open(path, &m, &err))
        fail_msg("%s: %s", id, err);

    ggfit_params p;
    ggfit_params_init(&p);
    json_t *args = json_object_get(c, "args");
    int argc = (int)json_array_size(args);
    char *argv[64];
    assert_true(argc < 64);
    for (int i = 0; i < argc; i++)
        argv[i] = (char *)(uintptr_t)json_string_value(json_array_get(args, (size_t)i));
    for (int i = 0; i < argc;)
        if (ggfit_params_parse_arg(&p, argc, argv, &i, &err) != GGFIT_OK)
            fail_msg("%s: argument %s: %s", id, argv[i], err ? err : "unknown");

    /* The reference devices were llama.cpp RPC servers: rpc:<MiB>MiB. */
    ggfit_device devs[GGFIT_MAX_DEVICES];
    json_t *jd = json_object_get(c, "devices");
    char spec[256] = "none";
    size_t n = 0, k = 0;
    for (size_t i = 0; i < json_array_size(jd); i++)
        k += (size_t)snprintf(spec + k, sizeof spec - k, "%srpc:%lldMiB", i ? "," : "",
                              (long long)json_integer_value(json_array_get(jd, i)));
    assert_int_equal(ggfit_devices_parse(spec, devs, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);

    ggfit_projection pr;
    if (ggfit_project(m, &p, devs, n, &pr, NULL, &err))
        fail_msg("%s: %s", id, err);

    json_t *rows = json_object_get(c, "rows");
    assert_int_equal(json_array_size(rows), pr.n_devices + 1);
    bool compute_ok = true;
    for (size_t r = 0; r < json_array_size(rows); r++) {
        json_t *w = json_array_get(rows, r);
        const ggfit_mem *h = r < pr.n_devices ? &pr.devices[r] : &pr.host;
        if (h->model != field(w, "model") || h->context != field(w, "context"))
            fail_msg("%s row %zu: model %llu context %llu, llama.cpp %llu %llu", id, r,
                     (unsigned long long)h->model, (unsigned long long)h->context,
                     (unsigned long long)field(w, "model"),
                     (unsigned long long)field(w, "context"));
        uint64_t want = field(w, "compute"), tol = want / 100 > 4 * MiB ? want / 100 : 4 * MiB;
        uint64_t diff = h->compute > want ? h->compute - want : want - h->compute;
        compute_ok &= diff <= tol;
    }
    uint64_t extra = 0;
    json_t *bufts = json_object_get(c, "bufts");
    for (size_t b = 0; b < json_array_size(bufts); b++) {
        json_t *bt = json_array_get(bufts, b);
        if (!json_is_true(json_object_get(bt, "host")) &&
            !strcmp(json_string_value(json_object_get(bt, "device")), "CPU"))
            extra += field(bt, "model");
    }
    if (pr.cpu_extra.model != extra)
        fail_msg("%s: CPU_REPACK %llu, llama.cpp %llu", id,
                 (unsigned long long)pr.cpu_extra.model, (unsigned long long)extra);
    assert_int_equal(pr.n_ctx, field(c, "n_ctx"));
    t->cases++;
    t->exact++;
    t->compute_ok += compute_ok;
    ggfit_model_free(m);
}

static void test_print_cases(void **state)
{
    (void)state;
    FILE *f = fopen(reference_file(), "r");
    assert_non_null(f);
    static char line[1 << 20];
    tally t = {0};
    while (fgets(line, sizeof line, f)) {
        json_error_t je;
        json_t *c = json_loads(line, 0, &je);
        assert_non_null(c);
        if (!strcmp(json_string_value(json_object_get(c, "mode")), "print"))
            check_case(c, &t);
        json_decref(c);
    }
    fclose(f);
    print_message("print cases: %d, weights and context exact: %d, compute within "
                  "tolerance: %d\n", t.cases, t.exact, t.compute_ok);
    assert_true(t.cases >= 300);
    assert_true(t.compute_ok >= COMPUTE_FLOOR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_print_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
