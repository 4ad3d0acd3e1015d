/*
 * test_alloc.c - every allocation the library makes can fail: make the
 * 1st, 2nd, ... Nth fail in turn and check that each call gives
 * GGFIT_ENOMEM with an "out of memory" message (a renderer: NULL), or, where
 * the library falls back (a graph it cannot keep is built afresh), the very
 * result it gives with no failure; never a crash, and nothing leaked (the
 * sanitizer and valgrind builds check the leaks). The calls: the reader and
 * the model description with its text, a projection (a fresh model, whose
 * graph is built, and one that resumes its kept graph) with its text and
 * JSON, a fit with its flags, JSON and log, and a whole plan as the CLI
 * makes it (devices, model, fit, verdict, alternative) with its renderers.
 */
#include "base/base.h"
#include "test_util.h"

/* The figures of a projection, as text to compare: what a fallback must
 * leave as they are. */
static void projection_figures(const ggfit_projection *pr, char *buf, size_t n)
{
    size_t at = (size_t)snprintf(buf, n, "n_ctx %u ngl %d fa %d est %d host %llu/%llu/%llu",
                                 pr->n_ctx, pr->n_gpu_layers, pr->flash_attn,
                                 pr->compute_estimated, (unsigned long long)pr->host.model,
                                 (unsigned long long)pr->host.context,
                                 (unsigned long long)pr->host.compute);
    for (uint32_t d = 0; d < pr->n_devices && at < n; d++)
        at += (size_t)snprintf(buf + at, n - at, " dev%u %llu/%llu/%llu", pr->device_of[d],
                               (unsigned long long)pr->devices[d].model,
                               (unsigned long long)pr->devices[d].context,
                               (unsigned long long)pr->devices[d].compute);
    for (uint32_t b = 0; b < pr->n_bufts && at < n; b++)
        at += (size_t)snprintf(buf + at, n - at, " %s %llu/%llu/%llu", pr->bufts[b].name,
                               (unsigned long long)pr->bufts[b].mem.model,
                               (unsigned long long)pr->bufts[b].mem.context,
                               (unsigned long long)pr->bufts[b].mem.compute);
}

/* A call that failed for want of memory: GGFIT_ENOMEM and its message. */
static void out_of_memory(const char *what, uint64_t n, int rc, char *err)
{
    if (rc != GGFIT_ENOMEM || !err || !strstr(err, "out of memory"))
        fail_msg("%s, allocation %llu failing: %s (%s), not GGFIT_ENOMEM", what,
                 (unsigned long long)n, ggfit_status_str(rc), err ? err : "no message");
}

/* A call that succeeded although allocation n failed (or never came): the
 * result must be the one it gives with no failure. */
static void same_result(const char *what, uint64_t n, const char *got, const char *want)
{
    if (strcmp(got, want))
        fail_msg("%s, allocation %llu failing: succeeded with\n  %s\nwhere it gives\n  %s",
                 what, (unsigned long long)n, got, want);
}

/* Arms the failure of allocation n (0: none); returns how many allocations
 * were made since the last call. */
static uint64_t fail_at(uint64_t n)
{
    return ggfit__fail_alloc_after(n);
}

static void open_model(const char *file, ggfit_model **m)
{
    char path[512];
    char *err = NULL;
    model_path(path, sizeof path, file);
    if (ggfit_model_open(path, m, &err) != GGFIT_OK)
        fail_msg("%s: %s", path, err);
}

/* ------------------------------------------------------------------------
 * Reading and describing a model
 * ------------------------------------------------------------------------ */

static void fail_each_open(const char *file)
{
    char path[512];
    model_path(path, sizeof path, file);
    uint64_t n;
    uint64_t n_refused = 0;
    for (n = 1;; n++) {
        ggfit_model *m = NULL;
        char *err = NULL, *text = NULL;
        fail_at(n);
        int rc = ggfit_model_open(path, &m, &err);
        if (rc == GGFIT_OK)
            text = ggfit_inspect_text(m);
        uint64_t made = fail_at(0);
        if (rc != GGFIT_OK) {
            out_of_memory(file, n, rc, err);
            n_refused++;
            assert_null(m);
        } else if (!text) {
            assert_true(made >= n);   /* the renderer's allocation failed */
        }
        ggfit_free(err);
        ggfit_free(text);
        ggfit_model_free(m);
        if (made < n)   /* the Nth allocation never happened: all paths seen */
            break;
    }
    assert_true(n_refused > 0);
    assert_true(n > 20);    /* tables, name blocks, the text: dozens of allocations */
}

static void test_qwen3(void **state)
{
    (void)state;
    fail_each_open("qwen3-0.6b-f16.gguf");
}

static void test_lfm2(void **state)
{
    (void)state;
    fail_each_open("lfm2-1.2b-Q4_K_M.gguf");
}

/* ------------------------------------------------------------------------
 * A projection
 * ------------------------------------------------------------------------ */

static void projection_args(ggfit_params *p, ggfit_device *devs, size_t *n_dev)
{
    ggfit_params_init(p);
    p->n_ctx = 4096;
    assert_int_equal(ggfit_devices_parse("rpc:4GiB,rpc:2GiB", devs, GGFIT_MAX_DEVICES, n_dev,
                                         NULL), GGFIT_OK);
}

/* Every allocation of a projection of file on two devices failing in turn,
 * on a model opened afresh each time (kept: false; the graph is built) or
 * on one that keeps the graph of an earlier projection (kept: true; the
 * projection resumes it). Then its text and JSON. */
static void fail_each_projection(const char *file, bool kept)
{
    ggfit_params p;
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n_dev = 0;
    projection_args(&p, devs, &n_dev);
    ggfit_model *m;
    open_model(file, &m);
    ggfit_projection want_pr;
    char *err = NULL;
    assert_int_equal(ggfit_project(m, &p, devs, n_dev, &want_pr, NULL, &err), GGFIT_OK);
    char want[2048], got[2048];
    projection_figures(&want_pr, want, sizeof want);
    uint64_t n;
    uint64_t n_refused = 0;
    for (n = 1;; n++) {
        if (!kept) {
            ggfit_model_free(m);
            open_model(file, &m);
        }
        ggfit_projection pr;
        char *text = NULL, *json = NULL;
        err = NULL;
        fail_at(n);
        int rc = ggfit_project(m, &p, devs, n_dev, &pr, NULL, &err);
        if (rc == GGFIT_OK) {
            text = ggfit_projection_text(&pr, devs);
            json = ggfit_projection_json(&pr, devs);
        }
        uint64_t made = fail_at(0);
        if (rc != GGFIT_OK) {
            out_of_memory(file, n, rc, err);
            n_refused++;
        } else {
            projection_figures(&pr, got, sizeof got);
            same_result(file, n, got, want);
            if (!text || !json)
                assert_true(made >= n);
        }
        ggfit_free(err);
        ggfit_free(text);
        ggfit_free(json);
        if (made < n)
            break;
    }
    ggfit_model_free(m);
    /* A projection that resumes its kept graph allocates nothing itself:
     * only the renderers' allocations are left to fail. */
    assert_true(kept || n_refused > 0);
    assert_true(n > 2);
}

static void test_projection_built(void **state)
{
    (void)state;
    fail_each_projection("qwen3-0.6b-f16.gguf", false);
}

static void test_projection_kept(void **state)
{
    (void)state;
    fail_each_projection("qwen3-0.6b-f16.gguf", true);
}

/* A hybrid (attention and recurrent layers): the other kind of cache. */
static void test_projection_hybrid(void **state)
{
    (void)state;
    fail_each_projection("lfm2-1.2b-Q4_K_M.gguf", false);
}

/* ------------------------------------------------------------------------
 * A fit
 * ------------------------------------------------------------------------ */

/* The outcome of a fit, as text to compare. */
static void fit_figures(const ggfit_fit_result *r, char *buf, size_t n)
{
    size_t at = (size_t)snprintf(buf, n, "status %d ngl %d n_ctx %u projections %u reason '%s' ",
                                 r->status, r->params.n_gpu_layers, r->params.n_ctx,
                                 r->n_projections, r->reason);
    if (at < n)
        projection_figures(&r->projection, buf + at, n - at);
}

/* Every allocation of a fit of file on two small devices (-ngl and -c
 * come down: a search of several projections) failing in turn; then its
 * flags, JSON and log. */
static void fail_each_fit(const char *file)
{
    ggfit_params p;
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n_dev = 0;
    projection_args(&p, devs, &n_dev);
    p.n_ctx = 0;   /* the model's own, for -c to come down */
    ggfit_fit_options o;
    ggfit_fit_options_init(&o);
    ggfit_model *m;
    open_model(file, &m);
    ggfit_fit_result want_r;
    char *err = NULL;
    assert_int_equal(ggfit_fit(m, &p, devs, n_dev, &o, &want_r, &err), GGFIT_OK);
    assert_true(want_r.n_projections > 2);
    char want[4096], got[4096];
    fit_figures(&want_r, want, sizeof want);
    ggfit_fit_result_clear(&want_r);
    ggfit_model_free(m);
    uint64_t n;
    uint64_t n_refused = 0;
    for (n = 1;; n++) {
        open_model(file, &m);
        ggfit_fit_result r;
        memset(&r, 0, sizeof r);
        char *args = NULL, *json = NULL;
        err = NULL;
        fail_at(n);
        int rc = ggfit_fit(m, &p, devs, n_dev, &o, &r, &err);
        if (rc == GGFIT_OK) {
            args = ggfit_fit_args(&r, devs, n_dev);
            json = ggfit_fit_json(&r, devs, n_dev);
        }
        uint64_t made = fail_at(0);
        if (rc != GGFIT_OK) {
            out_of_memory(file, n, rc, err);
            n_refused++;
        } else {
            fit_figures(&r, got, sizeof got);
            same_result(file, n, got, want);
            if (!args || !json || !r.log)
                assert_true(made >= n);
        }
        ggfit_free(err);
        ggfit_free(args);
        ggfit_free(json);
        ggfit_fit_result_clear(&r);
        ggfit_model_free(m);
        if (made < n)
            break;
    }
    assert_true(n_refused > 0);
    assert_true(n > 20);
}

static void test_fit(void **state)
{
    (void)state;
    fail_each_fit("qwen3-0.6b-f16.gguf");
}

/* ------------------------------------------------------------------------
 * A plan, as the CLI makes it
 * ------------------------------------------------------------------------ */

static void plan_figures(const ggfit_plan *pl, char *buf, size_t n)
{
    char why[320];
    size_t at = (size_t)snprintf(buf, n, "exit %d verdict %d '%s' alternative %d ",
                                 ggfit_plan_exit_status(pl), pl->verdict.status,
                                 ggfit_verdict_summary(&pl->verdict, why, sizeof why),
                                 pl->has_alternative);
    if (at < n)
        fit_figures(&pl->fit, buf + at, n - at);
}

static void request(ggfit_request *r, const char *line, char *buf, size_t n, char **argv,
                    int max)
{
    int argc;
    request_of(r, line, buf, n, argv, max, &argc);
}

/* Every allocation of the plan of the request `line` failing in turn (the
 * request parsed afresh each time, as ggfit_request_plan updates it); then
 * its text (with the fit's log), JSON, flags and argv. */
static void fail_each_plan(const char *line)
{
    char buf[512], *argv[32];
    static ggfit_request r;   /* large: off the stack */
    static ggfit_plan want_pl, pl;
    char *err = NULL;
    request(&r, line, buf, sizeof buf, argv, 32);
    if (ggfit_request_plan(&r, &want_pl, &err) != GGFIT_OK)
        fail_msg("%s: %s", line, err);
    static char want[8192], got[8192];
    plan_figures(&want_pl, want, sizeof want);
    ggfit_plan_free(&want_pl);
    uint64_t n;
    uint64_t n_refused = 0;
    for (n = 1;; n++) {
        char *text = NULL, *json = NULL, *args = NULL;
        char **words = NULL;
        size_t n_words = 0;
        err = NULL;
        request(&r, line, buf, sizeof buf, argv, 32);
        fail_at(n);
        int rc = ggfit_request_plan(&r, &pl, &err);
        if (rc == GGFIT_OK) {
            text = ggfit_plan_text(&pl, true);
            json = ggfit_plan_json(&pl);
            args = ggfit_plan_args(&pl);
            words = ggfit_plan_argv(&pl, GGFIT_FOR_SERVER, &n_words);
        }
        uint64_t made = fail_at(0);
        if (rc != GGFIT_OK) {
            out_of_memory(line, n, rc, err);
            n_refused++;
        } else {
            plan_figures(&pl, got, sizeof got);
            same_result(line, n, got, want);
            if (!text || !json || !args || !words)
                assert_true(made >= n);
            ggfit_plan_free(&pl);
        }
        ggfit_free(err);
        ggfit_free(text);
        ggfit_free(json);
        ggfit_free(args);
        ggfit_argv_free(words);
        if (made < n)
            break;
    }
    assert_true(n_refused > 0);
    assert_true(n > 20);
}

/* Fits as given: the projection, the verdict and the speeds. */
static void test_plan_fits(void **state)
{
    (void)state;
    fail_each_plan("-m qwen3-0.6b-f16.gguf --gpu rpc:8GiB --host-mem 16GiB");
}

/* System memory short: the verdict's notes and the search for a change. */
static void test_plan_short(void **state)
{
    (void)state;
    fail_each_plan("-m qwen3-0.6b-f16.gguf --gpu rpc:1GiB --host-mem 2GiB -c 40960");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qwen3),
        cmocka_unit_test(test_lfm2),
        cmocka_unit_test(test_projection_built),
        cmocka_unit_test(test_projection_kept),
        cmocka_unit_test(test_projection_hybrid),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_plan_fits),
        cmocka_unit_test(test_plan_short),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
