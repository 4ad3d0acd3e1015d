/*
 * test_never_refuse.c - where llama.cpp runs a plan, ggfit prints one.
 *
 * llama.cpp's fit is approximate: on some of the reference fits its
 * decision leaves a device tens of MiB inside its margin. llama.cpp runs
 * it; ggfit must print the nearest plan that keeps every margin and exit
 * 0, with llama.cpp's decision beside it. Every fit case of
 * data/reference/cases.jsonl where llama-fit-params fitted (rc 0) is
 * planned here for llama-server (the default) and for llama-fit-params:
 * the plan's exit status is 0, the flags it prints keep every margin when
 * planned again as given (-fit off), and llama.cpp's own decision stays in
 * the plan (args) whatever ggfit prints.
 */
#include <jansson.h>

#include "test_util.h"

static const char *cases_path(void)
{
    const char *p = getenv("GGFIT_CASES");
    return p && *p ? p : "data/reference/cases.jsonl";
}

/* The case's command line: -m, --gpu rpc:NMiB,... (or none), a host that
 * holds the model (the reference cases judge the devices only), the
 * case's flags, then extra words. */
static int case_argv(json_t *c, char store[][512], size_t max, const char *const *extra)
{
    size_t k = 0;
    snprintf(store[k++], 512, "-m");
    model_path(store[k++], 512, json_string_value(json_object_get(c, "model")));
    json_t *jd = json_object_get(c, "devices");
    snprintf(store[k++], 512, "--gpu");
    store[k][0] = '\0';
    for (size_t i = 0; i < json_array_size(jd); i++) {
        size_t len = strlen(store[k]);
        snprintf(store[k] + len, 512 - len, "%srpc:%lldMiB", i ? "," : "",
                 (long long)json_integer_value(json_array_get(jd, i)));
    }
    if (!store[k][0])
        snprintf(store[k], 512, "none");
    k++;
    snprintf(store[k++], 512, "--host-mem");
    snprintf(store[k++], 512, "1TiB");
    json_t *args = json_object_get(c, "args");
    for (size_t i = 0; i < json_array_size(args) && k < max; i++)
        snprintf(store[k++], 512, "%s", json_string_value(json_array_get(args, i)));
    for (; extra && *extra && k < max; extra++)
        snprintf(store[k++], 512, "%s", *extra);
    return (int)k;
}

static void plan_words(ggfit_plan *pl, char store[][512], int argc, const char *id)
{
    char *argv[96];
    for (int i = 0; i < argc; i++)
        argv[i] = store[i];
    ggfit_request r;
    ggfit_request_init(&r);
    /* the reference cases are llama.cpp b10309's (data/reference) */
    assert_int_equal(ggfit_llama_version_parse("b10309", &r.llama, NULL), GGFIT_OK);
    char *err = NULL;
    for (int i = 0; i < argc;)
        if (ggfit_request_parse_arg(&r, argc, argv, &i, NULL, &err))
            fail_msg("%s: %s", id, err);
    if (ggfit_request_plan(&r, pl, &err))
        fail_msg("%s: %s", id, err);
}

/* Plans the case for one program; the printed flags planned again. */
static void check_case(json_t *c, const char *program, int *n_alt)
{
    const char *id = json_string_value(json_object_get(c, "id"));
    static char store[96][512], again[96][512];
    static ggfit_plan pl, pl2;
    const char *const extra[] = { "--for", program, NULL };
    int argc = case_argv(c, store, 90, extra);
    plan_words(&pl, store, argc, id);
    char why[320];
    if (ggfit_plan_exit_status(&pl) != 0)
        fail_msg("%s (--for %s): llama.cpp fits, ggfit exits %d: %s", id, program,
                 ggfit_plan_exit_status(&pl), ggfit_verdict_summary(&pl.verdict, why, sizeof why));
    assert_int_not_equal(pl.fit.status, GGFIT_FIT_FAILED);
    *n_alt += pl.has_alternative;
    /* the printed flags, for llama-server, planned as given */
    size_t nw = 0;
    char **w = ggfit_plan_argv(&pl, GGFIT_FOR_SERVER, &nw);
    assert_non_null(w);
    const char *const fixed[] = { "--for", "server", NULL };
    int k = case_argv(c, again, 90 - (int)nw, fixed);
    for (size_t i = 0; i < nw; i++)
        snprintf(again[k++], 512, "%s", w[i]);
    ggfit_argv_free(w);
    plan_words(&pl2, again, k, id);
    if (pl2.verdict.status != GGFIT_VERDICT_FITS)
        fail_msg("%s (--for %s): the printed flags, planned as given: %s", id, program,
                 ggfit_verdict_summary(&pl2.verdict, why, sizeof why));
    ggfit_plan_free(&pl2);
    ggfit_plan_free(&pl);
}

static void test_never_refuse(void **state)
{
    (void)state;
    FILE *f = fopen(cases_path(), "r");
    if (!f)
        fail_msg("cannot open %s", cases_path());
    char line[1 << 16];
    int n = 0, n_alt_server = 0, n_alt_fp = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t jerr;
        json_t *c = json_loads(line, 0, &jerr);
        if (!c)
            fail_msg("%s: %s", cases_path(), jerr.text);
        const char *mode = json_string_value(json_object_get(c, "mode"));
        if (mode && !strcmp(mode, "fit") &&
            json_integer_value(json_object_get(c, "rc")) == 0) {
            check_case(c, "server", &n_alt_server);
            check_case(c, "fit-params", &n_alt_fp);
            n++;
        }
        json_decref(c);
    }
    fclose(f);
    printf("never refuse: %d fits llama.cpp makes, each planned (exit 0, every margin kept); "
           "the nearest plan in place of llama.cpp's: %d for llama-server, %d for "
           "llama-fit-params\n", n, n_alt_server, n_alt_fp);
    assert_true(n > 200);
    /* the cases the issue names are among them: not vacuous */
    assert_true(n_alt_server > 0 && n_alt_fp > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_refuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
