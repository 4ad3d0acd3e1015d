/*
 * galloc.c - a model of ggml's graph allocator; the rules are listed in
 * galloc.h. Written from the behaviour of ggml-alloc.c (ggml_gallocr_* and
 * ggml_dyn_tallocr_*), not from its code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml/galloc.h"
#include "base/base.h"

/* Largest tensor size accepted: keeps every offset + size below 2^63, the
 * size of the unbounded last chunk, so no sum can wrap. */
#define SIZE_LIMIT ((uint64_t)1 << 62)
/* The unbounded chunk (ggml: SIZE_MAX/2), and the clamp on max_size. */
#define CHUNK_UNBOUNDED (UINT64_MAX / 2)

/* ------------------------------------------------------------------------
 * Op facts
 * ---------------------------------------------------------------------- */

/* Ops whose kernels accept dst == src, so ggml-alloc may give a node its
 * source's memory (ggml_op_can_inplace), as in the llama.cpp the reference
 * data was made with. CLAMP is not among them (ggml_clamp returns a view of
 * its source anyway). */
static const bool op_inplace[GGFIT_OP_COUNT] = {
    [GGFIT_OP_FILL] = true,          [GGFIT_OP_SCALE] = true,
    [GGFIT_OP_DIAG_MASK_ZERO] = true,[GGFIT_OP_DIAG_MASK_INF] = true,
    [GGFIT_OP_ADD] = true,           [GGFIT_OP_ADD_ID] = true,
    [GGFIT_OP_ADD1] = true,          [GGFIT_OP_SUB] = true,
    [GGFIT_OP_MUL] = true,           [GGFIT_OP_DIV] = true,
    [GGFIT_OP_SQR] = true,           [GGFIT_OP_SQRT] = true,
    [GGFIT_OP_LOG] = true,           [GGFIT_OP_UNARY] = true,
    [GGFIT_OP_ROPE] = true,          [GGFIT_OP_ROPE_BACK] = true,
    [GGFIT_OP_SILU_BACK] = true,     [GGFIT_OP_RMS_NORM] = true,
    [GGFIT_OP_RMS_NORM_BACK] = true,
    [GGFIT_OP_SOFT_MAX] = true,      [GGFIT_OP_SOFT_MAX_BACK] = true,
};
_Static_assert(sizeof op_inplace / sizeof op_inplace[0] == GGFIT_OP_COUNT,
               "op_inplace must cover ggfit_op");

bool ggfit__op_can_inplace(int op)
{
    return op >= 0 && op < GGFIT_OP_COUNT && op_inplace[op];
}

bool ggfit__op_is_view(int op)
{
    return op == GGFIT_OP_RESHAPE || op == GGFIT_OP_VIEW ||
           op == GGFIT_OP_PERMUTE || op == GGFIT_OP_TRANSPOSE;
}

/* ------------------------------------------------------------------------
 * Address space of one buffer type: up to 16 chunks, each with a free list
 * sorted by offset. The last block of a chunk is its open end (it runs to the
 * chunk's limit), so the high-water mark grows only by carving that block.
 * ---------------------------------------------------------------------- */

typedef struct span {
    uint64_t offs, size;
} span;

typedef struct chunk {
    int n_free;
    uint64_t high;                 /* high-water mark: the chunk's size */
    span free[GGFIT_GALLOC_MAX_FREE_BLOCKS];
} chunk;

typedef struct arena {
    uint64_t align;
    uint64_t max_chunk;            /* max_size, clamped to CHUNK_UNBOUNDED */
    int n_chunks;
    chunk chunks[GGFIT_GALLOC_MAX_CHUNKS];
} arena;

static uint64_t round_up(uint64_t n, uint64_t align)
{
    return (n + align - 1) & ~(align - 1);
}

static void span_remove(chunk *c, int k)
{
    memmove(&c->free[k], &c->free[k + 1], (size_t)(c->n_free - k - 1) * sizeof c->free[0]);
    c->n_free--;
}

/* Places size bytes; stores the chunk and offset. Returns false only when all
 * 16 chunks are taken, which cannot happen: the 16th is unbounded. */
static bool arena_alloc(arena *a, uint64_t size, int *chunk_out, uint64_t *offs_out)
{
    size = round_up(size, a->align);
    int best_c = -1, best_k = -1;

    /* Best fit among the closed blocks (all but each chunk's last). Each
     * chunk restarts the comparison, so a fit in a later chunk wins over a
     * tighter one in an earlier chunk; within a chunk, ties go to the later
     * block. Both as ggml does. */
    for (int ci = 0; ci < a->n_chunks; ci++) {
        const chunk *c = &a->chunks[ci];
        uint64_t best = UINT64_MAX;
        for (int k = 0; k < c->n_free - 1; k++) {
            uint64_t s = c->free[k].size;
            if (s >= size && s <= best) {
                best_c = ci;
                best_k = k;
                best = s;
            }
        }
    }

    /* Else the open end of some chunk: prefer the one that must grow least;
     * among those that need not grow, the one leaving least unused. */
    if (best_k < 0) {
        int64_t best_reuse = INT64_MIN;
        for (int ci = 0; ci < a->n_chunks; ci++) {
            const chunk *c = &a->chunks[ci];
            if (c->n_free == 0)
                continue;
            const span *last = &c->free[c->n_free - 1];
            /* > 0: bytes left unused past the mark; < 0: bytes the mark
             * must grow. All terms are below 2^63, so this cannot wrap. */
            uint64_t end = last->offs + size;
            int64_t reuse = c->high >= end ? (int64_t)(c->high - end) : -(int64_t)(end - c->high);
            bool better_reuse = best_reuse < 0 && reuse > best_reuse;
            bool better_fit = reuse >= 0 && reuse < best_reuse;
            if (last->size >= size && (better_reuse || better_fit)) {
                best_c = ci;
                best_k = c->n_free - 1;
                best_reuse = reuse;
            }
        }
    }

    /* Else a new chunk, at least as large as the request. */
    if (best_k < 0) {
        if (a->n_chunks >= GGFIT_GALLOC_MAX_CHUNKS)
            return false;
        chunk *c = &a->chunks[a->n_chunks];
        c->n_free = 1;
        c->high = 0;
        c->free[0].offs = 0;
        c->free[0].size = size > a->max_chunk ? size : a->max_chunk;
        if (a->n_chunks == GGFIT_GALLOC_MAX_CHUNKS - 1)
            c->free[0].size = CHUNK_UNBOUNDED;
        best_c = a->n_chunks++;
        best_k = 0;
    }

    chunk *c = &a->chunks[best_c];
    span *b = &c->free[best_k];
    *chunk_out = best_c;
    *offs_out = b->offs;
    b->offs += size;
    b->size -= size;
    if (b->size == 0)
        span_remove(c, best_k);
    if (*offs_out + size > c->high)
        c->high = *offs_out + size;
    return true;
}

/* Returns size bytes at offs to chunk ci, merging with a free neighbour on
 * either side. Returns false when a new block would exceed the free list. */
static bool arena_free(arena *a, int ci, uint64_t offs, uint64_t size)
{
    size = round_up(size, a->align);
    chunk *c = &a->chunks[ci];

    /* The first block that touches the freed range absorbs it; ggml tests
     * "ends where the range starts" before "starts where it ends" for each
     * block in turn, and so do we, so ties resolve alike. */
    for (int k = 0; k < c->n_free; k++) {
        span *b = &c->free[k];
        if (b->offs + b->size == offs) {
            b->size += size;
            if (k + 1 < c->n_free && b->offs + b->size == c->free[k + 1].offs) {
                b->size += c->free[k + 1].size;
                span_remove(c, k + 1);
            }
            return true;
        }
        if (offs + size == b->offs) {
            b->offs = offs;
            b->size += size;
            if (k > 0 && c->free[k - 1].offs + c->free[k - 1].size == b->offs) {
                c->free[k - 1].size += b->size;
                span_remove(c, k);
            }
            return true;
        }
    }

    if (c->n_free >= GGFIT_GALLOC_MAX_FREE_BLOCKS)
        return false;
    int k = 0;
    while (k < c->n_free && c->free[k].offs < offs)
        k++;
    memmove(&c->free[k + 1], &c->free[k], (size_t)(c->n_free - k) * sizeof c->free[0]);
    c->free[k].offs = offs;
    c->free[k].size = size;
    c->n_free++;
    return true;
}

/* ------------------------------------------------------------------------
 * The graph walk
 * ---------------------------------------------------------------------- */

/* What ggml keeps per tensor in its hash table. */
typedef struct tstate {
    int32_t n_children;   /* consumers still to run */
    int32_t n_views;      /* views (other than dependency views) still alive */
    int32_t buffer;       /* backend whose memory holds it, once placed */
    int32_t chunk;
    uint64_t offs;
    bool own;             /* placed by us and not yet freed or handed on */
} tstate;

typedef struct replay {
    const ggfit_gt *t;
    size_t n;
    tstate *st;
    arena *arenas;        /* one per backend; shared ones use the first */
    int *arena_of;        /* backend -> index into arenas */
    int n_backends;
    bool trusted;         /* the scheduler's graph: in order, every tensor
                             listed (see walk) */
    int32_t *log;         /* when not NULL, each tensor placed is listed here
                             (rules 1-2 of a kept replay), up to cap_log */
    size_t n_log, cap_log;
    char **err;
} replay;

static ggfit_status fail_limit(replay *r, size_t i, const char *what)
{
    return ggfit__fail(r->err, GGFIT_ELIMIT, "galloc: tensor %zu: %s", i, what);
}

static ggfit_status free_tensor(replay *r, size_t i)
{
    /* Graph outputs must survive the graph. */
    if (r->t[i].flags & GGFIT_TF_OUTPUT)
        return GGFIT_OK;
    tstate *s = &r->st[i];
    if (!arena_free(&r->arenas[r->arena_of[s->buffer]], s->chunk, s->offs, r->t[i].size))
        return fail_limit(r, i, "more than 256 free blocks in a chunk");
    s->own = false;
    return GGFIT_OK;
}

static bool same_layout(const ggfit_gt *a, const ggfit_gt *b)
{
    /* ggml also compares strides; both tensors are galloc-owned, hence not
     * views, hence contiguous, so type and shape decide, but for a copy of a
     * strided view, which keeps the view's strides. */
    return a->type == b->type && memcmp(a->ne, b->ne, sizeof a->ne) == 0 && !a->strided &&
           !b->strided;
}

/* Tries to hand a source's memory to node i (rule 4). */
static ggfit_status try_inplace(replay *r, size_t i, bool *done)
{
    const ggfit_gt *t = r->t;
    for (unsigned j = 0; j < t[i].n_src; j++) {
        int32_t p = t[i].src[j];
        if (p < 0)
            continue;
        tstate *ps = &r->st[p];
        /* Not ours: weights, KV cache, and views, which we never own. That
         * last point makes ggml's branch for view parents unreachable. */
        if (!ps->own)
            continue;
        if ((t[p].flags & GGFIT_TF_OUTPUT) ||
            (t[p].view_src >= 0 && (t[t[p].view_src].flags & GGFIT_TF_OUTPUT)))
            continue;
        if (!same_layout(&t[i], &t[p]))
            continue;
        if (ps->n_children != 1 || ps->n_views != 0)
            continue;

        tstate *s = &r->st[i];
        s->buffer = ps->buffer;
        s->chunk = ps->chunk;
        s->offs = ps->offs;
        ps->own = false;   /* its memory is the node's now */

        /* Give back the tail the node does not need (only when sizes differ
         * between buffer types; same type and shape are otherwise equal). */
        arena *a = &r->arenas[r->arena_of[ps->buffer]];
        uint64_t psize = round_up(t[p].size, a->align);
        uint64_t nsize = round_up(t[i].size, a->align);
        if (psize < nsize)
            return ggfit__fail(r->err, GGFIT_EINVAL,
                               "galloc: tensor %zu is larger than source %d it reuses", i, p);
        if (psize > nsize && !arena_free(a, ps->chunk, ps->offs + nsize, psize - nsize))
            return fail_limit(r, i, "more than 256 free blocks in a chunk");
        *done = true;
        return GGFIT_OK;
    }
    return GGFIT_OK;
}

/* Rules 3-5: gives tensor i memory on backend `buffer` unless it has some
 * (place; most calls find it has, so that test is inlined). */
static ggfit_status place_new(replay *r, size_t i, int32_t buffer)
{
    const ggfit_gt *ti = &r->t[i];
    tstate *s = &r->st[i];
    if (buffer < 0 || buffer >= r->n_backends)
        return ggfit__fail(r->err, GGFIT_EINVAL,
                           "galloc: tensor %zu needs memory but has backend %d", i, (int)buffer);
    s->own = true;
    if (r->log) {
        if (r->n_log < r->cap_log)
            r->log[r->n_log] = (int32_t)i;
        r->n_log++;   /* past cap_log: the list is incomplete, and says so */
    }

    if (ggfit__op_can_inplace(ti->op)) {
        bool done = false;
        int rc = try_inplace(r, i, &done);
        if (rc != GGFIT_OK || done)
            return rc;
    }

    s->buffer = buffer;
    int ci;
    if (!arena_alloc(&r->arenas[r->arena_of[buffer]], ti->size, &ci, &s->offs))
        return fail_limit(r, i, "more than 16 chunks");   /* unreachable */
    s->chunk = ci;
    return GGFIT_OK;
}

static inline ggfit_status place(replay *r, size_t i, int32_t buffer)
{
    const ggfit_gt *ti = &r->t[i];
    if (ti->allocated || r->st[i].own || ti->view_src >= 0)
        return GGFIT_OK;
    return place_new(r, i, buffer);
}

/* Checks the graph and clears the per-tensor state. A trusted graph (the
 * scheduler's output, whose indices are in range by construction) has only
 * its sizes checked, which come from a file's shapes. */
static ggfit_status check_graph(replay *r, size_t n_leafs, const ggfit_galloc_buft *bufts,
                                bool trusted, int32_t *last)
{
    for (int b = 0; b < r->n_backends; b++) {
        uint64_t al = bufts[b].alignment;
        if (al == 0 || (al & (al - 1)) != 0 || al > SIZE_LIMIT)
            return ggfit__fail(r->err, GGFIT_EINVAL,
                               "galloc: backend %d: alignment %llu is not a power of two",
                               b, (unsigned long long)al);
        if (bufts[b].same_as >= b || bufts[b].same_as < -1)
            return ggfit__fail(r->err, GGFIT_EINVAL,
                               "galloc: backend %d: same_as %d is not an earlier backend",
                               b, (int)bufts[b].same_as);
    }
    /* An index x is in [-1, m) exactly when (uint32_t)x + 1 <= m (m, the
     * tensor or backend count, is below 2^31): one test per range. */
    uint32_t n = (uint32_t)r->n, nb = (uint32_t)r->n_backends;
    if (last) {
        /* A kept replay: also sets its two last-use lists (n each) to -1. */
        memset(r->st, 0, r->n * sizeof *r->st);
        for (size_t i = 0; i < r->n; i++) {
            last[i] = last[r->n + i] = -1;
            if (r->t[i].size > SIZE_LIMIT)
                return fail_limit(r, i, "size above 2^62 bytes");
        }
        return GGFIT_OK;
    }
    if (trusted) {
        memset(r->st, 0, r->n * sizeof *r->st);
        for (size_t i = 0; i < r->n; i++)
            if (r->t[i].size > SIZE_LIMIT)
                return fail_limit(r, i, "size above 2^62 bytes");
        return GGFIT_OK;
    }
    for (size_t i = 0; i < r->n; i++) {
        const ggfit_gt *ti = &r->t[i];
        r->st[i] = (tstate){ 0 };   /* here rather than a memset: one pass */
        if (ti->size > SIZE_LIMIT)
            return fail_limit(r, i, "size above 2^62 bytes");
        if ((uint32_t)ti->backend + 1u > nb)
            return ggfit__fail(r->err, GGFIT_EINVAL, "galloc: tensor %zu: backend %d out of range",
                               i, (int)ti->backend);
        if ((uint32_t)ti->view_src + 1u > n || (size_t)ti->view_src == i)
            return ggfit__fail(r->err, GGFIT_EINVAL, "galloc: tensor %zu: view_src %d out of range",
                               i, (int)ti->view_src);
        if (ti->n_src > GGFIT_GALLOC_MAX_SRC)
            return ggfit__fail(r->err, GGFIT_EINVAL, "galloc: tensor %zu: %u sources",
                               i, (unsigned)ti->n_src);
        if (i < n_leafs && ti->n_src != 0)
            return ggfit__fail(r->err, GGFIT_EINVAL, "galloc: leaf %zu has sources", i);
        for (unsigned j = 0; j < ti->n_src; j++)
            if ((uint32_t)ti->src[j] + 1u > n || (size_t)ti->src[j] == i)
                return ggfit__fail(r->err, GGFIT_EINVAL,
                                   "galloc: tensor %zu: source %u (%d) out of range",
                                   i, j, (int)ti->src[j]);
    }
    return GGFIT_OK;
}

/* Rule 6: node i has run; release what it was the last to need. */
static ggfit_status release_sources(replay *r, size_t i)
{
    const ggfit_gt *t = r->t;
    for (unsigned j = 0; j < t[i].n_src; j++) {
        int32_t p = t[i].src[j];
        if (p < 0)
            continue;
        tstate *ps = &r->st[p];
        /* The decrement's own result is tested: reloading both counts as
         * one word, as compilers like to, would wait on the store. */
        if (--ps->n_children != 0 || ps->n_views != 0)
            continue;
        int rc = GGFIT_OK;
        if (t[p].view_src >= 0) {
            /* A view holds its source; the source goes with its last view. */
            tstate *vs = &r->st[t[p].view_src];
            if (--vs->n_views == 0 && vs->n_children == 0 && vs->own)
                rc = free_tensor(r, (size_t)t[p].view_src);
        } else if (ps->own) {
            rc = free_tensor(r, (size_t)p);
        }
        if (rc != GGFIT_OK)
            return rc;
    }
    return GGFIT_OK;
}

static ggfit_status walk(replay *r, size_t n_leafs)
{
    const ggfit_gt *t = r->t;
    int rc;

    /* Rule 1: leafs, each on its own backend. */
    for (size_t i = 0; i < n_leafs; i++)
        if ((rc = place(r, i, t[i].backend)) != GGFIT_OK)
            return rc;

    /* Rule 2: count consumers and views; inputs go in now, below the rest. */
    for (size_t i = n_leafs; i < r->n; i++) {
        if (t[i].view_src >= 0 && t[i].op != GGFIT_OP_NONE)
            r->st[t[i].view_src].n_views++;
        if ((t[i].flags & GGFIT_TF_INPUT) && (rc = place(r, i, t[i].backend)) != GGFIT_OK)
            return rc;
        for (unsigned j = 0; j < t[i].n_src; j++) {
            int32_t p = t[i].src[j];
            if (p < 0)
                continue;
            r->st[p].n_children++;
            if ((t[p].flags & GGFIT_TF_INPUT) && (rc = place(r, (size_t)p, t[i].backend)) != GGFIT_OK)
                return rc;
        }
    }

    /* Rules 3-6, node by node. A node's sources get memory first if they
     * have none; in the scheduler's graph every source is a leaf or input,
     * placed above, or an earlier node, placed when it ran (and freed only
     * after its last use), so there it never happens. */
    for (size_t i = n_leafs; i < r->n; i++) {
        int32_t b = t[i].backend;
        for (unsigned j = 0; !r->trusted && j < t[i].n_src; j++)
            if (t[i].src[j] >= 0 && (rc = place(r, (size_t)t[i].src[j], b)) != GGFIT_OK)
                return rc;
        if ((rc = place(r, i, b)) != GGFIT_OK)
            return rc;
        if ((rc = release_sources(r, i)) != GGFIT_OK)
            return rc;
    }
    return GGFIT_OK;
}

static ggfit_status reserve(const ggfit_gt *t, size_t n_leafs, size_t n_nodes, int n_backends,
                            const ggfit_galloc_buft *bufts, uint64_t *size_out, ggfit__buf *work,
                            bool trusted, char **err)
{
    if (err)
        *err = NULL;
    if (!t || !bufts || !size_out)
        return ggfit__fail(err, GGFIT_EINVAL, "galloc: no graph, buffer types or output");
    if (n_backends <= 0 || n_backends > 1024)
        return ggfit__fail(err, GGFIT_EINVAL, "galloc: %d backends", n_backends);
    if (n_leafs > INT32_MAX || n_nodes > INT32_MAX - n_leafs)
        return ggfit__fail(err, GGFIT_ELIMIT, "galloc: more than 2^31 tensors");

    replay r = { .t = t, .n = n_leafs + n_nodes, .n_backends = n_backends, .trusted = trusted,
                 .err = err };

    /* One block for all scratch state: arenas (a chunk's free list is 4 KiB,
     * touched only when used), the backend map, the per-tensor state. */
    size_t n_arenas = 0;
    for (int b = 0; b < n_backends; b++)
        n_arenas += bufts[b].same_as < 0;
    size_t bytes_arenas = n_arenas * sizeof(arena);
    size_t bytes_map = ((size_t)n_backends * sizeof(int) + _Alignof(tstate) - 1) /
                       _Alignof(tstate) * _Alignof(tstate);
    if (r.n > (SIZE_MAX - bytes_arenas - bytes_map) / sizeof(tstate))
        return ggfit__fail(err, GGFIT_ELIMIT, "galloc: graph too large");
    size_t bytes = bytes_arenas + bytes_map + r.n * sizeof(tstate);
    char *mem = work ? ggfit__buf_get(work, bytes) : ggfit__malloc(bytes);
    if (!mem)
        return ggfit__fail(err, GGFIT_ENOMEM, "galloc: out of memory");
    _Static_assert(_Alignof(arena) >= _Alignof(int), "layout of the scratch block");
    r.arenas = (arena *)(void *)mem;
    r.arena_of = (int *)(void *)(mem + bytes_arenas);
    r.st = (tstate *)(void *)(mem + bytes_arenas + bytes_map);
    int rc = check_graph(&r, n_leafs, bufts, trusted, NULL);   /* also clears r.st */
    if (rc != GGFIT_OK) {
        if (!work)
            free(mem);
        return rc;
    }

    int next = 0;
    for (int b = 0; b < n_backends; b++) {
        if (bufts[b].same_as >= 0) {
            r.arena_of[b] = r.arena_of[bufts[b].same_as];
            continue;
        }
        arena *a = &r.arenas[next];
        a->align = bufts[b].alignment;
        a->max_chunk = bufts[b].max_size < CHUNK_UNBOUNDED ? bufts[b].max_size : CHUNK_UNBOUNDED;
        a->n_chunks = 0;
        r.arena_of[b] = next++;
    }

    rc = walk(&r, n_leafs);
    if (rc == GGFIT_OK) {
        for (int b = 0; b < n_backends; b++) {
            size_out[b] = 0;
            if (bufts[b].same_as >= 0)
                continue;   /* counted at the first backend of its type */
            const arena *a = &r.arenas[r.arena_of[b]];
            for (int c = 0; c < a->n_chunks; c++)
                size_out[b] += a->chunks[c].high;
        }
    }
    if (!work)
        free(mem);
    return rc;
}

ggfit_status ggfit__galloc_reserve(const ggfit_gt *t, size_t n_leafs, size_t n_nodes,
                                   int n_backends, const ggfit_galloc_buft *bufts,
                                   uint64_t *size_out, ggfit__buf *work, char **err)
{
    return reserve(t, n_leafs, n_nodes, n_backends, bufts, size_out, work, false, err);
}

ggfit_status ggfit__galloc_reserve_trusted(const ggfit_gt *t, size_t n_leafs, size_t n_nodes,
                                           int n_backends, const ggfit_galloc_buft *bufts,
                                           uint64_t *size_out, ggfit__buf *work, char **err)
{
    return reserve(t, n_leafs, n_nodes, n_backends, bufts, size_out, work, true, err);
}

/* ------------------------------------------------------------------------
 * Resuming a walk (ggfit__galloc_reserve_kept)
 *
 * A kept replay remembers its walk: the state after rules 1-2 (placements
 * and consumer counts), each tensor's last consumer, the final per-tensor
 * state, and a checkpoint every KEEP_EVERY nodes. The next call on a graph
 * whose first n_same entries are the same then finds the first position D
 * where its walk can differ, restores the last checkpoint at or before D,
 * and walks from there. Positions are indices into t (leafs first), so the
 * walk runs over [n_leafs, n).
 *
 * Why a restored state is the state a fresh walk would have there:
 *  - Rules 1-2 run in full every time (the counts need the whole graph).
 *    Their placements (leafs, then inputs in order of first use, rule 2)
 *    sit below everything and are in every checkpoint, so the list of
 *    tensors they placed, where each went, and the arenas after them must
 *    equal the last call's, or the walk starts over.
 *  - An event at node j (placing j, handing a source's memory to j,
 *    releasing j's sources, and through a source that is a view, its
 *    view_src) touches only j, j's sources and their view_srcs. The
 *    scheduler's graph lists those before j (checked, else no resume) but
 *    for a few sources of dependency views, which name a view op placed
 *    later in their split: those "forward" sources are listed, and a
 *    checkpoint holds the ones its position falls between. So a tensor at
 *    or after k that is not such a source is as rules 1-2 left it.
 *  - A tensor before k whose last event came before k (last_event < k) is
 *    as the last walk left it at its end; one whose last event is at or
 *    after k ("live", some 14-23 in a layer) is in the checkpoint.
 *  - Counts are kept as consumed (total - remaining), which the common
 *    prefix decides; the remaining counts are then this graph's totals
 *    less those.
 *  - Rule 4 needs a source's remaining consumers to be 1 (this node is its
 *    last) and rule 6 frees at 0, so while a tensor has a direct consumer
 *    still to come in both graphs, every decision on it is "no", whatever
 *    its totals. A tensor whose consumer or view totals differ (a consumer
 *    added after the prefix, say to a mask copy that lives for many layers)
 *    therefore bounds D by the earlier of its last direct consumers in the
 *    two graphs (by itself when it has none); views are tensors too, so a
 *    view whose consumers changed bounds D at its own last consumer, before
 *    its view_src's release.
 *  - Arenas are restored whole: chunks, free lists and high-water marks.
 *    With bounded chunks (max_size < UINT64_MAX) the choice of chunk reads
 *    the marks (rule 7), which a whole restore keeps exact; and the final
 *    marks, the sizes, are those of a full walk.
 *  - Arenas are per buffer type (same_as), and rule 4 hands a node its
 *    source's arena whatever the node's backend: restored tensors keep
 *    their buffer, and the arena is looked up from it.
 * ---------------------------------------------------------------------- */

/* Nodes between checkpoints: a resume walks up to this many nodes it could
 * have skipped; a checkpoint is some 100 words. */
#define KEEP_EVERY 32
/* Checkpoint words allowed per tensor of the graph: keeps the memory of a
 * keep linear in the graph's size (later checkpoints are then not taken). */
#define KEEP_WORDS_PER_TENSOR 64

/* A tensor rules 1-2 placed, and where it is after them. */
typedef struct kept_placed {
    int32_t e, buffer, chunk, own;
    uint64_t offs;
} kept_placed;

/* Why a call walked in full (the counters of ggfit_galloc_keep_stats). */
enum {
    KEEP_WHY_NEW,       /* no kept walk, or another owner or generation */
    KEEP_WHY_SHAPE,     /* leaf or backend counts, or buffer types, differ */
    KEEP_WHY_ORDER,     /* a source after its consumer: not resumable */
    KEEP_WHY_PREPASS,   /* rules 1-2 placed differently */
    KEEP_WHY_EARLY,     /* the first difference precedes the first checkpoint */
    KEEP_WHY_COUNT
};

_Static_assert(sizeof ((ggfit_galloc_keep_stats *)0)->n_full /
                   sizeof ((ggfit_galloc_keep_stats *)0)->n_full[0] == KEEP_WHY_COUNT,
               "n_full must cover the reasons");

struct ggfit_galloc_keep {
    bool valid;              /* the fields below describe the last call */
    bool ordered;            /* its graph listed view_srcs before the views'
                                consumers (and had few forward sources) */
    const void *owner;
    uint32_t gen;
    size_t n, n_leafs;
    int n_backends;
    ggfit__buf bufts;        /* ggfit_galloc_buft[n_backends] */
    ggfit__buf arenas;       /* the replay's arenas, then its backend map */
    ggfit__buf st;           /* tstate[n]: the last walk's final state */
    ggfit__buf pre;          /* tstate[n]: this call's state after rules 1-2
                                (scratch; a walk in full takes it as st) */
    int cur;                 /* which of the pairs below is the last call's */
    ggfit__buf tot[2];       /* int32_t[2n]: consumers and views per tensor */
    ggfit__buf last[2];      /* int32_t[2n]: last direct consumer, then last
                                event; -1: none (and always for tensors
                                with memory, which galloc never touches) */
    ggfit__buf log[2];       /* kept_placed: what rules 1-2 placed, in order */
    size_t n_log[2];
    ggfit__buf pa[2];        /* uint64_t: the arenas after rules 1-2 */
    size_t n_pa[2];
    ggfit__buf ck;           /* uint64_t: the checkpoints, one after another */
    ggfit__buf ck_end;       /* size_t: word where checkpoint j (1-based: at
                                n_leafs + j * KEEP_EVERY) ends, at [j - 1] */
    size_t n_ck, cap_ck_words;
    ggfit__buf live;         /* int32_t[n]: the live set being built */
    ggfit__buf fwd;          /* int32_t pairs: this call's sources that come
                                after their consumer (node, source) */
    ggfit_galloc_keep_stats stats;
};

ggfit_galloc_keep *ggfit__galloc_keep_new(void)
{
    return ggfit__calloc(1, sizeof(ggfit_galloc_keep));
}

static bool verify_on(void)
{
    /* A plain read per call: no state of our own, nothing to race on. */
    const char *v = getenv("GGFIT_GALLOC_VERIFY");
    return v && *v && strcmp(v, "0") != 0;
}

void ggfit__galloc_keep_free(ggfit_galloc_keep *k)
{
    if (!k)
        return;
    const char *path = getenv("GGFIT_GALLOC_STATS");
    if (path && *path && k->stats.n_calls) {
        FILE *f = fopen(path, "a");
        if (f) {
            const ggfit_galloc_keep_stats *s = &k->stats;
            fprintf(f, "galloc keep: %llu calls, %llu resumed, %llu of %llu nodes skipped;"
                    " full: new %llu, shape %llu, order %llu, prepass %llu, early %llu\n",
                    (unsigned long long)s->n_calls, (unsigned long long)s->n_resumed,
                    (unsigned long long)s->n_skipped, (unsigned long long)s->n_nodes,
                    (unsigned long long)s->n_full[KEEP_WHY_NEW],
                    (unsigned long long)s->n_full[KEEP_WHY_SHAPE],
                    (unsigned long long)s->n_full[KEEP_WHY_ORDER],
                    (unsigned long long)s->n_full[KEEP_WHY_PREPASS],
                    (unsigned long long)s->n_full[KEEP_WHY_EARLY]);
            fclose(f);
        }
    }
    ggfit__buf_free(&k->bufts);
    ggfit__buf_free(&k->arenas);
    ggfit__buf_free(&k->st);
    ggfit__buf_free(&k->pre);
    for (int i = 0; i < 2; i++) {
        ggfit__buf_free(&k->tot[i]);
        ggfit__buf_free(&k->last[i]);
        ggfit__buf_free(&k->log[i]);
        ggfit__buf_free(&k->pa[i]);
    }
    ggfit__buf_free(&k->ck);
    ggfit__buf_free(&k->ck_end);
    ggfit__buf_free(&k->live);
    ggfit__buf_free(&k->fwd);
    free(k);
}

void ggfit__galloc_keep_get_stats(const ggfit_galloc_keep *k, ggfit_galloc_keep_stats *out)
{
    *out = k->stats;
}

/* Room for need bytes in b, keeping its first used bytes (ggfit__buf_get
 * does not keep them). */
static void *buf_grow(ggfit__buf *b, size_t used, size_t need)
{
    if (need <= b->cap && b->p)
        return b->p;
    size_t cap = need < SIZE_MAX / 2 && need < 2 * b->cap ? 2 * b->cap : need;
    char *p = ggfit__malloc(cap);
    if (!p)
        return NULL;
    if (used)
        memcpy(p, b->p, used);
    free(b->p);
    b->p = p;
    b->cap = cap;
    return p;
}

/* Arenas as words: per arena its chunk count, then per chunk its mark, its
 * free-block count and the blocks. */
static size_t arenas_words(const arena *as, size_t n_arenas)
{
    size_t w = n_arenas;
    for (size_t a = 0; a < n_arenas; a++)
        for (int c = 0; c < as[a].n_chunks; c++)
            w += 2 + 2 * (size_t)as[a].chunks[c].n_free;
    return w;
}

static uint64_t *arenas_put(uint64_t *w, const arena *as, size_t n_arenas)
{
    for (size_t a = 0; a < n_arenas; a++) {
        *w++ = (uint64_t)as[a].n_chunks;
        for (int c = 0; c < as[a].n_chunks; c++) {
            const chunk *ch = &as[a].chunks[c];
            *w++ = ch->high;
            *w++ = (uint64_t)ch->n_free;
            for (int k = 0; k < ch->n_free; k++) {
                *w++ = ch->free[k].offs;
                *w++ = ch->free[k].size;
            }
        }
    }
    return w;
}

static const uint64_t *arenas_get(const uint64_t *w, arena *as, size_t n_arenas)
{
    for (size_t a = 0; a < n_arenas; a++) {
        as[a].n_chunks = (int)*w++;
        for (int c = 0; c < as[a].n_chunks; c++) {
            chunk *ch = &as[a].chunks[c];
            ch->high = *w++;
            ch->n_free = (int)*w++;
            for (int k = 0; k < ch->n_free; k++) {
                ch->free[k].offs = *w++;
                ch->free[k].size = *w++;
            }
        }
    }
    return w;
}

/* A kept replay under way. */
typedef struct kept_walk {
    replay *r;
    ggfit_galloc_keep *k;
    size_t n_arenas;
    const int32_t *tot;      /* this call's consumers and views per tensor */
    const int32_t *last_ev;  /* this call's last event per tensor */
    int32_t *live;           /* the live set at position q */
    size_t n_live, q;
    const int32_t *fwd;      /* sources after their consumer (node, source) */
    size_t n_fwd;
    bool ckpt;               /* still taking checkpoints */
} kept_walk;

/* Rules 1-2 as walk applies them, into r->st, listing what they place and
 * noting each tensor's last direct consumer and last event, and in fwd
 * (pairs: node, source; up to cap_fwd) the sources that come after their
 * consumer. *ordered is false when a source's view_src does, or fwd is
 * full. */
static ggfit_status prepass_kept(replay *r, size_t n_leafs, int32_t *last_use, int32_t *last_ev,
                                 int32_t *fwd, size_t cap_fwd, size_t *n_fwd, bool *ordered)
{
    const ggfit_gt *t = r->t;
    int rc;
    bool ok = true;
    for (size_t i = 0; i < n_leafs; i++)
        if ((rc = place(r, i, t[i].backend)) != GGFIT_OK)
            return rc;
    for (size_t i = n_leafs; i < r->n; i++) {
        if (t[i].view_src >= 0 && t[i].op != GGFIT_OP_NONE)
            r->st[t[i].view_src].n_views++;
        if ((t[i].flags & GGFIT_TF_INPUT) && (rc = place(r, i, t[i].backend)) != GGFIT_OK)
            return rc;
        for (unsigned j = 0; j < t[i].n_src; j++) {
            int32_t p = t[i].src[j];
            if (p < 0)
                continue;
            r->st[p].n_children++;
            if ((t[p].flags & GGFIT_TF_INPUT) && (rc = place(r, (size_t)p, t[i].backend)) != GGFIT_OK)
                return rc;
            /* A dependency view may read a view op placed later in its
             * split: the event at i touches p before p's position. */
            if ((size_t)p >= i) {
                if (*n_fwd < cap_fwd) {
                    fwd[2 * *n_fwd] = (int32_t)i;
                    fwd[2 * *n_fwd + 1] = p;
                }
                ok &= ++*n_fwd <= cap_fwd;
            }
            if (!t[p].allocated) {
                last_use[p] = (int32_t)i;
                last_ev[p] = (int32_t)i;
            }
            /* Releasing a view releases one view of its view_src (rule 6). */
            int32_t v = t[p].view_src;
            if (v >= 0) {
                ok &= (size_t)v < i;
                if (!t[v].allocated)
                    last_ev[v] = (int32_t)i;
            }
        }
    }
    *ordered = ok;
    return GGFIT_OK;
}

/* Snapshots the walk before node p: the arenas, then the live tensors
 * (before p, with an event at or after p), 4 words each. Stops taking
 * checkpoints when out of memory or past the keep's bound. */
static void take_ckpt(kept_walk *w, size_t p)
{
    ggfit_galloc_keep *k = w->k;
    const int32_t *le = w->last_ev;
    size_t m = 0;
    for (size_t x = 0; x < w->n_live; x++)
        if ((size_t)le[w->live[x]] >= p && le[w->live[x]] >= 0)
            w->live[m++] = w->live[x];
    for (size_t e = w->q; e < p; e++)
        if (le[e] >= 0 && (size_t)le[e] >= p)
            w->live[m++] = (int32_t)e;
    w->n_live = m;
    w->q = p;
    /* A source after its consumer (below p) was touched before its own
     * position: its state is in the checkpoint too. */
    size_t m_fwd = 0;
    for (size_t x = 0; x < w->n_fwd && (size_t)w->fwd[2 * x] < p; x++)
        m_fwd += (size_t)w->fwd[2 * x + 1] >= p;

    size_t start = k->n_ck ? ((const size_t *)k->ck_end.p)[k->n_ck - 1] : 0;
    size_t words = arenas_words(w->r->arenas, w->n_arenas) + 1 + 4 * (m + m_fwd);
    uint64_t *ck = start + words <= k->cap_ck_words
                       ? buf_grow(&k->ck, start * sizeof *ck, (start + words) * sizeof *ck)
                       : NULL;
    size_t *end = buf_grow(&k->ck_end, k->n_ck * sizeof *end, (k->n_ck + 1) * sizeof *end);
    if (!ck || !end) {
        w->ckpt = false;
        return;
    }
    uint64_t *o = arenas_put(ck + start, w->r->arenas, w->n_arenas);
    *o++ = m + m_fwd;
    for (size_t x = 0, y = 0; x < m + m_fwd; x++) {
        int32_t e;
        if (x < m) {
            e = w->live[x];
        } else {
            while ((size_t)w->fwd[2 * y + 1] < p)
                y++;
            e = w->fwd[2 * y++ + 1];
        }
        const tstate *s = &w->r->st[e];
        *o++ = (uint64_t)(uint32_t)e << 32 | (uint32_t)s->buffer;
        *o++ = (uint64_t)(uint32_t)s->chunk << 32 | (uint32_t)s->own;
        *o++ = s->offs;
        *o++ = (uint64_t)(uint32_t)(w->tot[2 * e] - s->n_children) << 32 |
               (uint32_t)(w->tot[2 * e + 1] - s->n_views);
    }
    end[k->n_ck++] = start + words;
}

/* Restores checkpoint j (1-based) into r: what a fresh walk has before node
 * p = n_leafs + j * KEEP_EVERY. r->st holds the last walk's final state. */
static void restore_ckpt(kept_walk *w, const tstate *pre, size_t j, size_t p)
{
    ggfit_galloc_keep *k = w->k;
    replay *r = w->r;
    const size_t *end = k->ck_end.p;
    const uint64_t *in = (const uint64_t *)k->ck.p + (j > 1 ? end[j - 2] : 0);
    in = arenas_get(in, r->arenas, w->n_arenas);
    /* At or after p: as rules 1-2 left them (no event before p touched
     * them). Before p, not live: as the last walk ended. Live: from the
     * checkpoint, with this graph's totals. */
    memcpy(r->st + p, pre + p, (r->n - p) * sizeof *r->st);
    size_t m = (size_t)*in++;
    for (size_t x = 0; x < m; x++, in += 4) {
        int32_t e = (int32_t)(in[0] >> 32);
        tstate *s = &r->st[e];
        s->buffer = (int32_t)(uint32_t)in[0];
        s->chunk = (int32_t)(in[1] >> 32);
        s->own = (uint32_t)in[1] != 0;
        s->offs = in[2];
        s->n_children = w->tot[2 * e] - (int32_t)(uint32_t)(in[3] >> 32);
        s->n_views = w->tot[2 * e + 1] - (int32_t)(uint32_t)in[3];
    }
    k->n_ck = j;
    /* This graph's live set at p, for the checkpoints to come: a tensor
     * may be live here and not in the last graph (a dependency view after
     * the prefix releasing one of its view_srcs), whose state at p is still
     * the last walk's final one. */
    w->n_live = 0;
    for (size_t e = 0; e < p; e++)
        if (w->last_ev[e] >= 0 && (size_t)w->last_ev[e] >= p)
            w->live[w->n_live++] = (int32_t)e;
    w->q = p;
}

/* Rules 3-6 from node `from` (n_leafs or a checkpoint's position). */
static ggfit_status walk_kept(kept_walk *w, size_t from)
{
    replay *r = w->r;
    const ggfit_gt *t = r->t;
    size_t next = from + KEEP_EVERY;
    int rc;
    for (size_t i = from; i < r->n; i++) {
        if (i == next) {
            if (w->ckpt)
                take_ckpt(w, i);
            next += KEEP_EVERY;
        }
        if ((rc = place(r, i, t[i].backend)) != GGFIT_OK)
            return rc;
        if ((rc = release_sources(r, i)) != GGFIT_OK)
            return rc;
    }
    return GGFIT_OK;
}

/* The first position where this walk can differ from the last one, given
 * that both graphs agree on [0, n_same) and rules 1-2 placed alike. */
static size_t first_difference(const ggfit_gt *t, size_t n_same, const int32_t *tot_old,
                               const int32_t *tot_new, const int32_t *use_old,
                               const int32_t *use_new, const int32_t *fwd, size_t n_fwd)
{
    size_t d = n_same;
    /* A tensor at e has no event before e + 1, so none at or after d can
     * lower d. */
    for (size_t e = 0; e < d; e++) {
        if (tot_old[2 * e] == tot_new[2 * e] && tot_old[2 * e + 1] == tot_new[2 * e + 1])
            continue;
        if (t[e].allocated)
            continue;   /* never placed, never freed */
        size_t a = use_old[e] < 0 ? e : (size_t)use_old[e];
        size_t b = use_new[e] < 0 ? e : (size_t)use_new[e];
        a = a < b ? a : b;
        if (a < d)
            d = a;
    }
    /* A node before d reading a source at or after d (which the loop did
     * not look at, and which may differ from the last graph's): d goes back
     * to the node. The pairs before the node are the same in both graphs. */
    for (bool moved = true; moved;) {
        moved = false;
        for (size_t x = 0; x < n_fwd && (size_t)fwd[2 * x] < d; x++)
            if ((size_t)fwd[2 * x + 1] >= d) {
                d = (size_t)fwd[2 * x];
                moved = true;
            }
    }
    return d;
}

/* Whether rules 1-2 placed the same tensors, in the same order, at the same
 * places, leaving the same arenas, as in the last call. */
static bool same_prepass(const ggfit_galloc_keep *k, int nw)
{
    int od = 1 - nw;
    return k->n_log[nw] == k->n_log[od] && k->n_pa[nw] == k->n_pa[od] &&
           !memcmp(k->pa[nw].p, k->pa[od].p, k->n_pa[nw] * sizeof(uint64_t)) &&
           !memcmp(k->log[nw].p, k->log[od].p, k->n_log[nw] * sizeof(kept_placed));
}

/* Field by field: the caller's padding bytes may be anything. */
static bool same_bufts(const ggfit_galloc_buft *a, const ggfit_galloc_buft *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i].alignment != b[i].alignment || a[i].max_size != b[i].max_size ||
            a[i].same_as != b[i].same_as)
            return false;
    return true;
}

ggfit_status ggfit__galloc_reserve_kept(const ggfit_gt *t, size_t n_leafs, size_t n_nodes,
                                        int n_backends, const ggfit_galloc_buft *bufts,
                                        uint64_t *size_out, ggfit_galloc_keep *k,
                                        const void *owner, uint32_t gen, size_t n_same,
                                        char **err)
{
    if (!k)
        return reserve(t, n_leafs, n_nodes, n_backends, bufts, size_out, NULL, true, err);
    bool was_valid = k->valid;
    k->valid = false;   /* until this call has succeeded */
    if (err)
        *err = NULL;
    if (!t || !bufts || !size_out)
        return ggfit__fail(err, GGFIT_EINVAL, "galloc: no graph, buffer types or output");
    if (n_backends <= 0 || n_backends > 1024)
        return ggfit__fail(err, GGFIT_EINVAL, "galloc: %d backends", n_backends);
    if (n_leafs > INT32_MAX || n_nodes > INT32_MAX - n_leafs)
        return ggfit__fail(err, GGFIT_ELIMIT, "galloc: more than 2^31 tensors");
    size_t n = n_leafs + n_nodes;
    size_t bytes_bufts = (size_t)n_backends * sizeof *bufts;

    int why = -1;
    if (!was_valid || k->owner != owner || k->gen != gen)
        why = KEEP_WHY_NEW;
    else if (k->n_leafs != n_leafs || k->n_backends != n_backends ||
             !same_bufts(k->bufts.p, bufts, n_backends))
        why = KEEP_WHY_SHAPE;
    else if (!k->ordered)
        why = KEEP_WHY_ORDER;
    /* The last walk's final state is read below the restart point: only a
     * block that need not grow keeps it. */
    if (why < 0 && k->st.cap < n * sizeof(tstate))
        why = KEEP_WHY_SHAPE;

    size_t n_arenas = 0;
    for (int b = 0; b < n_backends; b++)
        n_arenas += bufts[b].same_as < 0;
    size_t bytes_arenas = n_arenas * sizeof(arena);
    int nw = 1 - k->cur;   /* this call's pair */
    char *mem = ggfit__buf_get(&k->arenas, bytes_arenas + (size_t)n_backends * sizeof(int));
    tstate *st = ggfit__buf_get(&k->st, n * sizeof *st);
    tstate *pre = ggfit__buf_get(&k->pre, n * sizeof *pre);
    int32_t *tot = ggfit__buf_get(&k->tot[nw], 2 * n * sizeof *tot);
    int32_t *last = ggfit__buf_get(&k->last[nw], 2 * n * sizeof *last);
    kept_placed *log = ggfit__buf_get(&k->log[nw], n * sizeof *log);
    int32_t *live = ggfit__buf_get(&k->live, n * sizeof *live);   /* first the raw log */
    size_t cap_fwd = n / 16 + 16;
    int32_t *fwd = ggfit__buf_get(&k->fwd, 2 * cap_fwd * sizeof *fwd);
    void *bt = why == KEEP_WHY_NEW || why == KEEP_WHY_SHAPE || !k->bufts.p
                   ? ggfit__buf_get(&k->bufts, bytes_bufts)
                   : k->bufts.p;
    if (!mem || !st || !pre || !tot || !last || !log || !live || !fwd || !bt)
        return ggfit__fail(err, GGFIT_ENOMEM, "galloc: out of memory");
    memcpy(bt, bufts, bytes_bufts);

    replay r = { .t = t, .n = n, .n_backends = n_backends, .trusted = true, .err = err,
                 .arenas = (arena *)(void *)mem, .arena_of = (int *)(void *)(mem + bytes_arenas),
                 .st = pre, .log = live, .cap_log = n };
    /* check_graph's trusted pass, with the last-use lists cleared in it. */
    int rc = check_graph(&r, n_leafs, bufts, true, last);
    if (rc != GGFIT_OK)
        return rc;
    int next = 0;
    for (int b = 0; b < n_backends; b++) {
        if (bufts[b].same_as >= 0) {
            r.arena_of[b] = r.arena_of[bufts[b].same_as];
            continue;
        }
        arena *a = &r.arenas[next];
        a->align = bufts[b].alignment;
        a->max_chunk = bufts[b].max_size < CHUNK_UNBOUNDED ? bufts[b].max_size : CHUNK_UNBOUNDED;
        a->n_chunks = 0;
        r.arena_of[b] = next++;
    }

    bool ordered;
    size_t n_fwd = 0;
    if ((rc = prepass_kept(&r, n_leafs, last, last + n, fwd, cap_fwd, &n_fwd, &ordered)) !=
        GGFIT_OK)
        return rc;
    r.log = NULL;
    k->n_log[nw] = r.n_log <= r.cap_log ? r.n_log : 0;
    for (size_t x = 0; x < k->n_log[nw]; x++) {
        const tstate *a = &pre[live[x]];
        log[x] = (kept_placed){ .e = live[x], .buffer = a->buffer, .chunk = a->chunk,
                                .own = a->own, .offs = a->offs };
    }
    for (size_t e = 0; e < n; e++) {
        tot[2 * e] = pre[e].n_children;
        tot[2 * e + 1] = pre[e].n_views;
    }
    size_t n_pa = arenas_words(r.arenas, n_arenas);
    uint64_t *pa = ggfit__buf_get(&k->pa[nw], n_pa * sizeof *pa);
    if (!pa)
        return ggfit__fail(err, GGFIT_ENOMEM, "galloc: out of memory");
    arenas_put(pa, r.arenas, n_arenas);
    k->n_pa[nw] = n_pa;
    if (!ordered || r.n_log > r.cap_log) {
        ordered = false;
        if (why < 0)
            why = KEEP_WHY_ORDER;
    }
    if (why < 0 && !same_prepass(k, nw))
        why = KEEP_WHY_PREPASS;

    kept_walk w = { .r = &r, .k = k, .n_arenas = n_arenas, .tot = tot, .last_ev = last + n,
                    .live = live, .fwd = fwd, .n_fwd = n_fwd, .ckpt = ordered };
    k->cap_ck_words = n * KEEP_WORDS_PER_TENSOR;
    size_t from = n_leafs, d = 0;
    if (why < 0) {
        size_t same = n_same < n ? n_same : n;
        same = same < k->n ? same : k->n;
        const int32_t *last_old = k->last[1 - nw].p;
        d = first_difference(t, same, k->tot[1 - nw].p, tot, last_old, last, fwd, n_fwd);
        size_t j = d > n_leafs ? (d - n_leafs) / KEEP_EVERY : 0;
        if (j > k->n_ck)
            j = k->n_ck;
        if (j == 0) {
            why = KEEP_WHY_EARLY;
        } else {
            from = n_leafs + j * KEEP_EVERY;
            r.st = st;
            restore_ckpt(&w, pre, j, from);
        }
    }
    if (why >= 0) {
        /* The state after rules 1-2 is the walk's start: it becomes st. */
        ggfit__buf b = k->st;
        k->st = k->pre;
        k->pre = b;
        r.st = pre;
        k->n_ck = 0;
    }
    rc = walk_kept(&w, from);
    if (rc != GGFIT_OK)
        return rc;
    for (int b = 0; b < n_backends; b++) {
        size_out[b] = 0;
        if (bufts[b].same_as >= 0)
            continue;   /* counted at the first backend of its type */
        const arena *a = &r.arenas[r.arena_of[b]];
        for (int c = 0; c < a->n_chunks; c++)
            size_out[b] += a->chunks[c].high;
    }

    k->valid = true;
    k->ordered = ordered;
    k->owner = owner;
    k->gen = gen;
    k->n = n;
    k->n_leafs = n_leafs;
    k->n_backends = n_backends;
    k->cur = nw;
    ggfit_galloc_keep_stats *s = &k->stats;
    s->n_calls++;
    s->n_nodes += n_nodes;
    s->last_bound = why < 0 ? d : 0;
    s->last_from = from;
    if (why < 0) {
        s->n_resumed++;
        s->n_skipped += from - n_leafs;
    } else {
        s->n_full[why]++;
    }

    if (verify_on()) {
        /* Every kept call against a plain replay of the same graph. */
        uint64_t full[1024];
        char *e2 = NULL;
        int rc2 = reserve(t, n_leafs, n_nodes, n_backends, bufts, full, NULL, true, &e2);
        if (rc2 != GGFIT_OK) {
            fprintf(stderr, "galloc keep: the full replay failed (%s) where the kept one did not\n",
                    e2 ? e2 : "?");
            abort();
        }
        for (int b = 0; b < n_backends; b++)
            if (full[b] != size_out[b]) {
                fprintf(stderr, "galloc keep: backend %d: %llu bytes resumed at node %zu of %zu,"
                        " %llu in full\n", b, (unsigned long long)size_out[b], from, n,
                        (unsigned long long)full[b]);
                abort();
            }
    }
    return GGFIT_OK;
}
