/*
 * test_oracle.c - projections against what a llama.cpp built here printed.
 *
 * data/reference/ holds llama.cpp's own figures for the shipped layouts
 * and flags of the reference cases. data/oracle/llamacpp.jsonl adds cases
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

#include "test_util.h"

static const char *oracle_path(void)
{
    const char *p = getenv("GGFIT_ORACLE");
    return p && *p ? p : "data/oracle/llamacpp.jsonl";
}

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

static void parse_args(ggfit_params *p, const char *args)
{
    char buf[512], *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", args);
    for (char *tok = strtok(buf, " "); tok && argc < 64; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    ggfit_params_init(p);
    bool server = false;
    for (int i = 0; i < argc;) {
        char *err = NULL;
        /* "--for server": llama-server's own rules (ggfit_params_server) */
        if (!strcmp(argv[i], "--for") && i + 1 < argc && !strcmp(argv[i + 1], "server")) {
            server = true;
            i += 2;
            continue;
        }
        if (ggfit_params_parse_arg(p, argc, argv, &i, NULL, &err) != GGFIT_OK)
            fail_msg("%s: %s", args, err ? err : "unknown flag");
    }
    if (server)
        ggfit_params_server(p, -2);
}

static bool row_equal(const ggfit_mem *m, json_t *row)
{
    return m->model == (uint64_t)json_integer_value(json_array_get(row, 1)) &&
           m->context == (uint64_t)json_integer_value(json_array_get(row, 2)) &&
           m->compute == (uint64_t)json_integer_value(json_array_get(row, 3));
}

static void test_oracle_cases(void **state)
{
    (void)state;
    FILE *f = fopen(oracle_path(), "r");
    if (!f)
        fail_msg("cannot open %s", oracle_path());
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n_parsed = 0;
    assert_int_equal(ggfit_devices_parse("rpc:81920MiB,rpc:81920MiB,rpc:81920MiB,rpc:81920MiB",
                                         devs, GGFIT_MAX_DEVICES, &n_parsed, NULL), GGFIT_OK);
    char line[8192];
    int n_cases = 0, n_same = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t jerr;
        json_t *c = json_loads(line, 0, &jerr);
        if (!c)
            fail_msg("%s: %s", oracle_path(), jerr.text);
        const char *file = json_string_value(json_object_get(c, "model"));
        const char *args = json_string_value(json_object_get(c, "args"));
        size_t nd = (size_t)json_integer_value(json_object_get(c, "devices"));
        json_t *rows = json_object_get(c, "rows");
        size_t n_rows = json_array_size(rows);
        assert_true(file && args && nd <= n_parsed && n_rows >= 1 && n_rows <= nd + 1);

        char path[512];
        find_model(path, sizeof path, file);
        ggfit_model *m;
        char *err = NULL;
        if (ggfit_model_open(path, &m, &err) != GGFIT_OK)
            fail_msg("%s", err);
        ggfit_params p;
        parse_args(&p, args);
        ggfit_projection pr;
        if (ggfit_project(m, &p, devs, nd, &pr, NULL, &err) != GGFIT_OK)
            fail_msg("%s %s: %s", file, args, err);
        ggfit_model_free(m);

        /* llama.cpp lists the devices the model uses (-sm none: the main
         * one), then Host; so does the projection. */
        bool same = n_rows == pr.n_devices + 1 &&
                    row_equal(&pr.host, json_array_get(rows, n_rows - 1));
        for (uint32_t d = 0; same && d < pr.n_devices; d++) {
            json_t *row = json_array_get(rows, d);
            same = !strcmp(json_string_value(json_array_get(row, 0)),
                           devs[pr.device_of[d]].name) &&
                   row_equal(&pr.devices[d], row);
        }
        if (!same)
            printf("oracle: %s, %zu devices, %s: differs from llama.cpp\n", file, nd, args);
        n_cases++;
        n_same += same;
        json_decref(c);
    }
    fclose(f);
    printf("oracle: %d/%d cases equal to llama.cpp's bytes\n", n_same, n_cases);
    assert_true(n_cases > 0);
    assert_int_equal(n_same, n_cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
