/*
 * test_oracle.c - projections against what a llama.cpp built here printed.
 *
 * data/reference/ holds llama.cpp's own figures for the shipped layouts
 * and flags of the reference cases. data/oracle/b10309/llamacpp.jsonl adds cases
 * measured the same way with tools/llamacmp.py --record (llama.cpp d32676d,
 * CPU build with RPC, llama-fit-params -fitp on printing bytes): more flags
 * (-np 3, -ub 1, -b/-ub 1024, -ot, -sm none, ...) on the shipped layouts,
 * and the small generated models of the architectures without recorded
 * graphs (data/tiny/<arch>-<n>.gguf, written by test_archs, test_recurrent
 * and test_arch_<family> with GGFIT_ARCHS_DUMP; `ggfit archs` lists the
 * architectures). The count of cases grows with each architecture added.
 * Lines with "tool": "llama-server" were measured by llama-server's fit
 * (tools/servercmp.py --record): its embedding modes, --embedding,
 * --rerank and --pooling, which llama-fit-params does not take, and (args
 * ending "--for server") llama-server's own rules: -np auto, one output
 * per slot reserved (ggfit_params_server).
 * Every row must match to the byte: weights, cache and compute buffers.
 */
#include <jansson.h>

#include "arch_spec.h"

/* The model's path: a shipped layout, else a real-size one written by
 * tools/mklayout.py (data/real), else a small generated one. */
static void find_model(char *buf, size_t n, const char *file)
{
    model_path(buf, n, file);
    FILE *f = fopen(buf, "rb");
    if (f) {
        fclose(f);
        return;
    }
    snprintf(buf, n, "data/real/%s", file);
    if ((f = fopen(buf, "rb")) != NULL) {
        fclose(f);
        return;
    }
    const char *tiny = getenv("GGFIT_TINY");
    snprintf(buf, n, "%s/%s", tiny && *tiny ? tiny : "data/tiny", file);
}

/* One version's cases, each projected with its rules. */
static void oracle_version(uint32_t build)
{
    const char *oracle = oracle_path(build);
    FILE *f = fopen(oracle, "r");
    if (!f)
        fail_msg("cannot open %s", oracle);
    char line[8192];
    int n_cases = 0, n_same = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t jerr;
        json_t *c = json_loads(line, 0, &jerr);
        if (!c)
            fail_msg("%s: %s", oracle, jerr.text);
        const char *file = json_string_value(json_object_get(c, "model"));
        assert_non_null(file);
        char path[512];
        find_model(path, sizeof path, file);
        ggfit_model *m;
        char *err = NULL;
        if (ggfit_model_open(path, &m, &err) != GGFIT_OK)
            fail_msg("%s", err);
        char why[256];
        bool same = oracle_case(m, c, build, why, sizeof why);
        ggfit_model_free(m);
        if (!same)
            printf("oracle b%u: %s, %lld devices, %s: %s\n", build, file,
                   (long long)json_integer_value(json_object_get(c, "devices")),
                   json_string_value(json_object_get(c, "args")), why);
        n_cases++;
        n_same += same;
        json_decref(c);
    }
    fclose(f);
    printf("oracle b%u: %d/%d cases equal to llama.cpp's bytes\n", build, n_same, n_cases);
    assert_true(n_cases > 0);
    assert_int_equal(n_same, n_cases);
}

static void test_oracle_cases(void **state)
{
    (void)state;
    for (size_t v = 0; ggfit_llama_version_supported(v); v++)
        oracle_version(ggfit_llama_version_supported(v));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
