/*
 * test_cache.c - a model keeps the graphs of its recent projections and
 * re-targets them when only the placement changes (project.c). That must
 * never change a byte: for every shipped layout, a run of configurations
 * projected on one open model (graphs kept, re-targeted, evicted, their
 * memory reused) gives exactly what each gives on a freshly opened one.
 */
#include "test_util.h"

/* Configurations in the order a fit would visit them: the same context
 * with layers moving between devices (re-targeting), a context change
 * (eviction), -fa auto probes (partial offload), tied outputs and rope
 * factors both on and off the output's device, and flags that place every
 * tensor as an earlier configuration did. */
static const char *const configs[] = {
    "-c 4096",
    "-c 4096 -ngl 0",
    "-c 4096 -ngl 1",
    "-c 4096 -ngl 5",
    "-c 4096 -ngl 999",
    "-c 8192 -ngl 3",
    "-c 16384 -ngl 3",    /* the probe of -c 8192 -ngl 3 kept */
    "-c 4096 -ngl 2",
    "-c 8192 -ngl 999 -fa off",
    "-c 4096 -ngl 4 -nkvo",
    "-c 8192 -ngl 4 -nkvo",
    "-c 8192 -ngl 4 -nkvo -np 2",
    "-c 4096 -ncmoe 2",
    "-c 4096 -ot blk\\.[01]\\.ffn_(up|down|gate)_exps=CPU",
    "-c 4096 -ot blk\\.1\\..*=CPU",
    "-c 4096 -ngl 3 -ts 1,1",
    "-c 4096 -ngl 999 -ts 3,1",
    "-c 4096 -ngl 4",
    "-c 4096 -ngl 999",   /* placed as "-c 4096" was */
};

static void parse(ggfit_params *p, const char *config)
{
    char buf[256], *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", config);
    for (char *tok = strtok(buf, " "); tok && argc < 32; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    ggfit_params_init(p);
    for (int i = 0; i < argc;) {
        char *err = NULL;
        ggfit_status rc = ggfit_params_parse_arg(p, argc, argv, &i, NULL, &err);
        if (rc != GGFIT_OK)
            fail_msg("%s: %s", config, err ? err : "unknown flag");
    }
}

static bool same_mem(const ggfit_mem *a, const ggfit_mem *b)
{
    return a->model == b->model && a->context == b->context && a->compute == b->compute;
}

/* The first difference between two projections, or NULL. */
static const char *differs(const ggfit_projection *a, const ggfit_projection *b)
{
    if (a->n_ctx != b->n_ctx || a->flash_attn != b->flash_attn ||
        a->n_devices != b->n_devices || a->n_bufts != b->n_bufts ||
        a->compute_estimated != b->compute_estimated)
        return "context, flash attention, devices or buffer types";
    for (uint32_t d = 0; d < a->n_devices; d++)
        if (!same_mem(&a->devices[d], &b->devices[d]))
            return "a device row";
    if (!same_mem(&a->host, &b->host) || !same_mem(&a->cpu_extra, &b->cpu_extra))
        return "the host row";
    for (uint32_t k = 0; k < a->n_bufts; k++)
        if (!same_mem(&a->bufts[k].mem, &b->bufts[k].mem))
            return "a buffer type";
    return NULL;
}

static void test_kept_graphs_change_nothing(void **state)
{
    (void)state;
    model_name files[64];
    size_t n_files = model_files(files, 64);
    assert_true(n_files >= 16);
    ggfit_device devs[2];
    size_t n_dev;
    assert_int_equal(ggfit_devices_parse("cuda:24GiB,cuda:12GiB", devs, 2, &n_dev, NULL),
                     GGFIT_OK);
    int n_checked = 0;
    for (size_t f = 0; f < n_files; f++) {
        char path[512];
        model_path(path, sizeof path, files[f]);
        ggfit_model *kept;
        char *err = NULL;
        if (ggfit_model_open(path, &kept, &err) != GGFIT_OK)
            fail_msg("%s", err);
        for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
            ggfit_params p;
            parse(&p, configs[c]);
            size_t nd = strstr(configs[c], "-ts") ? 2 : 1;
            ggfit_projection a, b;
            if (ggfit_project(kept, &p, devs, nd, &a, NULL, &err) != GGFIT_OK)
                fail_msg("%s %s: %s", files[f], configs[c], err);
            ggfit_model *fresh;
            if (ggfit_model_open(path, &fresh, &err) != GGFIT_OK)
                fail_msg("%s", err);
            if (ggfit_project(fresh, &p, devs, nd, &b, NULL, &err) != GGFIT_OK)
                fail_msg("%s %s: %s", files[f], configs[c], err);
            ggfit_model_free(fresh);
            const char *what = differs(&a, &b);
            if (what)
                fail_msg("%s %s: %s differs between a kept graph and a fresh one", files[f],
                         configs[c], what);
            n_checked++;
        }
        ggfit_model_free(kept);
    }
    printf("cache: %d projections on kept graphs equal to fresh ones\n", n_checked);
}

/* A model freed leaves its cache, emptied, to the next model opened
 * (graph_cache.c): every layout projected after every other must give what
 * it gives after any other. The layouts are projected in turn, then in the
 * opposite turn, and each projection compared with its first. */
static void test_caches_passed_on_change_nothing(void **state)
{
    (void)state;
    static const int picked[] = { 0, 2, 5, 9, 11 };
    enum { N_PICKED = sizeof picked / sizeof picked[0] };
    model_name files[64];
    size_t n_files = model_files(files, 64);
    assert_true(n_files >= 16);
    ggfit_device devs[2];
    size_t n_dev;
    assert_int_equal(ggfit_devices_parse("cuda:24GiB,cuda:12GiB", devs, 2, &n_dev, NULL),
                     GGFIT_OK);
    ggfit_projection *first = calloc(n_files * N_PICKED, sizeof *first);
    assert_non_null(first);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < n_files; k++) {
            size_t f = pass ? n_files - 1 - k : k;
            char path[512];
            model_path(path, sizeof path, files[f]);
            ggfit_model *m;
            char *err = NULL;
            if (ggfit_model_open(path, &m, &err) != GGFIT_OK)
                fail_msg("%s", err);
            for (int c = 0; c < N_PICKED; c++) {
                ggfit_params p;
                parse(&p, configs[picked[c]]);
                ggfit_projection got, *was = &first[f * N_PICKED + (size_t)c];
                if (ggfit_project(m, &p, devs, 1, pass ? &got : was, NULL, &err) != GGFIT_OK)
                    fail_msg("%s %s: %s", files[f], configs[picked[c]], err);
                const char *what = pass ? differs(&got, was) : NULL;
                if (what)
                    fail_msg("%s %s: %s differs after another model than after the one "
                             "before it", files[f], configs[picked[c]], what);
            }
            ggfit_model_free(m);
        }
    }
    free(first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_graphs_change_nothing),
        cmocka_unit_test(test_caches_passed_on_change_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
