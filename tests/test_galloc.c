/*
 * test_galloc.c - the model of ggml-alloc against llama.cpp's own graphs.
 *
 * Each line of data/graphs/<model>.jsonl.gz (GGFIT_GRAPHS) is one graph that
 * llama.cpp's scheduler handed to ggml_gallocr_reserve_n, with the bytes
 * ggml-alloc reserved per backend. The replay must give the same bytes for
 * every backend of every graph. Small hand-made graphs then pin single rules
 * and the error paths.
 */
#include <dirent.h>
#include <time.h>

#include <jansson.h>
#include <zlib.h>

#include "galloc.h"
#include "internal.h"
#include "recorded.h"
#include "test_util.h"

typedef struct graph {
    ggfit_gt *t;
    size_t n_leafs, n_nodes;
    int n_backends;
    ggfit_galloc_buft bufts[8];
    uint64_t want[8];
    char names[8][64];
} graph;

static void graph_from_json(json_t *root, graph *g)
{
    json_t *backends = json_object_get(root, "backends");
    json_t *tensors = json_object_get(root, "tensors");
    assert_true(json_is_array(backends) && json_is_array(tensors));
    g->n_backends = (int)json_array_size(backends);
    assert_true(g->n_backends > 0 && g->n_backends <= 8);
    for (int b = 0; b < g->n_backends; b++) {
        json_t *jb = json_array_get(backends, (size_t)b);
        g->bufts[b].alignment = (uint64_t)json_integer_value(json_object_get(jb, "alignment"));
        /* CPU and RPC (to a CPU server) buffers have no size limit. */
        g->bufts[b].max_size = UINT64_MAX;
        g->bufts[b].same_as = -1;
        const char *buft = json_string_value(json_object_get(jb, "buft"));
        for (int a = 0; a < b; a++)
            if (strcmp(buft, json_string_value(json_object_get(json_array_get(backends, (size_t)a), "buft"))) == 0) {
                g->bufts[b].same_as = a;
                break;
            }
        g->want[b] = (uint64_t)json_integer_value(json_object_get(jb, "size"));
        snprintf(g->names[b], sizeof g->names[b], "%s",
                 json_string_value(json_object_get(jb, "name")));
    }

    size_t n = json_array_size(tensors);
    g->t = calloc(n ? n : 1, sizeof *g->t);
    tinfo *ti = calloc(n ? n : 1, sizeof *ti);
    int32_t *scratch = calloc(2 * (n ? n : 1), sizeof *scratch);
    assert_true(g->t && ti && scratch);
    resolver r = { .ti = ti, .t = g->t, .by_name = json_object(),
                   .n_uses = scratch, .seg = scratch + n };
    g->n_leafs = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *jt = json_array_get(tensors, i);
        ggfit_gt *t = &g->t[i];
        ti[i].name = json_string_value(json_object_get(jt, "name"));
        ti[i].leaf = strcmp(json_string_value(json_object_get(jt, "kind")), "leaf") == 0;
        if (ti[i].leaf) {
            assert_int_equal(g->n_leafs, i);   /* leafs come first */
            g->n_leafs++;
        }
        const char *op = json_string_value(json_object_get(jt, "op"));
        int opv = rec_op_from_desc(op);
        if (opv < 0)
            fail_msg("unknown op %s", op);
        t->op = (uint8_t)opv;
        int type = ggfit_type_from_name(json_string_value(json_object_get(jt, "type")));
        assert_true(type >= 0);
        t->type = (uint32_t)type;
        json_t *ne = json_object_get(jt, "ne");
        for (size_t d = 0; d < 4; d++)
            t->ne[d] = d < json_array_size(ne) ? json_integer_value(json_array_get(ne, d)) : 1;
        t->size = (uint64_t)json_integer_value(json_object_get(jt, "nbytes"));
        t->backend = (int32_t)json_integer_value(json_object_get(jt, "backend"));
        t->flags = (uint32_t)json_integer_value(json_object_get(jt, "flags"));
        t->allocated = json_integer_value(json_object_get(jt, "allocated")) != 0;
        t->view_src = -1;
        ti[i].view_src = json_string_value(json_object_get(jt, "view_src"));
        t->view_offs = (uint64_t)json_integer_value(json_object_get(jt, "view_offs"));
        ti[i].src = json_object_get(jt, "src");
        assert_true(json_array_size(ti[i].src) <= GGFIT_GALLOC_MAX_SRC);
        t->n_src = (uint8_t)json_array_size(ti[i].src);
        for (size_t j = 0; j < GGFIT_GALLOC_MAX_SRC; j++)
            t->src[j] = -1;
        json_t *list = json_object_get(r.by_name, ti[i].name);
        if (!list) {
            list = json_array();
            json_object_set_new(r.by_name, ti[i].name, list);
        }
        json_array_append_new(list, json_integer((json_int_t)i));
    }
    g->n_nodes = n - g->n_leafs;
    for (size_t i = 0; i < n; i++)
        rec_resolve_tensor(&r, i);
    json_decref(r.by_name);
    free(scratch);
    free(ti);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_llama_graphs(void **state)
{
    (void)state;
    DIR *dir = opendir(rec_graphs_dir());
    if (!dir)
        fail_msg("cannot open %s (set GGFIT_GRAPHS)", rec_graphs_dir());
    char *files[64];
    size_t n_files = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        size_t l = strlen(de->d_name);
        if (l > 9 && strcmp(de->d_name + l - 9, ".jsonl.gz") == 0 && n_files < 64)
            files[n_files++] = strdup(de->d_name);
    }
    closedir(dir);
    qsort(files, n_files, sizeof files[0], cmp_str);
    assert_true(n_files > 0);

    char *line = NULL;
    size_t cap = 0;
    ggfit__buf work = { 0 };   /* reused across runs and graphs, as projections do */
    int n_graphs = 0, n_graphs_ok = 0, n_backends = 0, n_backends_ok = 0;
    double slowest = 0;
    size_t slowest_n = 0;
    char slowest_at[300] = "";
    for (size_t f = 0; f < n_files; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", rec_graphs_dir(), files[f]);
        gzFile gz = gzopen(path, "rb");
        if (!gz)
            fail_msg("cannot open %s", path);
        gzbuffer(gz, 1 << 18);
        for (int ln = 1; rec_read_line(gz, &line, &cap); ln++) {
            json_error_t jerr;
            json_t *root = json_loads(line, 0, &jerr);
            if (!root)
                fail_msg("%s:%d: %s", path, ln, jerr.text);
            graph g = { 0 };
            graph_from_json(root, &g);
            json_decref(root);

            uint64_t got[8];
            char *err = NULL;
            /* Best of a few runs: the figure is the replay, not the cache.
             * The first run allocates its scratch, the others reuse one
             * block; the sizes checked come from the last. */
            double best = 1e30;
            int rc = GGFIT_OK;
            for (int rep = 0; rep < 5; rep++) {
                double t0 = now_us();
                rc = ggfit__galloc_reserve(g.t, g.n_leafs, g.n_nodes, g.n_backends, g.bufts, got,
                                           rep ? &work : NULL, &err);
                double dt = now_us() - t0;
                if (rc != GGFIT_OK)
                    break;
                best = dt < best ? dt : best;
            }
            if (rc != GGFIT_OK)
                fail_msg("%s:%d: %s", files[f], ln, err ? err : "?");
            if (best > slowest) {
                slowest = best;
                slowest_n = g.n_leafs + g.n_nodes;
                snprintf(slowest_at, sizeof slowest_at, "%s:%d", files[f], ln);
            }
            bool all = true;
            for (int b = 0; b < g.n_backends; b++) {
                n_backends++;
                if (got[b] == g.want[b]) {
                    n_backends_ok++;
                    continue;
                }
                all = false;
                printf("galloc: %s:%d %s: got %llu, llama.cpp %llu, diff %+lld\n",
                       files[f], ln, g.names[b], (unsigned long long)got[b],
                       (unsigned long long)g.want[b], (long long)(got[b] - g.want[b]));
            }
            n_graphs++;
            n_graphs_ok += all;
            free(g.t);
        }
        gzclose(gz);
        free(files[f]);
    }
    free(line);
    ggfit__buf_free(&work);
    printf("galloc: %d/%d graphs, %d/%d backends exact; slowest replay %.0f us (%s, %zu tensors)\n",
           n_graphs_ok, n_graphs, n_backends_ok, n_backends, slowest, slowest_at, slowest_n);
    assert_true(n_graphs > 0);
    assert_int_equal(n_backends_ok, n_backends);
}

/* ------------------------------------------------------------------------
 * Single rules on hand-made graphs (one backend, alignment 32)
 * ---------------------------------------------------------------------- */

static ggfit_gt mk(uint64_t size, int op, int32_t s0, int32_t s1)
{
    ggfit_gt t = { .size = size, .ne = { (int64_t)size / 4, 1, 1, 1 },
                   .type = GGFIT_TYPE_F32, .backend = 0, .view_src = -1,
                   .op = (uint8_t)op, .flags = GGFIT_TF_COMPUTE };
    for (int j = 0; j < GGFIT_GALLOC_MAX_SRC; j++)
        t.src[j] = -1;
    t.src[0] = s0;
    t.src[1] = s1;
    t.n_src = (uint8_t)((s0 >= 0) + (s1 >= 0));
    return t;
}

static uint64_t reserve1(const ggfit_gt *t, size_t n_leafs, size_t n_nodes)
{
    ggfit_galloc_buft buft = { 32, UINT64_MAX, -1 };
    uint64_t size = 0;
    char *err = NULL;
    int rc = ggfit__galloc_reserve(t, n_leafs, n_nodes, 1, &buft, &size, NULL, &err);
    if (rc != GGFIT_OK)
        fail_msg("%s", err);
    return size;
}

static void test_inplace_chain(void **state)
{
    (void)state;
    /* weight -> MUL_MAT -> RMS_NORM -> SCALE: the two in-place ops reuse the
     * MUL_MAT's memory, so the chain needs one tensor (1000 -> 1024). */
    ggfit_gt t[4];
    t[0] = mk(1000, GGFIT_OP_NONE, -1, -1);
    t[0].allocated = true;
    t[1] = mk(1000, GGFIT_OP_MUL_MAT, 0, -1);
    t[2] = mk(1000, GGFIT_OP_RMS_NORM, 1, -1);
    t[3] = mk(1000, GGFIT_OP_SCALE, 2, -1);
    assert_int_equal(reserve1(t, 1, 3), 1024);
    /* GLU does not run in place; the CONT after it reuses the freed
     * MUL_MAT memory: two tensors. */
    t[2].op = GGFIT_OP_GLU;
    t[3].op = GGFIT_OP_CONT;
    assert_int_equal(reserve1(t, 1, 3), 2048);
}

static void test_output_kept(void **state)
{
    (void)state;
    ggfit_gt t[4];
    t[0] = mk(64, GGFIT_OP_NONE, -1, -1);
    t[0].allocated = true;
    t[1] = mk(64, GGFIT_OP_MUL_MAT, 0, -1);
    t[2] = mk(64, GGFIT_OP_CONT, 1, -1);
    t[3] = mk(64, GGFIT_OP_CONT, 2, -1);
    /* t1 is freed once t2 ran, so t3 reuses its memory. */
    assert_int_equal(reserve1(t, 1, 3), 128);
    /* An output is never freed, and never taken over in place. */
    t[1].flags |= GGFIT_TF_OUTPUT;
    assert_int_equal(reserve1(t, 1, 3), 192);
    t[2].op = GGFIT_OP_SCALE;
    assert_int_equal(reserve1(t, 1, 3), 192);
}

static void test_view_keeps_source(void **state)
{
    (void)state;
    ggfit_gt t[5];
    t[0] = mk(64, GGFIT_OP_NONE, -1, -1);
    t[0].allocated = true;
    t[1] = mk(64, GGFIT_OP_MUL_MAT, 0, -1);
    t[2] = mk(64, GGFIT_OP_RESHAPE, 1, -1);
    t[2].view_src = 1;
    t[3] = mk(64, GGFIT_OP_CONT, 1, -1);
    t[4] = mk(64, GGFIT_OP_CONT, 2, -1);
    /* t1 lives until its view t2 is consumed by t4: three tensors. */
    assert_int_equal(reserve1(t, 1, 4), 192);
}

static void test_best_fit(void **state)
{
    (void)state;
    /* a and c die together and leave holes of 96 and 64 bytes, b and d live
     * on. g (64) must take the 64-byte hole, so that h (96) still fits in the
     * other: 256 bytes in all. First fit would put g at 0 and h at the end
     * (320 bytes). */
    ggfit_gt t[9];
    t[0] = mk(32, GGFIT_OP_NONE, -1, -1);
    t[0].allocated = true;
    t[1] = mk(96, GGFIT_OP_CONT, 0, -1);     /* a [0, 96) */
    t[2] = mk(32, GGFIT_OP_CONT, 0, -1);     /* b [96, 128) */
    t[3] = mk(64, GGFIT_OP_CONT, 0, -1);     /* c [128, 192) */
    t[4] = mk(32, GGFIT_OP_CONT, 0, -1);     /* d [192, 224) */
    t[5] = mk(32, GGFIT_OP_CONCAT, 1, 3);    /* f [224, 256); frees a, c */
    t[6] = mk(64, GGFIT_OP_CONT, 5, -1);     /* g [128, 192) */
    t[7] = mk(96, GGFIT_OP_CONT, 6, -1);     /* h [0, 96) */
    t[8] = mk(32, GGFIT_OP_CONCAT, 2, 4);    /* m in g's hole */
    assert_int_equal(reserve1(t, 1, 8), 256);
}

static void test_bad_graphs(void **state)
{
    (void)state;
    ggfit_galloc_buft buft = { 32, UINT64_MAX, -1 };
    uint64_t size;
    char *err = NULL;
    ggfit_gt t[2];
    t[0] = mk(64, GGFIT_OP_NONE, -1, -1);
    t[1] = mk(64, GGFIT_OP_CONT, 0, -1);
    t[0].backend = -1;   /* a leaf to allocate without a backend */
    assert_int_equal(ggfit__galloc_reserve(t, 1, 1, 1, &buft, &size, NULL, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "backend"));
    ggfit_free(err);
    t[0].backend = 0;
    t[1].src[0] = 7;
    assert_int_equal(ggfit__galloc_reserve(t, 1, 1, 1, &buft, &size, NULL, &err), GGFIT_EINVAL);
    ggfit_free(err);
    t[1].src[0] = 0;
    buft.alignment = 24;
    assert_int_equal(ggfit__galloc_reserve(t, 1, 1, 1, &buft, &size, NULL, &err), GGFIT_EINVAL);
    ggfit_free(err);
    buft.alignment = 32;
    ggfit__fail_alloc_after(1);
    assert_int_equal(ggfit__galloc_reserve(t, 1, 1, 1, &buft, &size, NULL, &err), GGFIT_ENOMEM);
    ggfit__fail_alloc_after(0);
    ggfit_free(err);
    assert_int_equal(ggfit__galloc_reserve(t, 1, 1, 1, &buft, &size, NULL, &err), GGFIT_OK);
    assert_int_equal(size, 128);
}

static void test_chunks(void **state)
{
    (void)state;
    /* max_size 100: a 64-byte tensor leaves 36 bytes in its chunk, so each
     * of the three opens a chunk of its own. */
    ggfit_gt t[4];
    t[0] = mk(64, GGFIT_OP_NONE, -1, -1);
    t[0].allocated = true;
    t[1] = mk(64, GGFIT_OP_CONT, 0, -1);
    t[2] = mk(64, GGFIT_OP_CONT, 0, -1);
    t[3] = mk(64, GGFIT_OP_CONCAT, 1, 2);
    ggfit_galloc_buft buft = { 32, 100, -1 };
    uint64_t size = 0;
    char *err = NULL;
    assert_int_equal(ggfit__galloc_reserve(t, 1, 3, 1, &buft, &size, NULL, &err), GGFIT_OK);
    assert_int_equal(size, 3 * 64);
    /* Two backends of one buffer type share an allocator; the second reports 0. */
    ggfit_galloc_buft two[2] = { { 32, UINT64_MAX, -1 }, { 32, UINT64_MAX, 0 } };
    t[2].backend = 1;
    uint64_t sizes[2];
    assert_int_equal(ggfit__galloc_reserve(t, 1, 3, 2, two, sizes, NULL, &err), GGFIT_OK);
    assert_int_equal(sizes[0], 3 * 64);
    assert_int_equal(sizes[1], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inplace_chain),
        cmocka_unit_test(test_output_kept),
        cmocka_unit_test(test_view_keeps_source),
        cmocka_unit_test(test_best_fit),
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_bad_graphs),
        cmocka_unit_test(test_llama_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
