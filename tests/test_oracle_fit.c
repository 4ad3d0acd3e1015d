/*
 * test_oracle_fit.c - fit decisions against llama-server's own fit.
 *
 * data/oracle/<version>/server_fit.jsonl holds what each supported
 * llama-server's fit chose
 * (tools/servercmp.py --fit-mib N --record: every device but the CPU
 * reporting N MiB free, the shim printing common_fit_params' result) for
 * the layouts at real models' dimensions (data/real) and others: the
 * context, -ngl, the tensor split and how many tensor overrides. The
 * device memory is given, so unlike llama-fit-params' fit on this
 * machine's free memory (tools/llamacmp.py --fit) the cases replay
 * anywhere. ggfit plans each with --gpu rpc:NMiB,... and the recorded
 * flags (which end "--for server") and that version's rules; its fit must
 * decide the same. (The b10587 records are the b10309 cases replayed:
 * servercmp.py --cases.)
 */
#include <jansson.h>

#include "test_util.h"

/* Version build's records (data/oracle/b<build>/server_fit.jsonl), or
 * $GGFIT_ORACLE_FIT's for the newest version's rules. */
static const char *oracle_path(uint32_t build)
{
    static char buf[64];
    const char *p = getenv("GGFIT_ORACLE_FIT");
    if (p && *p)
        return p;
    snprintf(buf, sizeof buf, "data/oracle/b%u/server_fit.jsonl", build);
    return buf;
}

/* A shipped layout, else a real-size one (data/real), else a tiny one. */
static void find_model(char *buf, size_t n, const char *file)
{
    static const char *const dirs[] = { "data/real", "data/tiny" };
    model_path(buf, n, file);
    for (size_t k = 0; k < 2; k++) {
        FILE *f = fopen(buf, "rb");
        if (f) {
            fclose(f);
            return;
        }
        snprintf(buf, n, "%s/%s", dirs[k], file);
    }
}

/* Plans file with flags on n devices of mib MiB each, as the CLI would. */
static void plan_case(ggfit_plan *pl, uint32_t build, const char *file, size_t n, long mib,
                      const char *flags)
{
    static char store[48][512];
    char *argv[48];
    int argc = 0;
    snprintf(store[argc++], 512, "-m");
    find_model(store[argc++], 512, file);
    snprintf(store[argc++], 512, "--gpu");
    store[argc][0] = '\0';
    for (size_t d = 0; d < n; d++) {
        size_t len = strlen(store[argc]);
        snprintf(store[argc] + len, 512 - len, "%srpc:%ldMiB", d ? "," : "", mib);
    }
    argc++;
    snprintf(store[argc++], 512, "--host-mem");
    snprintf(store[argc++], 512, "64GiB");
    char buf[512];
    snprintf(buf, sizeof buf, "%s", flags);
    for (char *t = strtok(buf, " "); t && argc < 48; t = strtok(NULL, " "))
        snprintf(store[argc++], 512, "%s", t);
    for (int k = 0; k < argc; k++)
        argv[k] = store[k];
    ggfit_request r;
    ggfit_request_init(&r);
    /* that llama.cpp's figures and decisions (data/oracle/b<build>/) */
    char version[32];
    snprintf(version, sizeof version, "b%u", build);
    assert_int_equal(ggfit_llama_version_parse(version, &r.llama, NULL), GGFIT_OK);
    char *err = NULL;
    for (int i = 0; i < argc;)
        if (ggfit_request_parse_arg(&r, argc, argv, &i, NULL, &err) != GGFIT_OK)
            fail_msg("%s %s: %s", file, flags, err ? err : "bad flag");
    if (ggfit_request_plan(&r, pl, &err) != GGFIT_OK)
        fail_msg("%s %s: %s", file, flags, err ? err : "no plan");
}

/* The context the fit leaves in llama.cpp's cparams: its printed -c (0:
 * the trained context, as asked). */
static long fitted_ctx(const ggfit_plan *pl)
{
    char *args = ggfit_fit_args(&pl->fit, pl->devices, pl->n_devices);
    const char *c = args ? strstr(args, "-c ") : NULL;
    long n = c ? strtol(c + 3, NULL, 10) : -1;
    ggfit_free(args);
    return n;
}

static bool same_fit(const ggfit_plan *pl, json_t *want, size_t n)
{
    const ggfit_params *p = &pl->fit.params;
    long ngl = (long)json_integer_value(json_object_get(want, "ngl"));
    json_t *ts = json_object_get(want, "ts");
    /* -ngl: llama.cpp leaves -1 (all) where nothing had to move */
    bool same = fitted_ctx(pl) == (long)json_integer_value(json_object_get(want, "n_ctx")) &&
                (long)p->n_overrides == (long)json_integer_value(json_object_get(want, "n_ot")) &&
                (p->n_gpu_layers == ngl || ((p->n_gpu_layers == -1 || p->n_gpu_layers == 999) &&
                                            (ngl == -1 || ngl == 999)));
    for (size_t d = 0; same && n > 1 && d < n && d < json_array_size(ts); d++) {
        double a = p->tensor_split[d], b = json_number_value(json_array_get(ts, d));
        same = a - b < 1e-3 && b - a < 1e-3;
    }
    return same;
}

/* One version's records, each planned with its rules. */
static void oracle_version(uint32_t build)
{
    const char *path = oracle_path(build);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    static ggfit_plan pl;   /* large: off the stack */
    char line[4096];
    int n_cases = 0, n_same = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t jerr;
        json_t *c = json_loads(line, 0, &jerr);
        if (!c)
            fail_msg("%s: %s", path, jerr.text);
        const char *file = json_string_value(json_object_get(c, "model"));
        const char *args = json_string_value(json_object_get(c, "args"));
        size_t n = (size_t)json_integer_value(json_object_get(c, "devices"));
        long mib = (long)json_integer_value(json_object_get(c, "fit_mib"));
        json_t *want = json_object_get(c, "fit");
        assert_true(file && args && n >= 1 && n <= 4 && mib > 0 && json_is_object(want));
        plan_case(&pl, build, file, n, mib, args);
        bool same = same_fit(&pl, want, n);
        if (!same)
            printf("oracle fit b%u: %s, %zu x %ld MiB, %s: differs from llama-server\n", build,
                   file, n, mib, args);
        ggfit_plan_free(&pl);
        n_cases++;
        n_same += same;
        json_decref(c);
    }
    fclose(f);
    printf("oracle fit b%u: %d/%d fits as llama-server's\n", build, n_same, n_cases);
    assert_true(n_cases > 0);
    assert_int_equal(n_same, n_cases);
}

static void test_oracle_fits(void **state)
{
    (void)state;
    const char *p = getenv("GGFIT_ORACLE_FIT");
    if (p && *p) {   /* one file: the newest version's rules */
        uint32_t newest = 0;
        for (size_t v = 0; ggfit_llama_version_supported(v); v++)
            newest = ggfit_llama_version_supported(v);
        oracle_version(newest);
        return;
    }
    for (size_t v = 0; ggfit_llama_version_supported(v); v++)
        oracle_version(ggfit_llama_version_supported(v));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
