/*
 * test_sched.c - the model of ggml's backend scheduler against llama.cpp's
 * own graphs.
 *
 * Each line of data/graphs/<model>.jsonl.gz (GGFIT_GRAPHS) is the graph
 * llama.cpp's scheduler handed to ggml-alloc: the graph llama.cpp built, with
 * a backend for every tensor and the copies the scheduler inserted (a node
 * "<backend>#<tensor>#<copy>" preceded by the view "<tensor> (view)"). The
 * test undoes the scheduler's work: drops the copies and their views, points
 * the copies' consumers back at the originals, forgets every backend, and
 * tells the scheduler only what llama.cpp tells it (which buffer each
 * allocated leaf is in, which "norm" nodes llama.cpp pins). The scheduler
 * must then give back the recorded graph: the same tensors in the same order
 * with the same backends, flags and sources, and, through the ggml-alloc
 * model, the same bytes per backend. Small hand-made graphs then pin the
 * rules the llama.cpp graphs do not reach (op offload, pipeline copies,
 * unassigned nodes) and the error paths.
 */
#include <ctype.h>

#include "ggml/galloc.h"
#include "base/base.h"
#include "ggml/sched.h"
#include "ggml/sched_keep.h"
#include "project/graph_cache.h"
#include "recorded.h"
#include "test_util.h"

/* A recorded graph, and what the scheduler did to it. */
typedef struct recorded {
    rec_graph g;
    bool *copy;           /* per tensor: a copy the scheduler inserted */
    bool *dep;            /* per tensor: the dependency view before a copy */
    bool full_offload;    /* llama.cpp's -ngl default (all layers): pins norms */
} recorded;

static bool starts_with_backend(const rec_graph *g, const char *name)
{
    for (int b = 0; b < g->n_backends; b++) {
        size_t l = strlen(g->backend[b].name);
        if (strncmp(name, g->backend[b].name, l) == 0 && name[l] == '#')
            return true;
    }
    return false;
}

/* The resolver cannot tell apart tensors that share a name and a shape
 * class but not a backend: llama.cpp's duplicated per-buffer-type weights
 * ("rope_freqs.weight" once in CPU memory, once on the device) and the
 * two KV masks of an iSWA model ("attn_inp_kq_mask", and their copies, which
 * share one copy name). The scheduler's graph rules them out: a node reads a
 * weight on its own backend, else through a copy (an RPC device and the CPU
 * cannot read each other's buffers), and a mask as wide as the KV it masks. */
static int32_t original(const recorded *r, int32_t c)
{
    /* A copy stands for the tensor its dependency view names. */
    return r->copy[c] ? r->g.t[c - 1].src[0] : c;
}

static bool fits(const recorded *r, size_t i, unsigned k, int32_t c)
{
    const ggfit_gt *t = &r->g.t[i];
    int32_t oi = original(r, c);
    const ggfit_gt *o = &r->g.t[oi];
    if ((size_t)oi < r->g.n_leafs && o->allocated && !r->copy[c] && !ggfit__op_is_view(t->op) &&
        o->backend != t->backend)
        return false;
    if (t->op == GGFIT_OP_FLASH_ATTN_EXT && k == 3 && t->src[1] >= 0)
        return o->ne[0] == r->g.t[t->src[1]].ne[1];
    if (t->op == GGFIT_OP_SOFT_MAX && k == 1 && t->src[0] >= 0)
        return o->ne[0] == r->g.t[t->src[0]].ne[0];
    return true;
}

static void refit(recorded *r, size_t i, unsigned k)
{
    const char *name = r->g.name[r->g.t[i].src[k]];
    int32_t best = -1, j;
    for (size_t m = 0; (j = rec_named(&r->g, name, m)) >= 0; m++)
        if ((size_t)j < i && !r->dep[j] && fits(r, i, k, j))
            best = j;
    if (best >= 0)
        r->g.t[i].src[k] = best;
}

/* Takes the next recorded graph; false after the last. */
static bool read_recorded(rec_reader *rd, recorded *r)
{
    if (!rec_next(rd, &r->g))
        return false;
    rec_graph *g = &r->g;
    r->full_offload = !rec_has_arg(g, "-ngl");   /* the cases use -ngl 10 < n_layer */
    r->copy = calloc(2 * (g->n ? g->n : 1), sizeof *r->copy);
    assert_non_null(r->copy);
    r->dep = r->copy + g->n;
    /* ggml never lists an op NONE tensor among the nodes; the scheduler's
     * copies and dependency views are the only ones. */
    for (size_t i = g->n_leafs; i < g->n; i++) {
        bool op_none = g->t[i].op == GGFIT_OP_NONE;
        r->copy[i] = op_none && starts_with_backend(g, g->name[i]);
        r->dep[i] = op_none && !r->copy[i];
    }
    for (size_t i = g->n_leafs; i < g->n; i++)
        if (!r->copy[i] && !r->dep[i])
            for (unsigned k = 0; k < g->t[i].n_src; k++)
                if (!fits(r, i, k, g->t[i].src[k]))
                    refit(r, i, k);
    /* Each dependency view is followed by its copy. */
    for (size_t i = g->n_leafs; i < g->n; i++)
        if (r->dep[i] && !(i + 1 < g->n && r->copy[i + 1] && g->t[i].n_src == 1))
            fail_msg("%s: node %zu (%s) has op NONE but is no copy", g->label, i, g->name[i]);
    return true;
}

static void free_recorded(recorded *r)
{
    free(r->copy);
    rec_graph_free(&r->g);
}

/* "norm-<il>" and "l_last-<il>": the names llama.cpp's graph callback pins to
 * the layer's device when the model is fully offloaded (or n_tokens < 32). */
static bool pinned_name(const char *name)
{
    const char *p = NULL;
    if (strncmp(name, "norm-", 5) == 0)
        p = name + 5;
    else if (strncmp(name, "l_last-", 7) == 0)
        p = name + 7;
    if (!p || !*p)
        return false;
    for (; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    return true;
}

/* The graph llama.cpp built, and what it tells the scheduler. */
typedef struct unsched {
    ggfit_st *t;
    size_t n_leafs, n_nodes;
    int32_t *in_of;       /* recorded index -> input index; -1 for inserted */
    ggfit_sched_backend backends[REC_MAX_BACKENDS];
    ggfit_sched_buft bufts[REC_MAX_BACKENDS];
    ggfit_sched_in in;
} unsched;

static void unschedule(const recorded *r, unsched *u)
{
    const rec_graph *g = &r->g;
    memset(u, 0, sizeof *u);
    u->t = calloc(g->n ? g->n : 1, sizeof *u->t);
    u->in_of = calloc(g->n ? g->n : 1, sizeof *u->in_of);
    assert_true(u->t && u->in_of);

    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        const ggfit_gt *gt = &g->t[i];
        bool leaf = i < g->n_leafs;
        u->in_of[i] = -1;
        if (r->copy[i] || r->dep[i])
            continue;
        ggfit_st *t = &u->t[k];
        u->in_of[i] = (int32_t)k++;
        t->name = g->name[i];   /* lives as long as g */
        t->op = gt->op;
        t->type = gt->type;
        memcpy(t->ne, gt->ne, sizeof t->ne);
        t->size = gt->size;
        t->flags = gt->flags;
        t->view_offs = gt->view_offs;
        t->buft = -1;
        t->backend = -1;
        /* Weights and KV cache are the allocated leafs; the buffer they are in
         * is the one of the backend they were put on. */
        if (leaf && gt->allocated) {
            t->buft = (int16_t)g->backend[gt->backend].buft_index;
            t->weights = strncmp(t->name, "cache_", 6) != 0;
        }
        if (!leaf && r->full_offload && pinned_name(t->name))
            t->backend = 0;   /* the layer's device: the only one */
    }
    u->n_leafs = g->n_leafs;
    u->n_nodes = k - g->n_leafs;

    /* Sources and view sources, with copies read as their originals. */
    for (size_t i = 0; i < g->n; i++) {
        const ggfit_gt *gt = &g->t[i];
        if (u->in_of[i] < 0)
            continue;
        ggfit_st *t = &u->t[u->in_of[i]];
        t->view_src = gt->view_src >= 0 ? u->in_of[gt->view_src] : -1;
        t->n_src = gt->n_src;
        for (size_t j = 0; j < GGFIT_GALLOC_MAX_SRC; j++)
            t->src[j] = -1;
        for (size_t j = 0; j < gt->n_src; j++) {
            t->src[j] = u->in_of[original(r, gt->src[j])];
            assert_true(t->src[j] >= 0);
        }
    }

    for (int b = 0; b < g->n_backends; b++) {
        const rec_backend *be = &g->backend[b];
        u->bufts[be->buft_index] = (ggfit_sched_buft){ .name = be->buft,
            .is_host = strncmp(be->buft, "CPU", 3) == 0, .alignment = be->alignment,
            .max_size = UINT64_MAX };
    }
    for (int b = 0; b < g->n_backends; b++) {
        const rec_backend *be = &g->backend[b];
        bool cpu = strcmp(be->name, "CPU") == 0;
        u->backends[b] = (ggfit_sched_backend){ .name = be->name, .buft = be->buft_index,
                                                .bufts = UINT32_C(1) << be->buft_index,
                                                .is_cpu = cpu, .offload = GGFIT_OFFLOAD_NEVER,
                                                .offload_min_batch = 32 };
        /* The CPU reads every host buffer; an RPC device only its own. */
        if (cpu)
            for (int q = 0; q < g->n_bufts; q++)
                if (u->bufts[q].is_host)
                    u->backends[b].bufts |= UINT32_C(1) << q;
    }
    u->in = (ggfit_sched_in){ .t = u->t, .n_leafs = u->n_leafs, .n_nodes = u->n_nodes,
                              .backends = u->backends, .n_backends = g->n_backends,
                              .bufts = u->bufts, .n_bufts = g->n_bufts, .n_copies = 1,
                              .cur_copy = 0, .op_offload = true };
}

/* The backends-only mode (llama.cpp's -fa auto probe reads no more) gives
 * every tensor the backend the whole split gives it, and no graph. */
static void same_backends_only(const unsched *u, const ggfit_sched_out *o)
{
    ggfit_sched_in in = u->in;
    in.backends_only = true;
    in.work = NULL;   /* o borrows the kept ones */
    ggfit_sched_out b;
    char *err = NULL;
    if (ggfit__sched_split(&in, &b, &err) != GGFIT_OK)
        fail_msg("backends only: %s", err);
    assert_int_equal(b.n_leafs + b.n_nodes, 0);
    size_t n = in.leafs ? in.n_tensors : in.n_leafs + in.n_nodes;
    for (size_t i = 0; i < n; i++)
        if (b.backend_of[i] != o->backend_of[i])
            fail_msg("backends only: tensor %zu on backend %d, the split puts it on %d", i,
                     (int)b.backend_of[i], (int)o->backend_of[i]);
    ggfit__sched_free(&b);
}

/* Where the scheduler's graph first differs from the recorded one, or NULL. */
static const char *first_difference(const rec_graph *g, const unsched *u, const ggfit_sched_out *o,
                                    char *buf, size_t cap)
{
    size_t n_out = o->n_leafs + o->n_nodes;
    if (o->n_leafs != g->n_leafs) {
        snprintf(buf, cap, "%zu leafs, recorded %zu", o->n_leafs, g->n_leafs);
        return buf;
    }
    for (size_t i = 0; i < n_out && i < g->n; i++) {
        const ggfit_gt *r = &g->t[i], *t = &o->t[i];
        char name[GGFIT_SCHED_NAME];
        ggfit__sched_name(&u->in, o, i, name);
        const char *what = NULL;
        char detail[160] = "";
        if (strcmp(name, g->name[i]) != 0)
            what = "name";
        else if (t->backend != r->backend)
            snprintf(detail, sizeof detail, "backend %d, recorded %d", t->backend, r->backend);
        else if (t->flags != r->flags)
            snprintf(detail, sizeof detail, "flags %u, recorded %u", t->flags, r->flags);
        else if (t->view_src != r->view_src)
            what = "view_src";
        else if (t->n_src != r->n_src || memcmp(t->src, r->src, sizeof t->src) != 0)
            what = "sources";
        else if (t->size != r->size || t->type != r->type || t->op != r->op ||
                 memcmp(t->ne, r->ne, sizeof t->ne) != 0)
            what = "size, type, op or shape";
        else if (t->view_src < 0 && !t->allocated != !r->allocated)
            what = "allocated";
        if (what || detail[0]) {
            snprintf(buf, cap, "tensor %zu: %s (recorded %s): %s", i, name, g->name[i],
                     what ? what : detail);
            return buf;
        }
    }
    if (n_out != g->n) {
        snprintf(buf, cap, "%zu tensors, recorded %zu", n_out, g->n);
        return buf;
    }
    return NULL;
}

static int n_cached, n_cached_moved;   /* graphs split on the cached path;
                                          those resumed after the move back */

/* The cached path (GGFIT_CACHE with resume): the list form split through
 * a keep, first with the second half's nodes pinned to the CPU (where it
 * runs them), then as recorded, which resumes that split, then as recorded
 * again, which resumes with nothing changed: each is the plain split's
 * output. */
static void same_cached(ggfit_sched_in in, ggfit_st *pool, size_t n, size_t n_leafs,
                        const ggfit_sched_out *o)
{
    char *err = NULL;
    ggfit_sched_prep prep;
    if (ggfit__sched_prepare(&in, &prep, &err) != GGFIT_OK)
        fail_msg("prep: %s", err);
    in.prep = &prep;
    ggfit_sched_keep *kp = ggfit__sched_keep_new();
    assert_non_null(kp);
    int cpu = in.n_backends - 1;
    int8_t *was = calloc(n + 1, 1);
    assert_non_null(was);
    for (size_t i = n_leafs + (n - n_leafs) / 2; i < n; i++) {
        ggfit_st *t = &pool[n - i];
        was[n - i] = t->backend;
        if (t->backend < 0 && t->buft < 0 && t->view_src < 0 && !(t->unsupported >> cpu & 1))
            t->backend = (int8_t)cpu;
    }
    uint64_t n_resumed = 0, n_redone = 0;
    for (int pass = 0; pass < 3; pass++) {
        ggfit_sched_out o2;
        int rc = ggfit__sched_split_cached(&in, kp, pool, 1, NULL, 0, &o2, &err);
        if (pass == 0) {
            ggfit_free(err);   /* (a pin ggml would refuse: the next starts afresh) */
            err = NULL;
            for (size_t i = n_leafs + (n - n_leafs) / 2; i < n; i++)
                pool[n - i].backend = was[n - i];
            continue;
        }
        if (rc != GGFIT_OK)
            fail_msg("cached: %s", err);
        assert_int_equal(o2.n_leafs, o->n_leafs);
        assert_int_equal(o2.n_nodes, o->n_nodes);
        assert_int_equal(o2.n_splits, o->n_splits);
        assert_memory_equal(o2.t, o->t, (o->n_leafs + o->n_nodes) * sizeof *o->t);
        for (size_t k = 0; k < o->n_leafs + o->n_nodes; k++)
            assert_int_equal(o2.origin[k], (int32_t)n - o->origin[k]);
        ggfit__sched_free(&o2);
    }
    ggfit__sched_keep_stats(kp, &n_resumed, &n_redone);
    n_cached_moved += n_resumed >= 1;   /* (a resume with nothing moved counts none) */
    free(was);
    n_cached++;
    ggfit__sched_keep_free(kp);
    ggfit__sched_prep_free(&prep);
}

static void same_with_lists(const unsched *u, const ggfit_sched_out *o)
{
    size_t n = u->n_leafs + u->n_nodes, m = n + 1;
    ggfit_st *pool = calloc(m, sizeof *pool);
    int32_t *lists = calloc(n ? n : 1, sizeof *lists);
    assert_true(pool && lists);
    /* Tensor i goes to pool[n - i]; pool[0] is in no list. */
    pool[0].name = "unused";
    pool[0].view_src = -1;
    for (size_t i = 0; i < n; i++) {
        ggfit_st *t = &pool[n - i];
        *t = u->t[i];
        if (t->view_src >= 0)
            t->view_src = (int32_t)(n - (size_t)t->view_src);
        for (unsigned j = 0; j < t->n_src; j++)
            if (t->src[j] >= 0)
                t->src[j] = (int32_t)(n - (size_t)t->src[j]);
        lists[i] = (int32_t)(n - i);
    }
    ggfit_sched_in in = u->in;
    in.t = pool;
    in.n_tensors = m;
    in.leafs = lists;
    in.nodes = lists + u->n_leafs;
    ggfit_sched_out o2;
    char *err = NULL;
    if (ggfit__sched_split(&in, &o2, &err) != GGFIT_OK)
        fail_msg("lists: %s", err);
    assert_int_equal(o2.n_leafs, o->n_leafs);
    assert_int_equal(o2.n_nodes, o->n_nodes);
    assert_int_equal(o2.n_splits, o->n_splits);
    assert_memory_equal(o2.t, o->t, (o->n_leafs + o->n_nodes) * sizeof *o->t);
    for (size_t k = 0; k < o->n_leafs + o->n_nodes; k++)
        assert_int_equal(o2.origin[k], (int32_t)n - o->origin[k]);
    assert_int_equal(o2.backend_of[0], -1);
    ggfit__sched_free(&o2);
    if (ggfit__cache_pieces(NULL) & GGFIT_CACHE_RESUME)
        same_cached(in, pool, n, u->n_leafs, o);
    free(lists);
    free(pool);
}

static void test_llama_graphs(void **state)
{
    (void)state;
    rec_reader *rd = rec_open();
    recorded r;
    ggfit__buf work[GGFIT_SCHED_WORK] = { { 0 } };
    int n_graphs = 0, n_same = 0, n_sizes = 0, n_copies_seen = 0;
    double slowest = 0;
    size_t slowest_n = 0;
    char slowest_at[sizeof r.g.label] = "";
    while (read_recorded(rd, &r)) {
        const rec_graph *g = &r.g;
        unsched u;
        unschedule(&r, &u);

        ggfit_sched_out o;
        char *err = NULL;
        double best = 1e30;
        int reps = getenv("GGFIT_SCHED_REPS") ? atoi(getenv("GGFIT_SCHED_REPS")) : 5;
        for (int rep = 0; rep < reps; rep++) {
            /* The first run allocates, the others reuse kept buffers
             * (as projections do); the output checked is the last. */
            ggfit_sched_in in = u.in;
            in.work = rep ? work : NULL;
            double t0 = rec_now_us();
            int rc = ggfit__sched_split(&in, &o, &err);
            double dt = rec_now_us() - t0;
            if (rc != GGFIT_OK)
                fail_msg("%s: %s", g->label, err ? err : "?");
            best = dt < best ? dt : best;
            if (rep < reps - 1)
                ggfit__sched_free(&o);
        }
        if (best > slowest) {
            slowest = best;
            slowest_n = u.n_leafs + u.n_nodes;
            snprintf(slowest_at, sizeof slowest_at, "%s", g->label);
        }
        for (size_t i = g->n_leafs; i < g->n; i++)
            n_copies_seen += r.copy[i];

        /* The same graph as a pool in another order with leaf and node
         * lists (the graph builder's form) gives the same output. */
        same_with_lists(&u, &o);
        same_backends_only(&u, &o);

        char buf[400];
        const char *diff = first_difference(g, &u, &o, buf, sizeof buf);
        if (diff)
            printf("sched: %s: %s\n", g->label, diff);
        n_same += !diff;

        uint64_t got[GGFIT_SCHED_MAX_BACKENDS];
        int rc = ggfit__galloc_reserve(o.t, o.n_leafs, o.n_nodes, o.n_backends, o.galloc, got, NULL, &err);
        if (rc != GGFIT_OK)
            fail_msg("%s: galloc: %s", g->label, err ? err : "?");
        bool sizes = true;
        for (int b = 0; b < g->n_backends; b++) {
            uint64_t want = g->backend[b].size;
            if (got[b] == want)
                continue;
            sizes = false;
            printf("sched: %s: %s: %llu bytes, llama.cpp %llu (%+lld)\n", g->label,
                   g->backend[b].name, (unsigned long long)got[b], (unsigned long long)want,
                   (long long)(got[b] - want));
        }
        n_sizes += sizes;
        if (getenv("DBG")) {
            for (size_t i = 0; i < g->n; i++) {
                const ggfit_gt *t = &o.t[i];
                printf("%zu %d %d %llu %u %d %d |", i, t->backend, t->op, (unsigned long long)t->size, t->flags, t->view_src, t->allocated);
                for (int j = 0; j < t->n_src; j++) printf(" %d", t->src[j]);
                printf("\n");
            }
            exit(0);
        }
        n_graphs++;

        ggfit__sched_free(&o);
        free(u.t);
        free(u.in_of);
        free_recorded(&r);
    }
    rec_close(rd);
    for (int k = 0; k < GGFIT_SCHED_WORK; k++)
        ggfit__buf_free(&work[k]);
    printf("sched: %d/%d graphs scheduled as llama.cpp did (order, backends, %d copies), "
           "%d/%d with the same bytes per backend; slowest %.0f us (%s, %zu tensors)\n",
           n_same, n_graphs, n_copies_seen, n_sizes, n_graphs, slowest, slowest_at, slowest_n);
    if (n_cached)
        printf("sched: the cached path: %d/%d graphs the same, %d resumed after half their "
               "nodes moved back from the CPU\n", n_cached, n_graphs, n_cached_moved);
    assert_true(n_graphs > 0);
    assert_true(!n_cached || (n_cached == n_graphs && n_cached_moved == n_graphs));
    assert_int_equal(n_same, n_graphs);
    assert_int_equal(n_sizes, n_graphs);
}

/* ------------------------------------------------------------------------
 * Hand-made graphs: backends 0 = GPU (its own buffer type 0), 1 = CPU (host
 * buffer type 1); all tensors 4 KiB f32 rows.
 * ---------------------------------------------------------------------- */

#define TINY_MAX 72

typedef struct tiny {
    ggfit_st t[TINY_MAX];
    char names[TINY_MAX][16];
    char list[1024];      /* listing()'s words */
    size_t n_leafs, n;
    ggfit_sched_buft bufts[3];
    ggfit_sched_backend be[3];
    ggfit_sched_in in;
} tiny;

static void tiny_init(tiny *g, ggfit_sched_offload gpu_offload)
{
    memset(g, 0, sizeof *g);
    g->bufts[0] = (ggfit_sched_buft){ "GPU", false, 256, UINT64_MAX };
    g->bufts[1] = (ggfit_sched_buft){ "CPU", true, 32, UINT64_MAX };
    g->be[0] = (ggfit_sched_backend){ "GPU0", 0, 1u, false, gpu_offload, 32 };
    g->be[1] = (ggfit_sched_backend){ "CPU", 1, 2u, true, GGFIT_OFFLOAD_NEVER, 32 };
    g->in = (ggfit_sched_in){ .t = g->t, .backends = g->be, .n_backends = 2, .bufts = g->bufts,
                              .n_bufts = 2, .n_copies = 1, .op_offload = true };
}

/* Adds a tensor; leafs must come first. */
static int32_t add(tiny *g, const char *name, int op, int64_t rows, int32_t s0, int32_t s1)
{
    assert_true(g->n < TINY_MAX);
    ggfit_st *t = &g->t[g->n];
    memset(t, 0, sizeof *t);
    snprintf(g->names[g->n], sizeof g->names[g->n], "%s", name);
    t->name = g->names[g->n];
    t->op = (uint8_t)op;
    t->type = GGFIT_TYPE_F32;
    t->ne[0] = 1024;
    t->ne[1] = rows;
    t->ne[2] = t->ne[3] = 1;
    t->size = 4096 * (uint64_t)rows;
    t->view_src = -1;
    t->buft = -1;
    t->backend = -1;
    t->flags = op == GGFIT_OP_NONE ? 0 : GGFIT_TF_COMPUTE;
    for (int j = 0; j < GGFIT_GALLOC_MAX_SRC; j++)
        t->src[j] = -1;
    t->src[0] = s0;
    t->src[1] = s1;
    t->n_src = (uint8_t)(s1 >= 0 ? 2 : s0 >= 0 ? 1 : 0);
    if (op == GGFIT_OP_NONE)
        g->n_leafs = g->n + 1;
    return (int32_t)g->n++;
}

/* Gives node i one more source. */
static void add_src(tiny *g, int32_t i, int32_t s)
{
    ggfit_st *t = &g->t[i];
    assert_true(t->n_src < GGFIT_GALLOC_MAX_SRC);
    t->src[t->n_src++] = s;
}

/* A graph input (ggml_set_input): a leaf the scheduler must place. */
static int32_t input(tiny *g, const char *name, int64_t rows)
{
    int32_t i = add(g, name, GGFIT_OP_NONE, rows, -1, -1);
    g->t[i].flags = GGFIT_TF_INPUT;
    return i;
}

static int32_t weight(tiny *g, const char *name, int buft)
{
    int32_t w = add(g, name, GGFIT_OP_NONE, 1024, -1, -1);
    g->t[w].buft = (int16_t)buft;
    g->t[w].weights = true;
    return w;
}

/* Hands the tensors added so far to g->in. */
static void tiny_close(tiny *g)
{
    g->in.n_leafs = g->n_leafs;
    g->in.n_nodes = g->n - g->n_leafs;
}

static void run(tiny *g, ggfit_sched_out *o)
{
    tiny_close(g);
    char *err = NULL;
    int rc = ggfit__sched_split(&g->in, o, &err);
    if (rc != GGFIT_OK)
        fail_msg("%s", err);
}

/* The output as "name@backend" words, for compact checks; in g->list, until
 * the next call. */
static const char *listing(tiny *g, const ggfit_sched_out *o)
{
    char *buf = g->list;
    size_t cap = sizeof g->list, len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < o->n_leafs + o->n_nodes && len < cap; i++) {
        char name[GGFIT_SCHED_NAME];
        ggfit__sched_name(&g->in, o, i, name);
        len += (size_t)snprintf(buf + len, cap - len, "%s%s%s@%d", i ? " " : "",
                                i == o->n_leafs ? "| " : "", name, o->t[i].backend);
    }
    return buf;
}

static void test_weights_and_copies(void **state)
{
    (void)state;
    tiny g;
    tiny_init(&g, GGFIT_OFFLOAD_NEVER);
    int32_t emb = weight(&g, "token_embd", 1);
    int32_t inp = input(&g, "inp_tokens", 1);
    int32_t w0 = weight(&g, "w0", 0);
    int32_t x = add(&g, "embd", GGFIT_OP_GET_ROWS, 512, emb, inp);
    int32_t n0 = add(&g, "norm", GGFIT_OP_RMS_NORM, 512, x, -1);
    int32_t m0 = add(&g, "mm", GGFIT_OP_MUL_MAT, 512, w0, n0);
    add(&g, "out", GGFIT_OP_ADD, 512, m0, x);
    ggfit_sched_out o;
    run(&g, &o);
    /* GET_ROWS follows the CPU weight; the norm is carried up from the GPU
     * matmul; "embd" is copied to the GPU once and read there twice. */
    assert_string_equal(listing(&g, &o),
                        "token_embd@1 inp_tokens@1 w0@0 | embd@1 embd (view)@1 GPU0#embd#0@0 "
                        "norm@0 mm@0 out@0");
    assert_int_equal(o.n_splits, 2);
    assert_int_equal(o.t[8].src[1], 5);   /* out reads the copy */
    assert_int_equal(o.t[4].src[0], 3);   /* the view holds embd */
    assert_int_equal(o.t[4].view_src, 3);
    assert_int_equal(o.galloc[0].alignment, 256);
    ggfit__sched_free(&o);
}

static void test_op_offload(void **state)
{
    (void)state;
    /* A CPU weight: a CUDA-like GPU takes the matmul when the batch is 32 or
     * more and op offload is on; GET_ROWS never. */
    for (int variant = 0; variant < 4; variant++) {
        tiny g;
        tiny_init(&g, variant == 3 ? GGFIT_OFFLOAD_MATMUL : GGFIT_OFFLOAD_BATCH);
        int32_t w = weight(&g, "w", 1);
        int32_t inp = input(&g, "inp", variant == 1 ? 8 : 512);
        int32_t mm = add(&g, "mm", GGFIT_OP_MUL_MAT, variant == 1 ? 8 : 512, w, inp);
        int32_t gr = add(&g, "gr", GGFIT_OP_GET_ROWS, 512, w, inp);
        if (variant == 2)
            g.in.op_offload = false;
        ggfit_sched_out o;
        run(&g, &o);
        assert_int_equal(o.backend_of[mm], variant == 0 || variant == 3 ? 0 : 1);
        assert_int_equal(o.backend_of[gr], 1);
        ggfit__sched_free(&o);
    }
}

static void test_pinned_and_views(void **state)
{
    (void)state;
    /* A pinned node keeps its backend; a view takes its source's backend; a
     * node fed only by a view of a CPU tensor still goes to the GPU when the
     * GPU expansion reaches it. */
    tiny g;
    tiny_init(&g, GGFIT_OFFLOAD_NEVER);
    int32_t w0 = weight(&g, "w0", 0);
    int32_t inp = input(&g, "inp", 512);
    int32_t a = add(&g, "a", GGFIT_OP_MUL_MAT, 512, w0, inp);
    int32_t n = add(&g, "norm-0", GGFIT_OP_RMS_NORM, 512, a, -1);
    g.t[n].backend = 1;
    int32_t v = add(&g, "v", GGFIT_OP_RESHAPE, 512, n, -1);
    g.t[v].view_src = n;
    int32_t c = add(&g, "c", GGFIT_OP_SCALE, 512, v, -1);
    ggfit_sched_out o;
    run(&g, &o);
    assert_int_equal(o.backend_of[a], 0);
    assert_int_equal(o.backend_of[n], 1);
    assert_int_equal(o.backend_of[v], 1);
    /* c is past the pinned CPU norm: the GPU-only sweeps stop there, so the
     * any-backend down sweep carries the CPU to it. */
    assert_int_equal(o.backend_of[c], 1);
    assert_int_equal(o.n_splits, 2);
    ggfit__sched_free(&o);
}

static void test_pipeline_copies(void **state)
{
    (void)state;
    tiny g;
    tiny_init(&g, GGFIT_OFFLOAD_NEVER);
    int32_t w0 = weight(&g, "w0", 0);
    int32_t inp = input(&g, "inp", 512);
    int32_t a = add(&g, "a", GGFIT_OP_MUL_MAT, 512, w0, inp);
    add(&g, "b", GGFIT_OP_SCALE, 512, a, -1);
    g.in.n_copies = 4;
    ggfit_sched_out o;
    run(&g, &o);
    /* The graph input gets 3 more copies on its backend, the split input 4 on
     * the GPU; all leafs, flagged input and output. */
    assert_string_equal(listing(&g, &o),
                        "inp@1 CPU#inp#1@1 CPU#inp#2@1 CPU#inp#3@1 GPU0#inp#0@0 GPU0#inp#1@0 "
                        "GPU0#inp#2@0 GPU0#inp#3@0 w0@0 | inp (view)@1 a@0 b@0");
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(o.t[i].flags, GGFIT_TF_INPUT | GGFIT_TF_OUTPUT);
    assert_int_equal(o.t[10].src[1], 4);   /* a reads copy 0 */
    uint64_t sizes[2];
    char *err = NULL;
    assert_int_equal(ggfit__galloc_reserve(o.t, o.n_leafs, o.n_nodes, 2, o.galloc, sizes, NULL, &err), GGFIT_OK);
    assert_int_equal(sizes[0], 4 * 2097152 + 2097152);   /* 4 copies + a (b in place) */
    assert_int_equal(sizes[1], 4 * 2097152);
    ggfit__sched_free(&o);
}

static void test_blas_upgrade(void **state)
{
    (void)state;
    /* BLAS shares the CPU's buffer type and sits before it: CPU nodes whose
     * sources it can read move to it; nodes it cannot run stay. */
    tiny g;
    tiny_init(&g, GGFIT_OFFLOAD_NEVER);
    g.be[2] = g.be[1];
    g.be[1] = (ggfit_sched_backend){ "BLAS", 1, 2u, false, GGFIT_OFFLOAD_NEVER, 32 };
    g.in.n_backends = 3;
    int32_t w = weight(&g, "w", 1);
    int32_t inp = input(&g, "inp", 512);
    int32_t a = add(&g, "a", GGFIT_OP_MUL_MAT, 512, w, inp);
    int32_t b = add(&g, "b", GGFIT_OP_SCALE, 512, a, -1);
    g.t[b].unsupported = 1u << 1;
    ggfit_sched_out o;
    run(&g, &o);
    assert_int_equal(o.backend_of[a], 1);
    assert_int_equal(o.backend_of[b], 2);
    /* Same buffer type: no copies, but two splits. */
    assert_int_equal(o.n_nodes, 2);
    assert_int_equal(o.n_splits, 2);
    assert_int_equal(o.galloc[2].same_as, 1);
    ggfit__sched_free(&o);
}

static void test_split_input_limit(void **state)
{
    (void)state;
    /* 31 GPU tensors read by CPU nodes one by one: the 31st input does not fit
     * a split of 30, so a new split starts on the same backend. */
    tiny g;
    tiny_init(&g, GGFIT_OFFLOAD_NEVER);
    int32_t w0 = weight(&g, "w0", 0);
    int32_t wc = weight(&g, "wc", 1);
    int32_t inp = input(&g, "inp", 1);
    int32_t gpu[31];
    char name[8];
    for (int k = 0; k < 31; k++) {
        snprintf(name, sizeof name, "g%d", k);
        gpu[k] = add(&g, name, GGFIT_OP_MUL_MAT, 1024, w0, inp);
    }
    int32_t prev = -1;
    for (int k = 0; k < 31; k++) {
        snprintf(name, sizeof name, "c%d", k);
        /* A CPU weight: the node runs on the CPU. */
        int32_t c = add(&g, name, GGFIT_OP_MUL_MAT, 1024, wc, gpu[k]);
        if (prev >= 0)
            add_src(&g, c, prev);
        prev = c;
    }
    ggfit_sched_out o;
    run(&g, &o);
    assert_int_equal(o.n_splits, 3);   /* GPU, CPU with 30 inputs, CPU with 1 */
    ggfit__sched_free(&o);
}

static void test_weight_split(void **state)
{
    (void)state;
    /* Two CPU-pinned matmuls on GPU weights: the second weight starts a new
     * split on the same backend, so the first copy can be freed before the
     * second is made. */
    tiny g;
    tiny_init(&g, GGFIT_OFFLOAD_NEVER);
    int32_t w1 = weight(&g, "w1", 0);
    int32_t w2 = weight(&g, "w2", 0);
    int32_t inp = input(&g, "inp", 512);
    int32_t a = add(&g, "a", GGFIT_OP_MUL_MAT, 512, w1, inp);
    int32_t b = add(&g, "b", GGFIT_OP_MUL_MAT, 512, w2, a);
    g.t[a].backend = g.t[b].backend = 1;
    ggfit_sched_out o;
    run(&g, &o);
    assert_string_equal(listing(&g, &o),
                        "w1@0 w2@0 inp@1 | w1 (view)@0 CPU#w1#0@1 a@1 w2 (view)@0 CPU#w2#0@1 b@1");
    assert_int_equal(o.n_splits, 2);
    ggfit__sched_free(&o);
}

static void test_rope_ignores_weight(void **state)
{
    (void)state;
    /* ROPE's frequency factors are a CPU weight here, too small to pull the
     * op to the CPU: ROPE goes where its neighbours are and the factors are
     * copied (llama.cpp duplicates rope_freqs per buffer type to avoid
     * that). A MUL with the same weight follows it to the CPU. */
    tiny g;
    tiny_init(&g, GGFIT_OFFLOAD_NEVER);
    int32_t w0 = weight(&g, "w0", 0);
    int32_t freqs = weight(&g, "rope_freqs", 1);
    int32_t inp = input(&g, "inp", 512);
    int32_t a = add(&g, "a", GGFIT_OP_MUL_MAT, 512, w0, inp);
    int32_t r = add(&g, "r", GGFIT_OP_ROPE, 512, a, inp);
    add_src(&g, r, freqs);
    int32_t m = add(&g, "m", GGFIT_OP_MUL, 512, r, freqs);
    ggfit_sched_out o;
    run(&g, &o);
    assert_int_equal(o.backend_of[r], 0);
    assert_int_equal(o.backend_of[m], 1);
    /* The weight rule of rule 5 starts a second GPU split at r. */
    assert_string_equal(listing(&g, &o),
                        "w0@0 rope_freqs@1 inp@1 | inp (view)@1 GPU0#inp#0@0 a@0 "
                        "rope_freqs (view)@1 GPU0#rope_freqs#0@0 r@0 "
                        "r (view)@0 CPU#r#0@1 m@1");
    assert_int_equal(o.n_splits, 3);
    ggfit__sched_free(&o);
}

/* Three backends: two devices with their own buffer types, then the CPU. */
static void three_backends(tiny *g)
{
    tiny_init(g, GGFIT_OFFLOAD_NEVER);
    g->bufts[2] = g->bufts[1];
    g->bufts[1] = (ggfit_sched_buft){ "GPU1", false, 256, UINT64_MAX };
    g->be[2] = (ggfit_sched_backend){ "CPU", 2, 4u, true, GGFIT_OFFLOAD_NEVER, 32 };
    g->be[1] = (ggfit_sched_backend){ "GPU1", 1, 2u, false, GGFIT_OFFLOAD_NEVER, 32 };
    g->in.n_backends = 3;
    g->in.n_bufts = 3;
}

static void test_sweep_order(void **state)
{
    (void)state;
    /* A free node between GPU0 and GPU1 work: the downward sweep runs first,
     * so it joins GPU0, the backend before it. */
    tiny g;
    three_backends(&g);
    int32_t w0 = weight(&g, "w0", 0);
    int32_t w1 = weight(&g, "w1", 1);
    int32_t inp = input(&g, "inp", 512);
    int32_t a = add(&g, "a", GGFIT_OP_MUL_MAT, 512, w0, inp);
    int32_t b = add(&g, "b", GGFIT_OP_SCALE, 512, a, -1);
    int32_t c = add(&g, "c", GGFIT_OP_MUL_MAT, 512, w1, b);
    ggfit_sched_out o;
    run(&g, &o);
    assert_int_equal(o.backend_of[a], 0);
    assert_int_equal(o.backend_of[b], 0);
    assert_int_equal(o.backend_of[c], 1);
    ggfit__sched_free(&o);
}

static void test_unassigned_best(void **state)
{
    (void)state;
    /* GPU0 cannot run b, so no sweep places it; of the backends that can,
     * the one that reads most of its sources in place wins, the first on a
     * tie. */
    for (int variant = 0; variant < 2; variant++) {
        tiny g;
        three_backends(&g);
        if (variant == 1)
            g.be[1].bufts |= 4u;   /* GPU1 can read host memory too */
        int32_t w0 = weight(&g, "w0", 0);
        int32_t inp = input(&g, "inp", 512);
        int32_t a = add(&g, "a", GGFIT_OP_MUL_MAT, 512, w0, inp);
        int32_t b = add(&g, "b", GGFIT_OP_ADD, 512, a, inp);
        g.t[b].unsupported = 1u;
        ggfit_sched_out o;
        run(&g, &o);
        assert_int_equal(o.backend_of[a], 0);
        assert_int_equal(o.backend_of[b], variant == 0 ? 2 : 1);
        ggfit__sched_free(&o);
    }
}

static void test_errors(void **state)
{
    (void)state;
    tiny g;
    tiny_init(&g, GGFIT_OFFLOAD_NEVER);
    int32_t w0 = weight(&g, "w0", 0);
    int32_t inp = input(&g, "inp", 512);
    int32_t a = add(&g, "a", GGFIT_OP_MUL_MAT, 512, w0, inp);
    tiny_close(&g);
    ggfit_sched_out o;
    char *err = NULL;

    /* A weight whose only backend cannot run the op: ggml aborts. */
    g.t[w0].unsupported = 1u;
    assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "w0"));
    ggfit_free(err);
    g.t[w0].unsupported = 0;

    /* A node no backend can run. */
    g.t[a].unsupported = 3u;
    assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_EINVAL);
    ggfit_free(err);
    g.t[a].unsupported = 0;

    g.be[1].is_cpu = false;
    assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "CPU"));
    ggfit_free(err);
    g.be[1].is_cpu = true;

    g.t[a].src[1] = 99;
    assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_EINVAL);
    ggfit_free(err);
    g.t[a].src[1] = inp;

    for (uint64_t k = 1; k <= 3; k++) {   /* scratch, copy records, output */
        ggfit__fail_alloc_after(k);
        assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_ENOMEM);
        ggfit__fail_alloc_after(0);
        ggfit_free(err);
        assert_null(o.t);
    }
    assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_OK);
    assert_null(err);
    ggfit__sched_free(&o);
    ggfit__sched_free(&o);   /* twice is harmless */
}

/* With a prep, only the targets are checked per call: one out of range
 * fails as without a prep; memory that came drops the prep (same result). */
static void test_prep_targets(void **state)
{
    (void)state;
    tiny g;
    tiny_init(&g, GGFIT_OFFLOAD_NEVER);
    int32_t w0 = weight(&g, "w0", 0);
    int32_t inp = input(&g, "inp", 512);
    int32_t a = add(&g, "a", GGFIT_OP_MUL_MAT, 512, w0, inp);
    int32_t b = add(&g, "b", GGFIT_OP_RMS_NORM, 512, a, -1);
    int32_t lists[4] = { w0, inp, a, b };
    tiny_close(&g);
    g.in.n_tensors = g.n;
    g.in.leafs = lists;
    g.in.nodes = lists + g.n_leafs;
    ggfit_sched_prep prep;
    char *err = NULL;
    assert_int_equal(ggfit__sched_prepare(&g.in, &prep, &err), GGFIT_OK);
    g.in.prep = &prep;
    ggfit_sched_out o;

    g.t[b].buft = 2;   /* two buffer types */
    assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "buffer type 2"));
    ggfit_free(err);
    g.t[b].buft = -1;
    g.t[a].backend = 2;   /* two backends */
    assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "backend 2"));
    ggfit_free(err);
    g.t[a].backend = -1;

    g.t[inp].buft = 1;   /* memory came: the prep no longer holds */
    assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_OK);
    char with_prep[sizeof g.list];
    memcpy(with_prep, listing(&g, &o), sizeof with_prep);
    ggfit__sched_free(&o);
    g.in.prep = NULL;
    assert_int_equal(ggfit__sched_split(&g.in, &o, &err), GGFIT_OK);
    assert_string_equal(with_prep, listing(&g, &o));
    ggfit__sched_free(&o);
    ggfit__sched_prep_free(&prep);
}

/* ---- A kept split resumed (ggfit_sched_keep) ------------------------------
 * A layered graph in list form, as the graph builder makes it, is split
 * again and again while its weights and caches move between two GPUs, the
 * CPU and a CPU_REPACK-like buffer type that comes and goes, and a node's
 * pin changes; each split resumed from the kept one must be byte for byte a
 * split from scratch. */
#define LG_LAYERS 24
#define LG_MAX (16 + 22 * LG_LAYERS)

typedef struct lgraph {
    ggfit_st t[LG_MAX];
    int32_t leafs[LG_MAX], nodes[LG_MAX], moving[LG_MAX];
    size_t n, n_leafs, n_nodes, n_moving;
    int32_t w[LG_LAYERS][4];   /* per layer: attention, up, gate and down weights */
    int32_t cache[LG_LAYERS], norm[LG_LAYERS], rope[LG_LAYERS], attn[LG_LAYERS];
    ggfit_sched_buft bufts[4];
    ggfit_sched_backend be[4];
    int n_be, cpu;        /* backends; the CPU's index */
} lgraph;

static int32_t lg_add(lgraph *g, int op, int64_t rows, int32_t s0, int32_t s1)
{
    assert_true(g->n < LG_MAX);
    int32_t i = (int32_t)g->n++;
    ggfit_st *t = &g->t[i];
    memset(t, 0, sizeof *t);
    t->op = (uint8_t)op;
    t->type = GGFIT_TYPE_F32;
    t->ne[0] = 1024;
    t->ne[1] = rows;
    t->ne[2] = t->ne[3] = 1;
    t->size = 4096 * (uint64_t)rows;
    t->view_src = -1;
    t->buft = -1;
    t->backend = -1;
    t->pin_il = t->il = -1;
    t->flags = op == GGFIT_OP_NONE ? 0 : GGFIT_TF_COMPUTE;
    for (int j = 0; j < GGFIT_GALLOC_MAX_SRC; j++)
        t->src[j] = -1;
    t->src[0] = s0;
    t->src[1] = s1;
    t->n_src = (uint8_t)(s1 >= 0 ? 2 : s0 >= 0 ? 1 : 0);
    if (op == GGFIT_OP_NONE)
        g->leafs[g->n_leafs++] = i;
    else
        g->nodes[g->n_nodes++] = i;
    return i;
}

static int32_t lg_weight(lgraph *g, int buft)
{
    int32_t w = lg_add(g, GGFIT_OP_NONE, 1024, -1, -1);
    g->t[w].buft = (int16_t)buft;
    g->t[w].weights = true;
    g->moving[g->n_moving++] = w;
    return w;
}

/* With blas, a BLAS-like backend before the CPU shares its buffer type and
 * runs only the matrix products. */
static void lg_build(lgraph *g, bool blas, ggfit_sched_offload offload)
{
    memset(g, 0, sizeof *g);
    g->bufts[0] = (ggfit_sched_buft){ "GPU0", false, 256, UINT64_MAX };
    g->bufts[1] = (ggfit_sched_buft){ "GPU1", false, 256, UINT64_MAX };
    g->bufts[2] = (ggfit_sched_buft){ "CPU", true, 32, UINT64_MAX };
    g->bufts[3] = (ggfit_sched_buft){ "CPU_REPACK", false, 32, UINT64_MAX };
    g->be[0] = (ggfit_sched_backend){ "GPU0", 0, 1u, false, offload, 32 };
    g->be[1] = (ggfit_sched_backend){ "GPU1", 1, 2u, false, GGFIT_OFFLOAD_NEVER, 32 };
    g->be[2] = (ggfit_sched_backend){ "CPU", 2, 4u, true, GGFIT_OFFLOAD_NEVER, 32 };
    g->n_be = 3;
    g->cpu = 2;
    if (blas) {
        g->be[3] = g->be[2];
        g->be[2] = (ggfit_sched_backend){ "BLAS", 2, 4u, false, GGFIT_OFFLOAD_NEVER, 32 };
        g->n_be = 4;
        g->cpu = 3;
    }
    int32_t inp = lg_add(g, GGFIT_OP_NONE, 512, -1, -1);
    g->t[inp].flags = GGFIT_TF_INPUT;
    int32_t pos = lg_add(g, GGFIT_OP_NONE, 512, -1, -1);
    g->t[pos].flags = GGFIT_TF_INPUT;
    int32_t emb = lg_weight(g, 2);
    int32_t x = lg_add(g, GGFIT_OP_GET_ROWS, 512, emb, inp);
    for (int il = 0; il < LG_LAYERS; il++) {
        for (int k = 0; k < 4; k++)
            g->w[il][k] = lg_weight(g, 0);
        int32_t c = g->cache[il] = lg_add(g, GGFIT_OP_NONE, 512 + 64 * (il % 2), -1, -1);
        g->t[c].buft = 0;
        g->moving[g->n_moving++] = c;
        int32_t n = g->norm[il] = lg_add(g, GGFIT_OP_RMS_NORM, 512, x, -1);
        g->moving[g->n_moving++] = n;   /* its pin may change */
        int32_t q = lg_add(g, GGFIT_OP_MUL_MAT, 512, g->w[il][0], n);
        int32_t r = lg_add(g, GGFIT_OP_ROPE, 512, q, pos);
        int32_t v = lg_add(g, GGFIT_OP_VIEW, 512, c, -1);
        g->t[v].view_src = c;
        int32_t cp = lg_add(g, GGFIT_OP_CPY, 512, r, v);
        int32_t kv = lg_add(g, GGFIT_OP_VIEW, 512 + 64 * (il % 2), c, -1);
        g->t[kv].view_src = c;
        /* A view of the last layer's rope, which rule 4 places there, read
         * by products BLAS may take; a product no GPU runs, which rule 3
         * places by what it reads. */
        int32_t rv = -1;
        if (il >= 1) {
            rv = lg_add(g, GGFIT_OP_RESHAPE, 512, g->rope[il - 1], -1);
            g->t[rv].view_src = g->rope[il - 1];
        }
        int32_t a = lg_add(g, GGFIT_OP_MUL_MAT, 512, kv, r);
        g->t[a].src[g->t[a].n_src++] = cp;   /* after the cache write */
        if (rv >= 0)
            g->t[a].src[g->t[a].n_src++] = rv;
        g->attn[il] = a;
        g->moving[g->n_moving++] = a;   /* it may be pinned to the CPU */
        int32_t s = lg_add(g, GGFIT_OP_SOFT_MAX, 512, a, -1);
        int32_t u = lg_add(g, GGFIT_OP_MUL_MAT, 512, g->w[il][1], s);
        int32_t gt = lg_add(g, GGFIT_OP_MUL_MAT, 512, g->w[il][2], s);
        if (rv >= 0)
            g->t[u].src[g->t[u].n_src++] = rv;
        int32_t m = lg_add(g, GGFIT_OP_MUL, 512, u, gt);
        if (il % 3 == 1) {
            g->t[m].unsupported = 1u;   /* GPU1 or the CPU, by what it reads */
            g->t[m].src[g->t[m].n_src++] = g->rope[il - 1];
        }
        g->rope[il] = r;
        int32_t d = lg_add(g, GGFIT_OP_MUL_MAT, 512, g->w[il][3], m);
        x = lg_add(g, GGFIT_OP_ADD, 512, d, x);
    }
    int32_t out = lg_weight(g, 0);
    int32_t on = lg_add(g, GGFIT_OP_RMS_NORM, 512, x, -1);
    lg_add(g, GGFIT_OP_MUL_MAT, 512, out, on);
    for (size_t k = 0; blas && k < g->n_nodes; k++)
        if (g->t[g->nodes[k]].op != GGFIT_OP_MUL_MAT)
            g->t[g->nodes[k]].unsupported |= 1u << 2;
}

static ggfit_sched_in lg_in(lgraph *g, const ggfit_sched_prep *prep, int n_bufts, bool for_galloc)
{
    return (ggfit_sched_in){ .t = g->t, .n_tensors = g->n, .leafs = g->leafs, .nodes = g->nodes,
                             .n_leafs = g->n_leafs, .n_nodes = g->n_nodes, .backends = g->be,
                             .n_backends = g->n_be, .bufts = g->bufts, .n_bufts = n_bufts,
                             .n_copies = 1, .op_offload = true, .prep = prep,
                             .for_galloc = for_galloc };
}

static void test_keep_resumes(void **state)
{
    (void)state;
    static lgraph g;
    uint64_t total_resumed = 0;
    /* for_galloc or not; a GPU that takes the CPU's matrix products or
     * not; a BLAS-like backend or not. */
    for (int variant = 0; variant < 6; variant++) {
        lg_build(&g, variant >= 4, variant / 2 == 0 ? GGFIT_OFFLOAD_BATCH : GGFIT_OFFLOAD_NEVER);
        bool for_galloc = variant % 2 == 0;
        ggfit_sched_prep prep;
        ggfit_sched_in pin = lg_in(&g, NULL, 3, for_galloc);
        char *err = NULL;
        assert_int_equal(ggfit__sched_prepare(&pin, &prep, &err), GGFIT_OK);
        ggfit_sched_keep *kp = ggfit__sched_keep_new();
        assert_non_null(kp);
        int n_bufts = 3;
        uint32_t rng = 12345u + (uint32_t)variant;
        for (int step = 0; step < 300; step++) {
            rng = rng * 1103515245u + 12345u;
            uint32_t r = rng >> 8;
            int kind = (int)(r % 8);
            if (kind <= 2) {
                /* Layers [a, b) move to a device or the CPU. */
                int a = (int)((r >> 3) % LG_LAYERS), b = a + 1 + (int)((r >> 8) % 6);
                int buft = (int)((r >> 12) % 3);
                for (int il = a; il < b && il < LG_LAYERS; il++) {
                    for (int k = 0; k < 4; k++)
                        g.t[g.w[il][k]].buft = (int16_t)buft;
                    g.t[g.cache[il]].buft = (int16_t)buft;
                }
            } else if (kind <= 5) {
                /* One weight to the CPU, to CPU_REPACK or back. */
                int il = (int)((r >> 3) % LG_LAYERS), k = 1 + (int)((r >> 8) % 3);
                int choice = (int)((r >> 12) % 3);
                g.t[g.w[il][k]].buft = (int16_t)(choice == 0 ? 2 : choice == 1 && n_bufts == 4 ? 3 : 0);
            } else if (kind == 6) {
                /* CPU_REPACK comes or goes (going, its weights go to the CPU). */
                if (n_bufts == 4) {
                    for (size_t q = 0; q < g.n_moving; q++)
                        if (g.t[g.moving[q]].buft == 3)
                            g.t[g.moving[q]].buft = 2;
                    n_bufts = 3;
                    g.be[g.cpu].bufts = 4u;
                } else {
                    n_bufts = 4;
                    g.be[g.cpu].bufts = 4u | 8u;
                }
            } else {
                /* A norm is pinned to a backend, or let go; a product is
                 * pinned to the CPU (BLAS may take it), or let go. */
                int il = (int)((r >> 3) % LG_LAYERS);
                g.t[g.norm[il]].backend = (int8_t)((int)((r >> 8) % (uint32_t)(g.n_be + 1)) - 1);
                il = (int)((r >> 12) % LG_LAYERS);
                g.t[g.attn[il]].backend = (int8_t)((r >> 17) % 2 ? g.cpu : -1);
            }
            ggfit_sched_in in = lg_in(&g, &prep, n_bufts, for_galloc);
            ggfit_sched_out o, ref;
            assert_int_equal(ggfit__sched_split_cached(&in, kp, &g, 1, g.moving, g.n_moving, &o,
                                                       &err), GGFIT_OK);
            assert_int_equal(ggfit__sched_split(&in, &ref, &err), GGFIT_OK);
            size_t n_out = o.n_leafs + o.n_nodes;
            assert_int_equal(o.n_leafs, ref.n_leafs);
            assert_int_equal(o.n_nodes, ref.n_nodes);
            assert_int_equal(o.n_splits, ref.n_splits);
            assert_memory_equal(o.t, ref.t, n_out * sizeof *o.t);
            assert_memory_equal(o.origin, ref.origin, n_out * sizeof *o.origin);
            assert_memory_equal(o.kind, ref.kind, n_out);
            assert_memory_equal(o.backend_of, ref.backend_of, g.n * sizeof *o.backend_of);
            ggfit__sched_free(&o);
            ggfit__sched_free(&ref);
        }
        uint64_t n_resumed, n_redone;
        ggfit__sched_keep_stats(kp, &n_resumed, &n_redone);
        /* Most splits resume, and redo well under the whole graph. */
        assert_true(n_resumed >= 150);
        assert_true(n_redone < n_resumed * g.n_nodes * 3 / 4);
        total_resumed += n_resumed;
        ggfit__sched_keep_free(kp);
        ggfit__sched_prep_free(&prep);
    }
    printf("sched: %llu splits resumed from a kept one, each as from scratch\n",
           (unsigned long long)total_resumed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights_and_copies),
        cmocka_unit_test(test_op_offload),
        cmocka_unit_test(test_pinned_and_views),
        cmocka_unit_test(test_pipeline_copies),
        cmocka_unit_test(test_blas_upgrade),
        cmocka_unit_test(test_split_input_limit),
        cmocka_unit_test(test_weight_split),
        cmocka_unit_test(test_rope_ignores_weight),
        cmocka_unit_test(test_sweep_order),
        cmocka_unit_test(test_unassigned_best),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_prep_targets),
        cmocka_unit_test(test_llama_graphs),
        cmocka_unit_test(test_keep_resumes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
