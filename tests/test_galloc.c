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


/* ------------------------------------------------------------------------
 * Kept replays: a walk resumed from a checkpoint gives a full walk's bytes
 * ---------------------------------------------------------------------- */

/* A blank entry, padding cleared, so that equal entries compare equal. */
static void blank(ggfit_gt *t, uint64_t size)
{
    memset(t, 0, sizeof *t);
    t->size = size;
    t->ne[0] = (int64_t)size / 4;
    t->ne[1] = t->ne[2] = t->ne[3] = 1;
    t->type = GGFIT_TYPE_F32;
    t->flags = GGFIT_TF_COMPUTE;
    t->view_src = -1;
    for (int j = 0; j < GGFIT_GALLOC_MAX_SRC; j++)
        t->src[j] = -1;
}

static void node(ggfit_gt *t, uint64_t size, int op, int32_t s0, int32_t s1)
{
    blank(t, size);
    t->op = (uint8_t)op;
    t->src[0] = s0;
    t->src[1] = s1;
    t->n_src = (uint8_t)(s1 >= 0 ? 2 : s0 >= 0);
}

static size_t n_same_of(const ggfit_gt *a, size_t na, const ggfit_gt *b, size_t nb)
{
    size_t k = 0;
    while (k < na && k < nb && !memcmp(&a[k], &b[k], sizeof *a))
        k++;
    return k;
}

static const int owner_tag;   /* the owner of the keeps below */

/* Replays t on keep k (after the graph prev of n_prev entries) and checks
 * the bytes against a plain replay; returns the keep's counters. */
static ggfit_galloc_keep_stats kept_vs_full_tail(ggfit_galloc_keep *k, const ggfit_gt *prev,
                                                 size_t n_prev, const ggfit_gt *t, size_t n_leafs,
                                                 size_t n, int n_backends,
                                                 const ggfit_galloc_buft *bufts,
                                                 const ggfit_galloc_tail *tail)
{
    uint64_t got[4], want[4];
    char *err = NULL;
    size_t same = prev ? n_same_of(prev, n_prev, t, n) : 0;
    if (ggfit__galloc_reserve_kept(t, n_leafs, n - n_leafs, n_backends, bufts, got, k, &owner_tag,
                                   7, same, tail, &err) != GGFIT_OK)
        fail_msg("kept: %s", err);
    if (ggfit__galloc_reserve_trusted(t, n_leafs, n - n_leafs, n_backends, bufts, want, NULL,
                                      &err) != GGFIT_OK)
        fail_msg("full: %s", err);
    for (int b = 0; b < n_backends; b++)
        assert_int_equal(got[b], want[b]);
    ggfit_galloc_keep_stats st;
    ggfit__galloc_keep_get_stats(k, &st);
    return st;
}

static ggfit_galloc_keep_stats kept_vs_full(ggfit_galloc_keep *k, const ggfit_gt *prev,
                                            size_t n_prev, const ggfit_gt *t, size_t n_leafs,
                                            size_t n, int n_backends, const ggfit_galloc_buft *bufts)
{
    return kept_vs_full_tail(k, prev, n_prev, t, n_leafs, n, n_backends, bufts, NULL);
}

/* A chain of small nodes from position 1, each reading the one before:
 * the background of the hand-made pairs below. */
static void chain(ggfit_gt *t, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        node(&t[i], 64, GGFIT_OP_CONT, (int32_t)i - 1, -1);
}

static const ggfit_galloc_buft one_buft = { 32, UINT64_MAX, -1 };

static void test_kept_new_consumer(void **state)
{
    (void)state;
    /* Pitfall 1: X (node 2, 4096 bytes) is last read at 100 in A, so Y
     * (4096, at 120) takes its memory. B is A up to 159 but reads X again
     * at 160: X then lives past Y, which needs memory of its own. The
     * common prefix is long, but the walk differs from 100 on. */
    enum { N = 200 };
    ggfit_gt a[N], b[N];
    blank(&a[0], 64);
    a[0].allocated = true;
    node(&a[1], 64, GGFIT_OP_CONT, 0, -1);
    node(&a[2], 4096, GGFIT_OP_MUL_MAT, 0, 1);
    chain(a, 3, N);
    node(&a[100], 64, GGFIT_OP_CONCAT, 99, 2);
    node(&a[120], 4096, GGFIT_OP_CONT, 119, -1);
    node(&a[121], 64, GGFIT_OP_CONT, 120, -1);
    memcpy(b, a, sizeof a);
    node(&b[160], 64, GGFIT_OP_CONCAT, 159, 2);

    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    uint64_t sa, sb;
    char *err = NULL;
    assert_int_equal(ggfit__galloc_reserve_trusted(a, 1, N - 1, 1, &one_buft, &sa, NULL, &err), 0);
    assert_int_equal(ggfit__galloc_reserve_trusted(b, 1, N - 1, 1, &one_buft, &sb, NULL, &err), 0);
    assert_true(sb > sa);   /* the pair tests something */

    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 0);
    st = kept_vs_full(k, a, N, b, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 1);
    assert_int_equal(st.last_bound, 100);
    assert_int_equal(st.last_from, 65);   /* the checkpoint at 1 + 64 */
    /* And back: X is held by the other suffix only, the bound is 100
     * again. */
    st = kept_vs_full(k, b, N, a, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 2);
    assert_int_equal(st.last_bound, 100);
    assert_int_equal(st.last_from, 65);
    /* The same graph again resumes at the last checkpoint. */
    st = kept_vs_full(k, a, N, a, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 3);
    assert_int_equal(st.last_from, 1 + 3 * 64);
    /* Another owner or generation walks in full. */
    uint64_t s;
    assert_int_equal(ggfit__galloc_reserve_kept(a, 1, N - 1, 1, &one_buft, &s, k, a, 7, N,
                                                NULL, &err), 0);
    assert_int_equal(ggfit__galloc_reserve_kept(a, 1, N - 1, 1, &one_buft, &s, k, a, 8, N,
                                                NULL, &err), 0);
    ggfit__galloc_keep_get_stats(k, &st);
    assert_int_equal(st.n_resumed, 3);
    assert_int_equal(s, sa);
    ggfit__galloc_keep_free(k);
}

static void test_kept_inputs_differ(void **state)
{
    (void)state;
    /* Rule 2 places inputs before the walk, below everything: an input
     * after the common prefix that grows moves every later tensor, so the
     * walk starts over. */
    enum { N = 200 };
    ggfit_gt a[N], b[N], c[N];
    blank(&a[0], 64);
    a[0].allocated = true;
    blank(&a[1], 128);
    a[1].flags |= GGFIT_TF_INPUT;
    chain(a, 2, N);
    node(&a[150], 256, GGFIT_OP_NONE, -1, -1);
    a[150].flags |= GGFIT_TF_INPUT;
    node(&a[151], 64, GGFIT_OP_CONCAT, 150, 149);
    node(&a[152], 2048, GGFIT_OP_CONT, 151, -1);
    node(&a[153], 64, GGFIT_OP_CONT, 152, -1);
    memcpy(b, a, sizeof a);
    b[150].size = 8192;
    b[150].ne[0] = 2048;

    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, N, 1, &one_buft);
    st = kept_vs_full(k, a, N, b, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 0);
    assert_int_equal(st.n_full[3], 1);   /* rules 1-2 placed differently */
    /* a again: full, b's input differs. */
    st = kept_vs_full(k, b, N, a, 1, N, 1, &one_buft);
    assert_int_equal(st.n_full[3], 2);
    /* Inputs the same, but the node after one of them differs: resumed. */
    memcpy(c, a, sizeof a);
    c[152].size = 4096;
    c[152].ne[0] = 1024;
    st = kept_vs_full(k, a, N, c, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 1);
    assert_int_equal(st.last_from, 129);
    ggfit__galloc_keep_free(k);
}

static void test_kept_inplace_across(void **state)
{
    (void)state;
    /* An in-place chain (SCALE after SCALE on one 1024-byte tensor) from 20
     * to 190, each link also read by a side node; the graphs differ at 151
     * (a side node's size), so the walk resumes at 129, mid-chain, with the
     * chain's tensor live and owned in the checkpoint. */
    enum { N = 200 };
    ggfit_gt a[N], b[N];
    blank(&a[0], 64);
    a[0].allocated = true;
    chain(a, 1, N);
    node(&a[19], 1024, GGFIT_OP_MUL_MAT, 18, 0);
    for (size_t i = 20; i < 190; i += 2) {
        node(&a[i], 1024, GGFIT_OP_SCALE, (int32_t)i - 1, -1);
        node(&a[i + 1], 256, GGFIT_OP_CONT, (int32_t)i - 2 + (i == 20), -1);
    }
    node(&a[191], 64, GGFIT_OP_CONCAT, 189, 190);
    memcpy(b, a, sizeof a);
    b[151].size = 2048;
    b[151].ne[0] = 512;

    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, N, 1, &one_buft);
    st = kept_vs_full(k, a, N, b, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 1);
    assert_int_equal(st.last_from, 129);
    /* Breaking the chain after the prefix (a link that cannot run in place)
     * changes nothing before it. */
    memcpy(a, b, sizeof a);
    a[170].op = GGFIT_OP_CONT;
    st = kept_vs_full(k, b, N, a, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 2);
    assert_int_equal(st.last_bound, 170);
    assert_int_equal(st.last_from, 129);
    ggfit__galloc_keep_free(k);
}

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(*s >> 33);
}

/* Random graph entries [from, n): recent and long-lived sources, in-place
 * ops on their source's shape, views, dependency views reading a view
 * placed after them, inputs, outputs, several backends. */
static void random_nodes(ggfit_gt *t, size_t n_leafs, size_t from, size_t n, int n_backends,
                         uint64_t *s)
{
    static const uint64_t sizes[] = { 64, 256, 1000, 4096, 16384 };
    for (size_t i = from; i < n; i++) {
        int32_t near = (int32_t)(i - 1 - rnd(s) % (i < 6 ? i : 6));
        /* Far sources: a few long-lived tensors (masks, positions), or any. */
        int32_t far = (int32_t)(rnd(s) % 3 ? n_leafs + rnd(s) % 8 : rnd(s) % i);
        if ((size_t)far >= i)
            far = (int32_t)(i - 1);
        uint32_t kind = rnd(s) % 20;
        uint64_t size = sizes[rnd(s) % 5];
        int32_t root = t[near].view_src >= 0 ? t[near].view_src : near;
        /* Inputs mostly at the start, as the scheduler's graph has them. */
        if (kind == 0 && (i < n_leafs + 20 || rnd(s) % 10 == 0)) {
            node(&t[i], size, GGFIT_OP_NONE, -1, -1);
            t[i].flags |= GGFIT_TF_INPUT;
        } else if (kind >= 1 && kind <= 2 && !t[root].allocated && (size_t)root >= n_leafs) {
            node(&t[i], t[root].size, GGFIT_OP_RESHAPE, near, -1);
            t[i].view_src = root;
        } else if (kind == 3 && i + 2 < n && !t[root].allocated && (size_t)root >= n_leafs) {
            /* A dependency view reading the view placed right after it. */
            node(&t[i], t[root].size, GGFIT_OP_NONE, (int32_t)i + 1, -1);
            t[i].view_src = root;
            i++;
            node(&t[i], t[root].size, GGFIT_OP_VIEW, root, -1);
            t[i].view_src = root;
        } else if (kind <= 9 && !t[near].allocated) {
            node(&t[i], t[near].size, kind & 1 ? GGFIT_OP_SCALE : GGFIT_OP_ADD, near,
                 kind & 1 ? -1 : far);
            memcpy(t[i].ne, t[near].ne, sizeof t[i].ne);
            t[i].type = t[near].type;
            if (t[near].strided)
                t[i].op = GGFIT_OP_CONT;
        } else {
            node(&t[i], size, kind & 1 ? GGFIT_OP_MUL_MAT : GGFIT_OP_CONT, near,
                 kind % 3 == 0 ? far : -1);
        }
        if (rnd(s) % 40 == 0)
            t[i].flags |= GGFIT_TF_OUTPUT;
        t[i].backend = (int32_t)(rnd(s) % (uint32_t)n_backends);
    }
}

/* The graphs of the tail tests: a chain from 1, a middle of n_mid nodes of
 * `mid` bytes from 150, then a tail of 250 chain nodes. x > 0 makes node
 * 152 (in the middle) x bytes, read again by the tail node x_at past the
 * middle; big > 0 makes node 5 big bytes, read by the last node. */
static size_t tail_graph(ggfit_gt *t, size_t n_mid, uint64_t mid, uint64_t x, size_t x_at,
                         uint64_t big)
{
    size_t end = 150 + n_mid, n = end + 250;
    blank(&t[0], 64);
    t[0].allocated = true;
    chain(t, 1, n);
    node(&t[152], mid, GGFIT_OP_CONT, 151, -1);
    if (x) {
        node(&t[154], x, GGFIT_OP_MUL_MAT, 153, 0);
        node(&t[end + x_at], 64, GGFIT_OP_CONCAT, (int32_t)(end + x_at) - 1, 154);
    }
    if (big) {
        node(&t[5], big, GGFIT_OP_MUL_MAT, 4, 0);
        node(&t[n - 1], 64, GGFIT_OP_CONCAT, (int32_t)n - 2, 5);
    }
    return n;
}

/* The scheduler's word on two such graphs: the same up to 150, the tails
 * alike after the middles (map: room for the old middle). */
static ggfit_galloc_tail tail_of(size_t mid_old, size_t mid_new, int32_t *map)
{
    for (size_t i = 0; i < mid_old; i++)
        map[i] = i < mid_new ? (int32_t)(150 + i) : -1;
    return (ggfit_galloc_tail){ .n_placed_same = 150, .tail_new = 150 + mid_new,
                                .tail_old = 150 + mid_old, .mid_new = map };
}

static void test_kept_tail(void **state)
{
    (void)state;
    /* a and b differ only at 152, a node that lives one step: 64 bytes in
     * a, 4096 in b. After it the free lists are the same again, and the
     * walk on b stops at the first checkpoint in the tail; the mark there
     * is b's, above a's, and nothing later places as high: b's final mark
     * is its mark there. */
    enum { N = 500 };
    static ggfit_gt a[N], b[N], c[N];
    int32_t map[64];
    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    size_t na = tail_graph(a, 10, 64, 0, 0, 0);
    size_t nb = tail_graph(b, 10, 4096, 0, 0, 0);
    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, na, 1, &one_buft);
    ggfit_galloc_tail tl = tail_of(10, 10, map);
    st = kept_vs_full_tail(k, a, na, b, 1, nb, 1, &one_buft, &tl);
    assert_int_equal(st.n_tail, 1);
    assert_int_equal(st.n_tail_skipped, na - 193);
    /* Back to a: its mark is below b's there; b's final mark says nothing
     * of what came after, the peak kept per checkpoint does (a's final
     * mark is a's mark there: the rest places lower). */
    st = kept_vs_full_tail(k, b, nb, a, 1, na, 1, &one_buft, &tl);
    assert_int_equal(st.n_resumed, 2);
    assert_int_equal(st.n_tail, 2);
    assert_int_equal(st.n_tail_skipped, 2 * (na - 193));
    /* A middle 10 entries longer (c's 152 as b's): the tail is a's moved
     * by 10, and the walk stops between checkpoints, at 193 + 10. */
    size_t nc = tail_graph(c, 20, 4096, 0, 0, 0);
    tl = tail_of(10, 20, map);
    st = kept_vs_full_tail(k, a, na, c, 1, nc, 1, &one_buft, &tl);
    assert_int_equal(st.n_tail, 3);
    assert_int_equal(st.n_tail_skipped, 2 * (na - 193) + nc - 203);
    /* After a call that stopped early: a resume on the same graph (no
     * tail); one back to a (shift -10), which stops at 193 - 10 against
     * a walk that stopped itself (its peaks after the stop are the last
     * walk's); then b, against a walk whose checkpoints end at 129, before
     * the tail: no stop, and still a full walk's bytes. */
    st = kept_vs_full(k, c, nc, c, 1, nc, 1, &one_buft);
    tl = tail_of(20, 10, map);
    st = kept_vs_full_tail(k, c, nc, a, 1, na, 1, &one_buft, &tl);
    assert_int_equal(st.n_tail, 4);
    assert_int_equal(st.n_tail_skipped, 2 * (na - 193) + nc - 203 + na - 183);
    tl = tail_of(10, 10, map);
    st = kept_vs_full_tail(k, a, na, b, 1, nb, 1, &one_buft, &tl);
    assert_int_equal(st.n_resumed, 6);
    assert_int_equal(st.n_tail, 4);
    ggfit__galloc_keep_free(k);
}

static void test_kept_tail_peak(void **state)
{
    (void)state;
    /* As test_kept_tail, with 8192 bytes at 300 in both: the rest places
     * above both marks at 193, so each final mark is that peak, which the
     * last walk's checkpoints keep (also when that walk stopped at 193
     * itself and the rest is its own last walk's). */
    enum { N = 500 };
    static ggfit_gt a[N], b[N];
    int32_t map[64];
    size_t na = tail_graph(a, 10, 64, 0, 0, 0);
    size_t nb = tail_graph(b, 10, 4096, 0, 0, 0);
    node(&a[300], 8192, GGFIT_OP_CONT, 299, -1);
    node(&b[300], 8192, GGFIT_OP_CONT, 299, -1);
    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, na, 1, &one_buft);
    ggfit_galloc_tail tl = tail_of(10, 10, map);
    st = kept_vs_full_tail(k, a, na, b, 1, nb, 1, &one_buft, &tl);
    st = kept_vs_full_tail(k, b, nb, a, 1, na, 1, &one_buft, &tl);
    st = kept_vs_full_tail(k, a, na, b, 1, nb, 1, &one_buft, &tl);
    assert_int_equal(st.n_tail, 3);
    assert_int_equal(st.n_tail_skipped, 3 * (na - 193));
    ggfit__galloc_keep_free(k);
}

static void test_kept_tail_live_differs(void **state)
{
    (void)state;
    /* X (154, in the middle) is read again in the tail, at 260. It is an
     * output in a, not in b: b frees it there and the 4096 bytes at 280
     * take its place, a's need more. Until 260 the arenas and states are
     * the same, but X's contents differ: no stop while it lives. */
    enum { N = 500 };
    static ggfit_gt a[N], b[N];
    int32_t map[64];
    size_t na = tail_graph(a, 10, 64, 4096, 100, 0);
    size_t nb = tail_graph(b, 10, 64, 4096, 100, 0);
    a[154].flags |= GGFIT_TF_OUTPUT;
    node(&a[280], 4096, GGFIT_OP_CONT, 279, -1);
    node(&b[280], 4096, GGFIT_OP_CONT, 279, -1);
    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, na, 1, &one_buft);
    ggfit_galloc_tail tl = tail_of(10, 10, map);
    uint64_t sa, sb;
    char *err = NULL;
    assert_int_equal(ggfit__galloc_reserve_trusted(a, 1, na - 1, 1, &one_buft, &sa, NULL, &err), 0);
    assert_int_equal(ggfit__galloc_reserve_trusted(b, 1, nb - 1, 1, &one_buft, &sb, NULL, &err), 0);
    assert_true(sa > sb);   /* the pair tests something */
    st = kept_vs_full_tail(k, a, na, b, 1, nb, 1, &one_buft, &tl);
    assert_int_equal(st.n_resumed, 1);
    st = kept_vs_full_tail(k, b, nb, a, 1, na, 1, &one_buft, &tl);
    assert_int_equal(st.n_resumed, 2);
    ggfit__galloc_keep_free(k);
}

static void test_kept_tail_middle(void **state)
{
    (void)state;
    /* X (154) is in the middle and lives to 260, with the same contents in
     * a and b, which differ at 152 (as in test_kept_tail). The keep holds
     * nothing of the last graph's middle to compare X's contents with, so
     * the walk on b meets a's only once X is gone (321). */
    enum { N = 500 };
    static ggfit_gt a[N], b[N];
    int32_t map[64];
    size_t na = tail_graph(a, 10, 64, 4096, 100, 0);
    size_t nb = tail_graph(b, 10, 4096, 4096, 100, 0);
    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, na, 1, &one_buft);
    ggfit_galloc_tail tl = tail_of(10, 10, map);
    st = kept_vs_full_tail(k, a, na, b, 1, nb, 1, &one_buft, &tl);
    assert_int_equal(st.n_tail, 1);
    assert_int_equal(st.n_tail_skipped, nb - 321);
    ggfit__galloc_keep_free(k);
}

static void test_kept_tail_state_differs(void **state)
{
    (void)state;
    /* X and Y (4096 bytes each, read again at 260 and 300) are placed in
     * the middle in one order in a and in the other in b: the free lists
     * agree, but X is at 128 in a and at 4224 in b, so freeing it at 260
     * leaves a hole in a and not in b, and 4160 bytes at 280 raise a's
     * mark only: no stop while they live. */
    enum { N = 500 };
    static ggfit_gt a[N], b[N];
    int32_t map[64];
    size_t na = tail_graph(a, 10, 64, 0, 0, 0);
    size_t nb = na;
    node(&a[153], 4096, GGFIT_OP_MUL_MAT, 152, 0);   /* X */
    node(&a[154], 4096, GGFIT_OP_MUL_MAT, 153, 0);   /* Y */
    node(&a[260], 64, GGFIT_OP_CONCAT, 259, 153);
    node(&a[280], 4160, GGFIT_OP_CONT, 279, -1);
    node(&a[300], 64, GGFIT_OP_CONCAT, 299, 154);
    memcpy(b, a, sizeof a);
    node(&b[152], 4096, GGFIT_OP_CONT, 151, -1);    /* the graphs differ from 152 */
    node(&b[260], 64, GGFIT_OP_CONCAT, 259, 154);    /* X is 154 in b */
    node(&b[300], 64, GGFIT_OP_CONCAT, 299, 153);
    ggfit_galloc_tail tl = tail_of(10, 10, map);
    map[3] = 154;
    map[4] = 153;
    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, na, 1, &one_buft);
    st = kept_vs_full_tail(k, a, na, b, 1, nb, 1, &one_buft, &tl);
    assert_int_equal(st.n_resumed, 1);
    assert_true(st.n_tail_skipped <= nb - 321);
    ggfit__galloc_keep_free(k);
}

static void test_kept_tail_chunks(void **state)
{
    (void)state;
    /* Chunks of 1024 bytes: node 5 (900 bytes, read by the last node)
     * fills most of the first, the chain runs in a second. 152 is 256
     * bytes in a, 512 in b: the free lists agree after it, the marks do
     * not, and with two chunks the marks choose where 300 bytes at 260
     * go: no stop. */
    enum { N = 500 };
    static ggfit_gt a[N], b[N];
    int32_t map[64];
    const ggfit_galloc_buft bnd = { 32, 1024, -1 };
    size_t na = tail_graph(a, 10, 256, 0, 0, 900);
    size_t nb = tail_graph(b, 10, 512, 0, 0, 900);
    node(&a[260], 300, GGFIT_OP_CONT, 259, -1);
    node(&b[260], 300, GGFIT_OP_CONT, 259, -1);
    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, na, 1, &bnd);
    ggfit_galloc_tail tl = tail_of(10, 10, map);
    st = kept_vs_full_tail(k, a, na, b, 1, nb, 1, &bnd, &tl);
    assert_int_equal(st.n_resumed, 1);
    st = kept_vs_full_tail(k, b, nb, a, 1, na, 1, &bnd, &tl);
    assert_int_equal(st.n_resumed, 2);
    assert_int_equal(st.n_tail, 0);
    ggfit__galloc_keep_free(k);
}

static void test_kept_random(void **state)
{
    (void)state;
    /* Sequences of graphs, each the last one with a new suffix from a
     * random position (with new readers of old tensors, new inputs and
     * views), on one keep; every call checked against a full replay. */
    enum { MAX = 1400 };
    static ggfit_gt g[2][MAX];
    uint64_t s = 12345;
    uint64_t resumed = 0, calls = 0, why[5] = { 0 };
    for (int seq = 0; seq < 40; seq++) {
        int n_backends = 1 + (int)(rnd(&s) % 3);
        ggfit_galloc_buft bufts[3];
        for (int b = 0; b < n_backends; b++)
            bufts[b] = (ggfit_galloc_buft){ 32u << (rnd(&s) % 3), UINT64_MAX, -1 };
        if (n_backends == 3 && seq % 2)
            bufts[2] = (ggfit_galloc_buft){ bufts[0].alignment, UINT64_MAX, 0 };
        if (seq % 4 == 1)
            bufts[0].max_size = 20000;   /* bounded chunks: rule 7 reads the marks */
        size_t n_leafs = 3, n = 800 + rnd(&s) % 400;
        ggfit_gt *cur = g[0], *prev = g[1];
        for (size_t i = 0; i < n_leafs; i++) {
            blank(&cur[i], 1024);
            cur[i].allocated = i != 2;
            cur[i].backend = 0;
        }
        random_nodes(cur, n_leafs, n_leafs, n, n_backends, &s);
        ggfit_galloc_keep *k = ggfit__galloc_keep_new();
        assert_non_null(k);
        ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, cur, n_leafs, n, n_backends, bufts);
        for (int step = 0; step < 12; step++) {
            size_t n_prev = n;
            memcpy(prev, cur, n * sizeof *cur);
            size_t from = n_leafs + 1 + rnd(&s) % (n - n_leafs - 1);
            if (step % 3 == 2) {
                /* A new suffix of another length. */
                n = from + rnd(&s) % (MAX - from);
                if (n < from + 2)
                    n = from + 2;
                random_nodes(cur, n_leafs, from, n, n_backends, &s);
            } else {
                /* A window of new nodes, the rest as it was (a fit's step
                 * that moves a layer): views after it keep their roots. */
                size_t to = from + 1 + rnd(&s) % 30;
                to = to < n ? to : n;
                random_nodes(cur, n_leafs, from, to, n_backends, &s);
                for (size_t i = to; i < n; i++)
                    if (cur[i].view_src >= 0 && cur[cur[i].view_src].view_src >= 0)
                        cur[i].view_src = cur[cur[i].view_src].view_src;
            }
            st = kept_vs_full(k, prev, n_prev, cur, n_leafs, n, n_backends, bufts);
        }
        resumed += st.n_resumed;
        calls += st.n_calls;
        for (int r = 0; r < 5; r++)
            why[r] += st.n_full[r];
        ggfit__galloc_keep_free(k);
    }
    printf("galloc kept: %llu of %llu random calls resumed (full: %llu new, %llu prepass,"
           " %llu early, %llu order)\n", (unsigned long long)resumed, (unsigned long long)calls,
           (unsigned long long)why[0], (unsigned long long)why[3], (unsigned long long)why[4],
           (unsigned long long)why[2]);
    assert_true(resumed > calls / 4);
}

static void test_kept_failures(void **state)
{
    (void)state;
    /* Out of memory on a kept call empties the keep; the next call walks in
     * full and is right. */
    enum { N = 200 };
    ggfit_gt a[N];
    blank(&a[0], 64);
    a[0].allocated = true;
    chain(a, 1, N);
    ggfit_galloc_keep *k = ggfit__galloc_keep_new();
    assert_non_null(k);
    uint64_t s;
    char *err = NULL;
    ggfit_galloc_keep_stats st = kept_vs_full(k, NULL, 0, a, 1, N, 1, &one_buft);
    ggfit__fail_alloc_after(1);
    int rc = ggfit__galloc_reserve_kept(a, 1, N - 1, 1, &one_buft, &s, k, a, 7, N, NULL, &err);
    ggfit__fail_alloc_after(0);
    ggfit_free(err);
    (void)rc;   /* the keep's blocks may all be there already */
    st = kept_vs_full(k, a, N, a, 1, N, 1, &one_buft);
    st = kept_vs_full(k, a, N, a, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 1);
    /* A bad size is an error, and empties the keep too. */
    a[50].size = (uint64_t)1 << 63;
    assert_int_equal(ggfit__galloc_reserve_kept(a, 1, N - 1, 1, &one_buft, &s, k, &k, 7, N,
                                                NULL, &err),
                     GGFIT_ELIMIT);
    ggfit_free(err);
    a[50].size = 64;
    st = kept_vs_full(k, a, N, a, 1, N, 1, &one_buft);
    assert_int_equal(st.n_resumed, 1);
    /* An error between a dependency view and the view it reads (set up
     * before its position) leaves nothing behind: R (98, 4096 bytes) is
     * freed at 103, where the view it lives in is last read, and 104 takes
     * its memory. */
    node(&a[98], 4096, GGFIT_OP_CONT, 97, -1);
    node(&a[99], 4096, GGFIT_OP_NONE, 102, -1);
    a[99].view_src = 98;
    node(&a[100], 64, GGFIT_OP_CONT, 97, -1);
    node(&a[102], 4096, GGFIT_OP_VIEW, 98, -1);
    a[102].view_src = 98;
    node(&a[103], 64, GGFIT_OP_CONT, 102, -1);
    node(&a[104], 4096, GGFIT_OP_CONT, 103, -1);
    node(&a[105], 64, GGFIT_OP_CONT, 104, -1);
    a[101].size = (uint64_t)1 << 63;
    assert_int_equal(ggfit__galloc_reserve_kept(a, 1, N - 1, 1, &one_buft, &s, k, &k, 7, N,
                                                NULL, &err),
                     GGFIT_ELIMIT);
    ggfit_free(err);
    a[101].size = 64;
    st = kept_vs_full(k, NULL, 0, a, 1, N, 1, &one_buft);
    ggfit__galloc_keep_free(k);
    ggfit__galloc_keep_free(NULL);
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
        cmocka_unit_test(test_kept_new_consumer),
        cmocka_unit_test(test_kept_inputs_differ),
        cmocka_unit_test(test_kept_inplace_across),
        cmocka_unit_test(test_kept_tail),
        cmocka_unit_test(test_kept_tail_peak),
        cmocka_unit_test(test_kept_tail_live_differs),
        cmocka_unit_test(test_kept_tail_middle),
        cmocka_unit_test(test_kept_tail_state_differs),
        cmocka_unit_test(test_kept_tail_chunks),
        cmocka_unit_test(test_kept_random),
        cmocka_unit_test(test_kept_failures),
        cmocka_unit_test(test_llama_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
