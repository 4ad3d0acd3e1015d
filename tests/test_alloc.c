/*
 * test_alloc.c - every allocation the reader, the model description and the
 * text renderer make can fail: make the 1st, 2nd, ... Nth fail in turn and
 * check that each gives GGFIT_ENOMEM (or, for the renderer, NULL) with no
 * crash and no leak (the sanitizer and valgrind builds check the leaks).
 */
#include "base/base.h"
#include "test_util.h"

static void fail_each_allocation(const char *file)
{
    char path[512];
    model_path(path, sizeof path, file);
    uint64_t n;
    for (n = 1;; n++) {
        ggfit_model *m = NULL;
        char *err = NULL, *text = NULL;
        ggfit__fail_alloc_after(n);
        int rc = ggfit_model_open(path, &m, &err);
        if (rc == GGFIT_OK)
            text = ggfit_inspect_text(m);
        uint64_t made = ggfit__fail_alloc_after(0);
        if (rc != GGFIT_OK) {
            assert_int_equal(rc, GGFIT_ENOMEM);
            assert_null(m);
            assert_non_null(err);
            assert_non_null(strstr(err, "out of memory"));
        } else if (!text) {
            assert_true(made >= n);   /* the renderer's allocation failed */
        }
        ggfit_free(err);
        ggfit_free(text);
        ggfit_model_free(m);
        if (made < n)   /* the Nth allocation never happened: all paths seen */
            break;
    }
    assert_true(n > 20);    /* tables, name blocks, the text: dozens of allocations */
}

static void test_qwen3(void **state)
{
    (void)state;
    fail_each_allocation("qwen3-0.6b-f16.gguf");
}

static void test_lfm2(void **state)
{
    (void)state;
    fail_each_allocation("lfm2-1.2b-Q4_K_M.gguf");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qwen3),
        cmocka_unit_test(test_lfm2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
