/*
 * test_batch.c - ggfit_batch_answer: a line's plan is the one ggfit_request_plan
 * makes of the same flags, a bad line is answered with an error and its id,
 * a kept header is read again once its file changes, and threads answering
 * on one batch answer as one thread does; a line and the library's other
 * documents begin with "json_version" and "kind" (docs/json.md).
 */
#include "test_util.h"

#include <pthread.h>
#include <unistd.h>
#include <jansson.h>

static json_t *answer(ggfit_batch *b, const char *line)
{
    char *out = ggfit_batch_answer(b, line, strlen(line));
    assert_non_null(out);
    assert_null(strchr(out, '\n'));
    json_t *j = json_loads(out, 0, NULL);
    ggfit_free(out);
    assert_non_null(j);
    return j;
}

static void test_plan_and_errors(void **state)
{
    (void)state;
    char path[512], line[1024];
    model_path(path, sizeof path, "qwen3-14b-Q4_K_M.gguf");
    ggfit_batch *b = ggfit_batch_new();
    assert_non_null(b);
    snprintf(line, sizeof line, "{\"id\": {\"job\": 7}, \"argv\": [\"-m\", \"%s\", \"--gpu\", "
             "\"rtx-3090\", \"--host-mem\", \"64GiB\"]}", path);
    json_t *j = answer(b, line);
    /* a line is a document (docs/json.md); the plan in it is not */
    assert_int_equal(json_integer_value(json_object_get(j, "json_version")), GGFIT_JSON_VERSION);
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "batch");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "id"), "job")), 7);
    assert_int_equal(json_integer_value(json_object_get(j, "exit_status")), 0);
    /* the plan ggfit_request_plan makes of the same flags */
    ggfit_request *r = ggfit_request_new();
    ggfit_plan *pl = calloc(1, sizeof *pl);
    char a0[] = "-m", a2[] = "--gpu", a3[] = "rtx-3090", a4[] = "--host-mem", a5[] = "64GiB";
    char *argv[] = { a0, path, a2, a3, a4, a5 };
    char *err = NULL;
    for (int i = 0; i < 6;)
        assert_int_equal(ggfit_request_parse_arg(r, 6, argv, &i, NULL, &err), GGFIT_OK);
    assert_int_equal(ggfit_request_plan(r, pl, &err), GGFIT_OK);
    char *text = ggfit_plan_json(pl);
    json_t *want = json_loads(text, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(want, "kind")), "plan");
    assert_null(json_object_get(json_object_get(j, "plan"), "kind"));
    json_object_del(want, "json_version");
    json_object_del(want, "kind");
    assert_true(json_equal(json_object_get(j, "plan"), want));
    json_decref(want);
    ggfit_free(text);
    /* the library's own documents begin with the version and their kind */
    static const char *const kinds[] = { "projection", "fit" };
    char *docs[] = { ggfit_projection_json(&pl->projection, pl->devices),
                     ggfit_fit_json(&pl->fit, pl->devices, pl->n_devices) };
    for (int k = 0; k < 2; k++) {
        assert_non_null(docs[k]);
        char head[64];
        snprintf(head, sizeof head, "{\n  \"json_version\": %d,\n  \"kind\": \"%s\",",
                 GGFIT_JSON_VERSION, kinds[k]);
        assert_memory_equal(docs[k], head, strlen(head));
        snprintf(head, sizeof head, "batch-%s.json", kinds[k]);
        keep_json(head, docs[k]);
        ggfit_free(docs[k]);
    }
    ggfit_plan_free(pl);
    free(pl);
    ggfit_request_free(r);
    json_decref(j);
    /* errors, each with its id (null when the line has none) */
    static const struct { const char *line, *error; } bad[] = {
        { "{\"id\": 1, \"argv\": [\"-m\", \"/nonexistent.gguf\"]}", "cannot open" },
        { "{\"id\": 2, \"argv\": [\"-m\"]}", "-m" },
        { "{\"id\": 3, \"argv\": [\"bench\", \"-m\", \"x\"]}", "not another command" },
        { "{\"id\": 4, \"argv\": [\"--objective\", \"speed\"]}", "not a flag a batch line takes" },
        { "{\"id\": 5, \"argv\": [\"--\", \"llama-bench\", \"-m\", \"x\"]}", "llama-bench line" },
        { "{\"id\": 6, \"argv\": \"-m x\"}", "no \"argv\" array" },
        { "{\"id\": 7, \"argv\": [\"-m\", null]}", "is not a string" },
        { "[1, 2]", "no \"argv\" array" },
        { "{\"id\": 9, \"id\": 10, \"argv\": []}", "not JSON" },
        { "\xff\xfe", "not JSON" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        j = answer(b, bad[k].line);
        const char *e = json_string_value(json_object_get(j, "error"));
        if (!e || !strstr(e, bad[k].error))
            fail_msg("%s: '%s', want '%s'", bad[k].line, e ? e : "(none)", bad[k].error);
        assert_null(json_object_get(j, "plan"));
        json_decref(j);
    }
    ggfit_batch_free(b);
}

/* A header kept open is read again when its file is replaced. */
static void test_file_changed(void **state)
{
    (void)state;
    char src[512], dst[512], line[1024];
    snprintf(dst, sizeof dst, "%s/batch-model.gguf", tmp_dir());
    snprintf(line, sizeof line, "{\"id\": 0, \"argv\": [\"-m\", \"%s\", \"--gpu\", \"rtx-3090\", "
             "\"--host-mem\", \"64GiB\"]}", dst);
    ggfit_batch *b = ggfit_batch_new();
    assert_non_null(b);
    static const char *const files[] = { "qwen3-0.6b-f16.gguf", "llama-3.1-8b-Q4_K_M.gguf" };
    char cmd[2200];
    /* the two files' plans differ: the second was read, not the first kept */
    model_path(src, sizeof src, files[0]);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s.tmp' && mv '%s.tmp' '%s'", src, dst, dst, dst);
    assert_int_equal(system(cmd), 0);
    json_t *a = answer(b, line), *again = answer(b, line);
    assert_true(json_equal(a, again));   /* kept: the same answer */
    json_decref(again);
    model_path(src, sizeof src, files[1]);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s.tmp' && mv '%s.tmp' '%s'", src, dst, dst, dst);
    assert_int_equal(system(cmd), 0);
    json_t *c = answer(b, line);
    assert_false(json_equal(json_object_get(a, "plan"), json_object_get(c, "plan")));
    json_int_t ma = json_integer_value(json_object_get(
        json_array_get(json_object_get(json_object_get(a, "plan"), "devices"), 0), "model"));
    json_int_t mc = json_integer_value(json_object_get(
        json_array_get(json_object_get(json_object_get(c, "plan"), "devices"), 0), "model"));
    assert_true(ma < 2000000000 && mc > 4000000000);   /* 0.6B F16 against 8B Q4_K_M */
    json_decref(a);
    json_decref(c);
    unlink(dst);
    ggfit_batch_free(b);
}

enum { N_LINES = 24, N_THREADS = 4 };

typedef struct job {
    ggfit_batch *b;
    char (*lines)[1024];
    char *out[N_LINES];
} job;

static void *answer_all(void *arg)
{
    job *j = arg;
    for (int i = 0; i < N_LINES; i++)
        j->out[i] = ggfit_batch_answer(j->b, j->lines[i], strlen(j->lines[i]));
    return NULL;
}

/* Threads answering on one batch (one header kept, shared) answer as one
 * thread does. */
static void test_threads(void **state)
{
    (void)state;
    static char lines[N_LINES][1024];
    static const char *const models[] = { "gpt-oss-20b-mxfp4.gguf", "qwen3-30b-a3b-Q4_K_M.gguf",
                                          "qwen3-0.6b-f16.gguf" };
    static const char *const gpus[] = { "rtx-3090", "8GiB", "24GiB,12GiB", "none" };
    for (int i = 0; i < N_LINES; i++) {
        char path[512];
        model_path(path, sizeof path, models[i % 3]);
        snprintf(lines[i], sizeof lines[i], "{\"id\": %d, \"argv\": [\"-m\", \"%s\", \"--gpu\", "
                 "\"%s\", \"--host-mem\", \"64GiB\", \"-c\", \"%d\"]}", i, path, gpus[i % 4],
                 4096 << (i % 3));
    }
    ggfit_batch *one = ggfit_batch_new(), *shared = ggfit_batch_new();
    assert_non_null(one);
    assert_non_null(shared);
    job alone = { one, lines, { NULL } };
    answer_all(&alone);
    job jobs[N_THREADS];
    pthread_t th[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        jobs[t] = (job){ shared, lines, { NULL } };
        assert_int_equal(pthread_create(&th[t], NULL, answer_all, &jobs[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < N_LINES; i++) {
        assert_non_null(alone.out[i]);
        assert_non_null(strstr(alone.out[i], "\"plan\""));
        for (int t = 0; t < N_THREADS; t++) {
            assert_string_equal(jobs[t].out[i], alone.out[i]);
            ggfit_free(jobs[t].out[i]);
        }
        ggfit_free(alone.out[i]);
    }
    ggfit_batch_free(one);
    ggfit_batch_free(shared);
}

int main(void)
{
    setenv("GGFIT_HOST_BW", "default", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_and_errors),
        cmocka_unit_test(test_file_changed),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
