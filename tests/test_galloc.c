/*
 * test_galloc.c - the model of ggml-alloc against llama.cpp's own graphs.
 *
 * Each line of data/graphs/<model>.jsonl.gz (GGFIT_GRAPHS) is one graph that
 * llama.cpp's scheduler handed to ggml_gallocr_reserve_n, with the bytes
 * ggml-alloc reserved per backend. The replay must give the same bytes for
 * every backend of every graph. Small hand-made graphs then pin single rules
 * and the error paths.
 */
#include "ggml/galloc.h"
#include "ggml/backend.h"
#include "versions/version.h"
#include "base/base.h"
#include "recorded.h"
#include "test_util.h"

static void test_llama_graphs(void **state)
{
    (void)state;
    rec_reader *rd = rec_open();
    rec_graph g;
    ggfit__buf work = { 0 };   /* reused across runs and graphs, as projections do */
    int n_graphs = 0, n_graphs_ok = 0, n_backends = 0, n_backends_ok = 0;
    double slowest = 0;
    size_t slowest_n = 0;
    char slowest_at[sizeof g.where] = "";
    while (rec_next(rd, &g)) {
        ggfit_galloc_buft bufts[REC_MAX_BACKENDS];
        for (int b = 0; b < g.n_backends; b++) {
            /* CPU and RPC (to a CPU server) buffers have no size limit;
             * backends of one buffer type share an allocator. */
            bufts[b] = (ggfit_galloc_buft){ g.backend[b].alignment, UINT64_MAX, -1 };
            for (int a = b - 1; a >= 0; a--)
                if (g.backend[a].buft_index == g.backend[b].buft_index)
                    bufts[b].same_as = a;
        }
        size_t n_nodes = g.n - g.n_leafs;

        uint64_t got[REC_MAX_BACKENDS];
        char *err = NULL;
        /* Best of a few runs: the figure is the replay, not the cache.
         * The first run allocates its scratch, the others reuse one
         * block; the sizes checked come from the last. */
        double best = 1e30;
        int rc = GGFIT_OK;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = rec_now_us();
            rc = ggfit__galloc_reserve(g.t, g.n_leafs, n_nodes, g.n_backends, bufts, got,
                                       rep ? &work : NULL, &err);
            double dt = rec_now_us() - t0;
            if (rc != GGFIT_OK)
                break;
            best = dt < best ? dt : best;
        }
        if (rc != GGFIT_OK)
            fail_msg("%s: %s", g.where, err ? err : "?");
        if (best > slowest) {
            slowest = best;
            slowest_n = g.n;
            snprintf(slowest_at, sizeof slowest_at, "%s", g.where);
        }
        bool all = true;
        for (int b = 0; b < g.n_backends; b++) {
            uint64_t want = g.backend[b].size;
            n_backends++;
            if (got[b] == want) {
                n_backends_ok++;
                continue;
            }
            all = false;
            printf("galloc: %s %s: got %llu, llama.cpp %llu, diff %+lld\n",
                   g.where, g.backend[b].name, (unsigned long long)got[b],
                   (unsigned long long)want, (long long)(got[b] - want));
        }
        n_graphs++;
        n_graphs_ok += all;
        rec_graph_free(&g);
    }
    rec_close(rd);
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


/* Metal's get_alloc_size from METAL_FA_F16_KV (b10587) on: a
 * flash-attention node asks for an F16 copy of K, and of V unless V views
 * K's memory (MLA), each padded to 16 bytes; nothing on other backends or
 * in b10309. */
static void test_metal_fa_scratch(void **state)
{
    (void)state;
    ggfit_st t[5];
    memset(t, 0, sizeof t);
    for (int i = 0; i < 5; i++) {
        memset(t[i].src, 0xff, sizeof t[i].src);
        t[i].view_src = -1;
        for (int d = 0; d < 4; d++)
            t[i].ne[d] = 1;
    }
    t[0].ne[0] = 1024, t[0].ne[1] = 4096;   /* the cache */
    t[1].view_src = 0, t[1].view_offs = 0;   /* K: 128 x 8 heads x 333 cells */
    t[1].ne[0] = 128, t[1].ne[1] = 333, t[1].ne[2] = 8;
    t[2] = t[1], t[2].view_offs = 4096;      /* V: elsewhere in the cache */
    t[2].ne[0] = 96;
    t[4].op = GGFIT_OP_FLASH_ATTN_EXT, t[4].n_src = 4;
    t[4].src[0] = 3, t[4].src[1] = 1, t[4].src[2] = 2;
    uint64_t k = (2ull * 128 * 333 * 8 + 15) / 16 * 16, v = (2ull * 96 * 333 * 8 + 15) / 16 * 16;
    uint32_t b10587 = 10587, b10309 = 10309;
    assert_int_equal(ggfit__backend_alloc_extra(GGFIT_BACKEND_METAL, t, 4, b10587), k + v);
    assert_int_equal(ggfit__backend_alloc_extra(GGFIT_BACKEND_METAL, t, 4, 0), k + v);
    assert_int_equal(ggfit__backend_alloc_extra(GGFIT_BACKEND_METAL, t, 4, b10309), 0);
    assert_int_equal(ggfit__backend_alloc_extra(GGFIT_BACKEND_CUDA, t, 4, b10587), 0);
    assert_int_equal(ggfit__backend_alloc_extra(GGFIT_BACKEND_METAL, t, 1, b10587), 0);
    t[2].view_offs = 0;                      /* V views K's memory */
    assert_int_equal(ggfit__backend_alloc_extra(GGFIT_BACKEND_METAL, t, 4, b10587), k);
    t[2].view_src = 1;                       /* V a view of K itself */
    assert_int_equal(ggfit__backend_alloc_extra(GGFIT_BACKEND_METAL, t, 4, b10587), k);

    /* In a plan: Llama 3.1 8B at -c 131072 on Metal, where one layer's
     * F16 K and V (256 MiB each) outgrow the logits; the same flags on
     * an RPC device do not change. */
    static const char *const lines[] = {
        "-m llama-3.1-8b-Q4_K_M.gguf --gpu metal:64GiB -c 131072 -fa on --for fit-params",
        "-m llama-3.1-8b-Q4_K_M.gguf --gpu rpc:64GiB -c 131072 -fa on --for fit-params",
    };
    for (int l = 0; l < 2; l++) {
        uint64_t compute[2];
        for (int ver = 0; ver < 2; ver++) {
            char line[512], buf[512], *argv[24], *err = NULL;
            int argc;
            snprintf(line, sizeof line, "%s --llama-version %s", lines[l],
                     ver ? "b10587" : "b10309");
            ggfit_request r;
            request_of(&r, line, buf, sizeof buf, argv, 24, &argc);
            ggfit_plan pl;
            if (ggfit_request_plan(&r, &pl, &err))
                fail_msg("%s: %s", line, err);
            compute[ver] = pl.projection.devices[0].compute;
            ggfit_plan_free(&pl);
        }
        if (l == 0)
            assert_true(compute[1] > compute[0] + (400ull << 20));
        else
            assert_int_equal(compute[1], compute[0]);
    }
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
        cmocka_unit_test(test_metal_fa_scratch),
        cmocka_unit_test(test_llama_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
