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
    uint64_t peak;                 /* the highest end placed since a kept
                                      walk's last checkpoint */
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
        c->peak = 0;
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
    uint64_t end = *offs_out + size;
    if (end > c->high)
        c->high = end;
    if (end > c->peak)
        c->peak = end;
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
    int32_t vleft;        /* a kept replay's: views (as n_views counts them)
                             at or after the walk's position */
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
    char **err;
} replay;

static ggfit_status fail_limit(replay *r, size_t i, const char *what)
{
    return ggfit__fail(r->err, GGFIT_ELIMIT, "galloc: tensor %zu: %s", i, what);
}

static inline ggfit_status free_tensor(replay *r, size_t i)
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
        /* The tests are independent: the cheapest first, on the state
         * already loaded. */
        if (ps->n_children != 1 || ps->n_views != 0)
            continue;
        if ((t[p].flags & GGFIT_TF_OUTPUT) ||
            (t[p].view_src >= 0 && (t[t[p].view_src].flags & GGFIT_TF_OUTPUT)))
            continue;
        if (!same_layout(&t[i], &t[p]))
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

/* Checks each backend's alignment and same_as. */
static ggfit_status check_bufts(replay *r, const ggfit_galloc_buft *bufts)
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
    return GGFIT_OK;
}

/* Checks the graph and clears the per-tensor state. A trusted graph (the
 * scheduler's output, whose indices are in range by construction) has only
 * its sizes checked, which come from a file's shapes. */
static ggfit_status check_graph(replay *r, size_t n_leafs, const ggfit_galloc_buft *bufts,
                                bool trusted)
{
    int rc = check_bufts(r, bufts);
    if (rc != GGFIT_OK)
        return rc;
    /* An index x is in [-1, m) exactly when (uint32_t)x + 1 <= m (m, the
     * tensor or backend count, is below 2^31): one test per range. */
    uint32_t n = (uint32_t)r->n, nb = (uint32_t)r->n_backends;
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
static inline ggfit_status release_sources(replay *r, size_t i)
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

/* release_sources for a kept walk, over a node's sources as the keep lists
 * them ([ref, end): non-empty slots, in slot order). */
static inline ggfit_status release_refs(replay *r, const int32_t *ref, const int32_t *end)
{
    const ggfit_gt *t = r->t;
    tstate *st = r->st;
    for (; ref < end; ref++) {
        int32_t p = *ref;
        tstate *ps = &st[p];
        /* As in release_sources: the decrement's own result is tested. */
        if (--ps->n_children != 0 || ps->n_views != 0)
            continue;
        int rc = GGFIT_OK;
        int32_t v = t[p].view_src;
        if (v >= 0) {
            tstate *vs = &st[v];
            if (--vs->n_views == 0 && vs->n_children == 0 && vs->own)
                rc = free_tensor(r, (size_t)v);
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
    int rc = check_graph(&r, n_leafs, bufts, trusted);   /* also clears r.st */
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
 * A kept replay remembers its walk: each tensor's final state, where rules
 * 1-2 placed the inputs, each node's references (sources and counted
 * view_src), and a checkpoint every KEEP_EVERY nodes. The next call on a
 * graph whose first S = n_same entries are the same finds a position D up
 * to which the two walks do the same things, restores the last checkpoint
 * at or before D and walks from there. Positions are indices into t (leafs
 * first), so the walk runs over [n_leafs, n); a checkpoint at p is the
 * state before node p.
 *
 * Why a restored state is the state a fresh walk has there:
 *  - Every decision of the walk on a tensor e compares e's remaining
 *    consumers with 1 (rule 4: the node is e's last consumer) or 0 (rule 6)
 *    and its remaining views with 0. Before position S the two graphs have
 *    the same references, so e's counts there differ by what the suffixes
 *    [S, n) hold. If e has a consumer or a counted view in the suffix of
 *    both graphs, neither walk decides "yes" on e before S (a count stays
 *    at least 1 beyond the node at hand); if in neither, the counts are
 *    equal. Only a tensor "held" by one suffix and not the other can be
 *    decided on differently, and then not before its last consumer in
 *    [0, S) (before that both counts are at least 2 at a consumer, 1 after
 *    it); with no consumer there, not before its own position. D is the
 *    least such position, and S when there is none.
 *  - Rule 2 places inputs before the walk, below everything. Those placed
 *    while counting [n_leafs, S) are the same in both graphs; those placed
 *    in the suffix must ask for the same bytes on the same backends in the
 *    same order (then the arenas after rule 2 are equal, and each takes the
 *    last call's address), or the walk starts over.
 *  - An event at node j (placing j, handing a source's memory to j,
 *    releasing j's sources, and through a source that is a view, its
 *    view_src) touches j, j's sources and their view_srcs. The scheduler's
 *    graph lists those before j (checked, else no resume) but for a few
 *    sources of dependency views, which name a view op placed later in
 *    their split: those "forward" pairs are listed, D goes back to a node
 *    whose forward source is past S, and a checkpoint holds the forward
 *    sources its position falls between.
 *  - At a checkpoint p, a consumer count is the number of references at or
 *    after p, which this graph gives; a view count is the views at or after
 *    p plus those before p not yet released ("pending", kept in the
 *    checkpoint: the walk counts down the views ahead as it passes them).
 *    A tensor before p whose state can still change there ("live": a
 *    consumer or a view ahead, a view not released, or it is the view_src
 *    of a live view; some 14-23 in a layer) has the rest of its state in
 *    the checkpoint; any other before p is as the last walk left it (no
 *    later walk touched it: that would have made it held by one suffix,
 *    and moved D below p); one at or after p is as rule 2 left it.
 *  - Arenas are restored whole: chunks, free lists and high-water marks.
 *    With bounded chunks (max_size < UINT64_MAX) the choice of chunk reads
 *    the marks (rule 7), which a whole restore keeps exact; and the final
 *    marks, the sizes, are those of a full walk.
 *  - Arenas are per buffer type (same_as), and rule 4 hands a node its
 *    source's arena whatever the node's backend: restored tensors keep
 *    their buffer, and the arena is looked up from it.
 *
 * Where a walk meets the last one: the scheduler says where the two
 * graphs' tails start (ggfit_galloc_tail): entries [tail_new, n) are the
 * last graph's [tail_old, n_old) with indices mapped, shift = tail_new -
 * tail_old. A resumed walk compares its state before each node kn = ko +
 * shift with the last walk's checkpoint at ko >= tail_old (copied aside
 * first: this walk writes its own checkpoints over them), and stops at the
 * first that is the same under the mapping; from there the two walks make
 * the same decisions on the same addresses (rules 3-7 read only the state
 * below and the graph's entries, which the tail repeats), so the arenas
 * end as the last walk's did. "The same" is:
 *  - The tensors whose state the rest can read, those take_ckpt lists (the
 *    live ones, the view_srcs of live views, the forward sources kn falls
 *    between), one for one with the last checkpoint's mapped entries, with
 *    equal ownership, buffer, chunk, offset and pending views. The rest
 *    reads a tensor before kn only through a reference at or after kn, or
 *    a view's, which makes it live; a dead one is never touched again.
 *    Entries below the common prefix map to themselves, those in the tail
 *    by the shift; one in between (or below n_placed_same but past the
 *    prefix) is never the same, mid_new or not: its size, flags and
 *    layout, which freeing and rule 4 read, may differ from its
 *    counterpart's, and the keep holds no copy of the last graph to tell.
 *    (A copy of those fields per entry, made by every call, met the last
 *    walk a little earlier on the gpt-oss fit but cost more than that
 *    saved: some 15 instructions per entry walked.)
 *  - Counts need no comparison: a consumer count before kn is the
 *    references at or after kn, a view count the views ahead (the tail's,
 *    alike under the mapping) plus the pending ones (compared).
 *  - Tensors at or after kn hold what rule 2 left, or for a forward
 *    source, what the entries above compare. Rule 2 placed the tail's
 *    inputs: the resume matched its log rank by rank with the last call's
 *    (same bytes, same address), so the tail's inputs must have the same
 *    ranks in both logs.
 *  - Arenas: the same chunks with the same free lists. The marks decide
 *    only between chunks (rule 7), so in a chunk alone both here and at
 *    the last walk's end they may differ: this walk's final mark is
 *    max(its mark here, the peak of the rest: the highest end the last
 *    walk placed in it after ko). Every walk keeps per checkpoint its
 *    first chunks' peaks since the checkpoint before (chunk.peak, reset
 *    at each), and after its last one; one that stopped in the tail adds
 *    to the latter the peak after where it stopped, which is the rest of
 *    the walk it met. With several chunks the marks must be equal, and
 *    the final marks are the last walk's.
 * A call that stopped at kn still describes itself for the next: its
 * checkpoints end at or before kn (the next resume restores one of them);
 * the final state of every tensor dead there is final; those live there,
 * or after kn, are restored or recounted by any resume from a checkpoint
 * at or before kn; its references, forward pairs and rule 2's log cover
 * the whole graph (count_kept counts from the checkpoint to the end, and
 * kept_bound renamed the log); its final marks are the ones worked out
 * above.
 * ---------------------------------------------------------------------- */

/* Nodes between checkpoints: a resume walks up to this many nodes it could
 * have skipped, and every walk takes a checkpoint this often (the live
 * tensors, some 100 words). On the 3-device gpt-oss fit, 64 costs 5% less
 * than 32 and 1% more than 128. */
#define KEEP_EVERY 64
/* Checkpoint words allowed per tensor of the graph: keeps the memory of a
 * keep linear in the graph's size (later checkpoints are then not taken). */
#define KEEP_WORDS_PER_TENSOR 16
/* Words per arena of a walk's final marks: the chunk count, the marks. */
#define FIN_WORDS (1 + GGFIT_GALLOC_MAX_CHUNKS)

/* A tensor rule 2 placed, in the order it did. */
typedef struct kept_placed {
    int32_t pos;          /* the node being counted when it was placed */
    int32_t e, buffer, chunk;
    uint64_t offs, size;
    int32_t max_e;        /* the largest e of this entry and those before */
} kept_placed;

/* Why a call walked in full (the counters of ggfit_galloc_keep_stats). */
enum {
    KEEP_WHY_NEW,       /* no kept walk, or another owner or generation */
    KEEP_WHY_SHAPE,     /* leaf or backend counts, or buffer types, differ */
    KEEP_WHY_ORDER,     /* a source after its consumer: not resumable */
    KEEP_WHY_PREPASS,   /* rules 1-2 placed differently */
    KEEP_WHY_EARLY,     /* the first difference precedes the first checkpoint,
                           or the first eighth of the graph */
    KEEP_WHY_COUNT
};

_Static_assert(sizeof ((ggfit_galloc_keep_stats *)0)->n_full /
                   sizeof ((ggfit_galloc_keep_stats *)0)->n_full[0] == KEEP_WHY_COUNT,
               "n_full must cover the reasons");

struct ggfit_galloc_keep {
    bool valid;              /* the fields below describe the last call */
    bool ordered;            /* its graph listed view_srcs before the views'
                                consumers, had few forward sources, and
                                rule 2 ran nothing in place */
    const void *owner;
    uint32_t gen;
    size_t n, n_leafs;
    int n_backends;
    ggfit__buf bufts;        /* ggfit_galloc_buft[n_backends] */
    ggfit__buf arenas;       /* the replay's arenas, then its backend map */
    /* Per tensor, n of each; kept when a graph grows. */
    ggfit__buf st;           /* tstate: the last walk's final state */
    ggfit__buf mark;         /* uint8_t: a resume's bound marks; 0 between
                                calls */
    size_t n_marked;         /* marks set, of the largest graph */
    ggfit__buf ref_at;       /* size_t[n + 1]: where position q's references
                                start in refs */
    ggfit__buf refs;         /* int32_t: per node its sources, then its
                                view_src when counted (op not NONE) */
    ggfit__buf log;          /* kept_placed: what rule 2 placed */
    size_t n_log;
    ggfit__buf fwd;          /* int32_t pairs (node, source), in node order:
                                the sources that come after their consumer */
    size_t n_fwd;
    ggfit__buf ck;           /* uint64_t: the checkpoints, one after another */
    ggfit__buf ck_end;       /* size_t: word where checkpoint j (1-based: at
                                n_leafs + j * KEEP_EVERY) ends, at [j - 1] */
    size_t n_ck, cap_ck_words;
    ggfit__buf live;         /* int32_t[n]: the live set being built */
    ggfit__buf held;         /* int32_t: tensors a resume's bound marked */
    ggfit__buf fin;          /* uint64_t[n_arenas * FIN_WORDS]: per arena of
                                the last walk its chunk count, then each
                                chunk's final mark */
    ggfit__buf fin_new;      /* the same for a walk that stopped in the
                                tail, swapped with fin when it succeeds */
    ggfit__buf ck_old;       /* the last walk's checkpoints in the tail,
                                copied aside before this walk overwrites
                                them; then their ends (size_t, relative) */
    ggfit__buf ck_old_end;
    ggfit__buf log_e_old;    /* int32_t: rule 2's log, the last graph's
                                tensors (kept_bound renames them) */
    ggfit__buf scratch;      /* uint64_t: a tail comparison's entries */
    ggfit__buf pk;           /* uint64_t[n_ck * n_arenas]: per checkpoint j,
                                at [j - 1], per arena the highest end placed
                                in its first chunk since checkpoint j - 1 */
    ggfit__buf pk_end;       /* uint64_t[n_arenas]: the same after the last
                                checkpoint, to the walk's end */
    ggfit__buf pk_suf;       /* uint64_t: per old checkpoint a tail search
                                may meet, per arena, the peak after it */
    ggfit_galloc_keep_stats stats;
};

ggfit_galloc_keep *ggfit__galloc_keep_new(void)
{
    return ggfit__calloc(1, sizeof(ggfit_galloc_keep));
}

static bool env_on(const char *name)
{
    /* A plain read per call: no state of our own, nothing to race on. */
    const char *v = getenv(name);
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
                    " %llu met the last walk in the tail, %llu nodes after;"
                    " full: new %llu, shape %llu, order %llu, prepass %llu, early %llu\n",
                    (unsigned long long)s->n_calls, (unsigned long long)s->n_resumed,
                    (unsigned long long)s->n_skipped, (unsigned long long)s->n_nodes,
                    (unsigned long long)s->n_tail, (unsigned long long)s->n_tail_skipped,
                    (unsigned long long)s->n_full[KEEP_WHY_NEW],
                    (unsigned long long)s->n_full[KEEP_WHY_SHAPE],
                    (unsigned long long)s->n_full[KEEP_WHY_ORDER],
                    (unsigned long long)s->n_full[KEEP_WHY_PREPASS],
                    (unsigned long long)s->n_full[KEEP_WHY_EARLY]);
            fclose(f);
        }
    }
    ggfit__buf *bufs[] = { &k->bufts, &k->arenas, &k->st,
                           &k->mark, &k->ref_at, &k->refs, &k->log, &k->fwd, &k->ck,
                           &k->ck_end, &k->live, &k->held, &k->fin, &k->fin_new,
                           &k->ck_old, &k->ck_old_end, &k->log_e_old, &k->scratch, &k->pk, &k->pk_end, &k->pk_suf };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        ggfit__buf_free(bufs[i]);
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
    if (used && b->p)
        memcpy(p, b->p, used < b->cap ? used : b->cap);
    free(b->p);
    b->p = p;
    b->cap = cap;
    return p;
}

/* Arenas as words: per arena its chunk count, then per chunk its mark, its
 * free-block count and the blocks in use (not the whole list). */
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
            memcpy(w, ch->free, (size_t)ch->n_free * sizeof ch->free[0]);
            w += 2 * (size_t)ch->n_free;
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
            ch->peak = 0;
            ch->n_free = (int)*w++;
            memcpy(ch->free, w, (size_t)ch->n_free * sizeof ch->free[0]);
            w += 2 * (size_t)ch->n_free;
        }
    }
    return w;
}

_Static_assert(sizeof(span) == 2 * sizeof(uint64_t), "a free block is two words");

/* A kept replay under way. */
typedef struct kept_walk {
    replay *r;
    ggfit_galloc_keep *k;
    size_t n_arenas;
    int32_t *live;           /* the live set at position q */
    size_t n_live, q;
    bool ckpt;               /* still taking checkpoints */
    bool ordered;            /* this graph, so far */
} kept_walk;

/* Mark bits: held by the last suffix, by this one, by one only, read by a
 * forward pair, placed by rule 2 in this suffix (kept_bound); state set
 * before its position (count_kept). */
enum { MARK_OLD = 1, MARK_NEW = 2, MARK_ONE = 4, MARK_FWD = 8, MARK_PLACED = 16, MARK_SET = 32 };

/* Appends a forward pair (node i reads p at or after i); too many of them
 * and the graph is not resumable. */
static void note_fwd(kept_walk *w, size_t i, int32_t p)
{
    ggfit_galloc_keep *k = w->k;
    size_t cap = w->r->n / 16 + 16;
    int32_t *f = k->n_fwd < cap ? buf_grow(&k->fwd, 2 * k->n_fwd * sizeof *f,
                                           2 * (k->n_fwd + 1) * sizeof *f)
                                : NULL;
    if (!f) {
        w->ordered = false;
        return;
    }
    f[2 * k->n_fwd] = (int32_t)i;
    f[2 * k->n_fwd + 1] = p;
    k->n_fwd++;
}

/* Notes that rule 2, counting node pos, placed e. One that ran in place
 * moved its source, which the log does not say: the graph is then not
 * resumable. Returns false when out of memory. */
static bool kept_log(kept_walk *w, size_t pos, size_t e)
{
    ggfit_galloc_keep *k = w->k;
    const tstate *s = &w->r->st[e];
    kept_placed *log = buf_grow(&k->log, k->n_log * sizeof *log, (k->n_log + 1) * sizeof *log);
    if (!log)
        return false;
    int32_t max_e = k->n_log && log[k->n_log - 1].max_e > (int32_t)e ? log[k->n_log - 1].max_e
                                                                      : (int32_t)e;
    log[k->n_log++] = (kept_placed){ .pos = (int32_t)pos, .e = (int32_t)e, .buffer = s->buffer,
                                     .chunk = s->chunk, .offs = s->offs,
                                     .size = w->r->t[e].size, .max_e = max_e };
    if (ggfit__op_can_inplace(w->r->t[e].op))
        w->ordered = false;
    return true;
}

/* Rule 2 over [from, n) into r->st, as walk applies it (placing inputs only
 * when place_inputs: a resume has checked those past S already, and those
 * before are in place), and what a resume needs of this graph: each
 * node's references, the forward pairs. The state of each tensor at or
 * after `from` is cleared when the pass reaches it, or when a forward pair
 * reads it first (MARK_SET, unless the caller set it). */
static ggfit_status count_kept(kept_walk *w, size_t from, bool place_inputs)
{
    replay *r = w->r;
    ggfit_galloc_keep *k = w->k;
    const ggfit_gt *t = r->t;
    tstate *st = r->st;
    size_t *ref_at = k->ref_at.p;
    uint8_t *mark = k->mark.p;
    size_t nr = ref_at[from];
    /* Room for every reference: at most 11 per node. */
    int32_t *refs = buf_grow(&k->refs, nr * sizeof *refs,
                             (nr + (r->n - from) * (GGFIT_GALLOC_MAX_SRC + 1)) * sizeof *refs);
    if (!refs)
        return ggfit__fail(r->err, GGFIT_ENOMEM, "galloc: out of memory");
    int rc;
    size_t n = r->n;
    for (size_t i = from; i < n; i++) {
        const ggfit_gt *ti = &t[i];
        if (mark[i] & MARK_SET)
            mark[i] = 0;
        else
            st[i] = (tstate){ 0 };
        ref_at[i] = nr;
        if (ti->size > SIZE_LIMIT)
            return fail_limit(r, i, "size above 2^62 bytes");
        int32_t v = ti->view_src;
        if (v >= 0 && ti->op != GGFIT_OP_NONE) {
            st[v].n_views++;
            st[v].vleft++;
            refs[nr++] = v;
            w->ordered &= (size_t)v < i;
        }
        if (place_inputs && (ti->flags & GGFIT_TF_INPUT) && !ti->allocated && !st[i].own &&
            v < 0) {
            if ((rc = place_new(r, i, ti->backend)) != GGFIT_OK)
                return rc;
            if (!kept_log(w, i, i))
                return ggfit__fail(r->err, GGFIT_ENOMEM, "galloc: out of memory");
        }
        unsigned n_src = ti->n_src;
        for (unsigned j = 0; j < n_src; j++) {
            int32_t p = ti->src[j];
            /* One test for the rare cases (i < 2^31): an empty slot, whose
             * index is negative, and a source at or after its consumer. */
            if ((uint32_t)p >= (uint32_t)i) {
                if (p < 0)
                    continue;
                if ((size_t)p > i && !(mark[p] & MARK_SET)) {
                    st[p] = (tstate){ 0 };
                    mark[p] = MARK_SET;
                }
                /* A source before its consumer has its view_src before it
                 * (a view's, checked at the view); one after it must have
                 * too. */
                note_fwd(w, i, p);
                w->ordered &= (size_t)t[p].view_src < i || t[p].view_src < 0;
            }
            st[p].n_children++;
            refs[nr++] = p;
            if (place_inputs && (t[p].flags & GGFIT_TF_INPUT) && !t[p].allocated &&
                !st[p].own && t[p].view_src < 0) {
                if ((rc = place_new(r, (size_t)p, ti->backend)) != GGFIT_OK)
                    return rc;
                if (!kept_log(w, i, (size_t)p))
                    return ggfit__fail(r->err, GGFIT_ENOMEM, "galloc: out of memory");
            }
        }
    }
    ref_at[n] = nr;
    return GGFIT_OK;
}

/* Whether a tensor's state can still change: consumers or views ahead, or
 * views not yet released (a view's own release changes its view_src, which
 * take_ckpt adds). */
static inline bool is_live(const tstate *s)
{
    return (s->n_children | s->n_views | s->vleft) != 0;
}

/* Brings the live set to position p (p >= q): those still live, then the
 * live ones in [q, p), in position order (so the set is always sorted);
 * returns their count and stores how many of them are views (*m_vs) and
 * how many forward sources p falls between (*m_fwd). */
static size_t live_at(kept_walk *w, size_t p, size_t *m_vs_out, size_t *m_fwd_out)
{
    ggfit_galloc_keep *k = w->k;
    const tstate *st = w->r->st;
    const ggfit_gt *t = w->r->t;
    int32_t ip = (int32_t)p;
    size_t m = 0, m_vs = 0;
    for (size_t x = 0; x < w->n_live; x++) {
        int32_t e = w->live[x];
        if (is_live(&st[e])) {
            w->live[m++] = e;
            m_vs += t[e].view_src >= 0;
        }
    }
    for (size_t e = w->q; e < p; e++)
        if (is_live(&st[e])) {
            w->live[m++] = (int32_t)e;
            m_vs += t[e].view_src >= 0;
        }
    w->n_live = m;
    w->q = p;
    /* A source after its consumer (below p) was touched before its own
     * position: its state is in the checkpoint too. */
    const int32_t *fwd = k->fwd.p;
    size_t m_fwd = 0;
    for (size_t x = 0; x < k->n_fwd && fwd[2 * x] < ip; x++)
        m_fwd += fwd[2 * x + 1] >= ip;
    *m_vs_out = m_vs;
    *m_fwd_out = m_fwd;
    return m;
}

/* The checkpoint entries at p into o, 3 words each: the m live tensors
 * (live_at), each live view followed by its view_src (marked "extra"),
 * then the m_fwd forward sources. */
static void put_entries(const kept_walk *w, size_t p, size_t m, size_t m_fwd, uint64_t *o)
{
    const tstate *st = w->r->st;
    const ggfit_gt *t = w->r->t;
    const int32_t *fwd = w->k->fwd.p;
    int32_t ip = (int32_t)p;
    for (size_t x = 0, y = 0; x < m + m_fwd; x++) {
        int32_t e;
        if (x < m) {
            e = w->live[x];
        } else {
            while (fwd[2 * y + 1] < ip)
                y++;
            e = fwd[2 * y++ + 1];
        }
        for (int extra = 0; extra < 2; extra++) {
            const tstate *s = &st[e];
            *o++ = (uint64_t)(uint32_t)e << 32 | (uint64_t)s->own << 31 |
                   (uint64_t)extra << 30 | (uint32_t)s->buffer;
            *o++ = (uint64_t)(uint32_t)s->chunk << 32 | (uint32_t)(s->n_views - s->vleft);
            *o++ = s->offs;
            if (x >= m || t[e].view_src < 0)
                break;
            e = t[e].view_src;
        }
    }
}

/* Snapshots the walk before node p: the arenas, then the live tensors
 * before p, the view_srcs of the live views among them (marked "extra":
 * not live by themselves) and the forward sources p falls between, 3
 * words each. Stops taking checkpoints when out of memory or past the
 * keep's bound. */
static void take_ckpt(kept_walk *w, size_t p)
{
    ggfit_galloc_keep *k = w->k;
    size_t m_vs, m_fwd;
    size_t m = live_at(w, p, &m_vs, &m_fwd);

    size_t start = k->n_ck ? ((const size_t *)k->ck_end.p)[k->n_ck - 1] : 0;
    size_t n_e = m + m_vs + m_fwd;
    size_t words = arenas_words(w->r->arenas, w->n_arenas) + 1 + 3 * n_e;
    uint64_t *ck = start + words <= k->cap_ck_words
                       ? buf_grow(&k->ck, start * sizeof *ck, (start + words) * sizeof *ck)
                       : NULL;
    size_t *end = buf_grow(&k->ck_end, k->n_ck * sizeof *end, (k->n_ck + 1) * sizeof *end);
    size_t na = w->n_arenas;
    uint64_t *pk = buf_grow(&k->pk, k->n_ck * na * sizeof *pk, (k->n_ck + 1) * na * sizeof *pk);
    if (!ck || !end || !pk) {
        w->ckpt = false;
        return;
    }
    /* The first chunks' peaks since the last checkpoint, for a later walk
     * that meets this one (tail_meets); they restart here. */
    for (size_t a = 0; a < na; a++) {
        arena *ar = &w->r->arenas[a];
        pk[k->n_ck * na + a] = ar->n_chunks ? ar->chunks[0].peak : 0;
        for (int c = 0; c < ar->n_chunks; c++)
            ar->chunks[c].peak = 0;
    }
    uint64_t *o = arenas_put(ck + start, w->r->arenas, w->n_arenas);
    *o++ = n_e;
    put_entries(w, p, m, m_fwd, o);
    end[k->n_ck++] = start + words;
}

/* Restores checkpoint j (1-based), the state before node p = n_leafs +
 * j * KEEP_EVERY. Before count_kept (after: false), the arenas and the
 * tensors before p, over the last walk's final state, counts left for
 * count_kept to add (consumers from 0, views from those pending); the live
 * ones start the live set. After it (after: true), the forward sources at
 * or after p, over what count_kept and rule 2 left. */
static void restore_ckpt(kept_walk *w, size_t j, size_t p, bool after)
{
    ggfit_galloc_keep *k = w->k;
    replay *r = w->r;
    const size_t *end = k->ck_end.p;
    const uint64_t *in = (const uint64_t *)k->ck.p + (j > 1 ? end[j - 2] : 0);
    if (!after) {
        in = arenas_get(in, r->arenas, w->n_arenas);
        w->n_live = 0;
        w->q = p;
    } else {
        /* Past the arenas: per arena its chunk count, per chunk 2 words
         * and its blocks. */
        for (size_t a = 0; a < w->n_arenas; a++)
            for (uint64_t c = *in++; c > 0; c--, in += 2 + 2 * in[1])
                ;
    }
    size_t m = (size_t)*in++;
    for (size_t x = 0; x < m; x++, in += 3) {
        size_t e = (size_t)(in[0] >> 32);
        if ((e >= p) != after)
            continue;
        tstate *s = &r->st[e];
        s->own = (in[0] >> 31) & 1;
        s->buffer = (int32_t)(in[0] & 0x3fffffff);
        s->chunk = (int32_t)(in[1] >> 32);
        s->offs = in[2];
        if (after) {
            s->n_views += (int32_t)(uint32_t)in[1];
            continue;
        }
        s->n_views = (int32_t)(uint32_t)in[1];
        s->n_children = 0;
        s->vleft = 0;
        if (!((in[0] >> 30) & 1))
            w->live[w->n_live++] = (int32_t)e;
    }
    k->n_ck = j;
}

/* A resumed walk's search for the last walk in the common tail (see
 * "Where a walk meets the last one"). */
typedef struct tail_try {
    int64_t shift;           /* tail_new - tail_old */
    size_t same;             /* entries below are the last graph's, byte for
                                byte, and where they were */
    size_t tail_new, tail_old;
    size_t j_first, j_last;  /* the last walk's checkpoints copied aside
                                (1-based), at positions ko >= tail_old with
                                ko + shift past `from` and before n */
    const uint64_t *ck;      /* their words, from j_first's */
    const size_t *ck_end;    /* where each ends, relative to ck */
    const int32_t *log_e_old;/* rule 2's log, the last graph's tensors */
    const uint64_t *fin;     /* the last walk's final marks (FIN_WORDS) */
    const uint64_t *suf;     /* per old checkpoint from j_first, per arena:
                                the highest end the last walk placed in its
                                first chunk after it */
    uint64_t *fin_out;       /* this walk's, when it stops in the tail */
    size_t next;             /* the next old checkpoint to compare with */
    size_t met;              /* where this walk stopped; 0: it did not */
} tail_try;

/* The position in this graph of the next old checkpoint after position i,
 * SIZE_MAX when none is left. */
static size_t tail_next(const kept_walk *w, tail_try *tt, size_t i)
{
    for (; tt->next <= tt->j_last; tt->next++) {
        size_t kn = (size_t)((int64_t)(w->k->n_leafs + tt->next * KEEP_EVERY) + tt->shift);
        if (kn > i)
            return kn;
    }
    return SIZE_MAX;
}

/* Whether this walk's state before node kn is the last walk's before ko =
 * kn - shift (old checkpoint tt->next), with this graph's tensor for each
 * of the last one's; then the final marks go to tt->fin_out. */
static bool tail_meets(kept_walk *w, tail_try *tt, size_t kn)
{
    replay *r = w->r;
    ggfit_galloc_keep *k = w->k;
    size_t jo = tt->next, ko = (size_t)((int64_t)kn - tt->shift);
    const uint64_t *in = tt->ck + (jo > tt->j_first ? tt->ck_end[jo - tt->j_first - 1] : 0);

    /* Rule 2's placements: those of tensors in the tail must be of the
     * same tensors (the log ranks are matched, so the addresses are). */
    const kept_placed *log = k->log.p;
    for (size_t x = 0; x < k->n_log; x++) {
        int32_t ne = log[x].e, oe = tt->log_e_old[x];
        if (((size_t)ne >= kn || (size_t)oe >= ko) && (int64_t)ne - tt->shift != oe)
            return false;
    }

    /* Arenas: the same chunks and free lists. The marks decide nothing in
     * a chunk that stays alone (rule 7 compares marks only between
     * chunks), so there the final mark follows from this walk's mark here
     * and the last walk's peak after ko; else they must be equal too. */
    const uint64_t *fin = tt->fin;
    uint64_t *out = tt->fin_out;
    for (size_t a = 0; a < w->n_arenas; a++, fin += FIN_WORDS, out += FIN_WORDS) {
        const arena *ar = &r->arenas[a];
        int nc = (int)*in++;
        if (nc != ar->n_chunks)
            return false;
        bool alone = nc == 1 && fin[0] == 1;
        memcpy(out, fin, FIN_WORDS * sizeof *out);
        for (int c = 0; c < nc; c++) {
            const chunk *ch = &ar->chunks[c];
            uint64_t ho = *in++;
            int nf = (int)*in++;
            if (nf != ch->n_free || memcmp(in, ch->free, (size_t)nf * sizeof ch->free[0]) != 0)
                return false;
            in += 2 * (size_t)nf;
            if (!alone) {
                if (ch->high != ho)
                    return false;
                continue;
            }
            /* From here both walks make the same requests at the same
             * addresses: final = max(mark here, the last walk's peak after
             * ko). */
            uint64_t pk = tt->suf[(jo - tt->j_first) * w->n_arenas + a];
            out[1] = ch->high > pk ? ch->high : pk;
        }
    }

    /* Tensors: the last walk's entries, mapped to this graph, must be this
     * walk's, in the same order (both sets are sorted by position, and the
     * mapping keeps the order of the entries it accepts). */
    size_t m_vs, m_fwd;
    size_t m = live_at(w, kn, &m_vs, &m_fwd);
    size_t n_e = m + m_vs + m_fwd;
    if (*in++ != n_e)
        return false;
    uint64_t *o = ggfit__buf_get(&k->scratch, 3 * n_e * sizeof *o);
    if (!o)
        return false;
    put_entries(w, kn, m, m_fwd, o);
    for (size_t x = 0; x < 3 * n_e; x += 3) {
        size_t eo = (size_t)(in[x] >> 32), en = (size_t)(o[x] >> 32);
        if (eo < tt->same)
            ;   /* byte for byte the same entry, at the same place */
        else if (eo >= tt->tail_old)
            eo = (size_t)((int64_t)eo + tt->shift);
        else
            return false;   /* between: its contents may differ */
        if (eo != en || (uint32_t)in[x] != (uint32_t)o[x] || in[x + 1] != o[x + 1] ||
            in[x + 2] != o[x + 2])
            return false;
    }
    return true;
}

/* Rules 3-6 from node `from` (n_leafs or a checkpoint's position), with a
 * checkpoint every KEEP_EVERY nodes; the views ahead are counted down as
 * the walk passes them. With tt, it stops where it meets the last walk
 * (tt->met). */
static ggfit_status walk_kept(kept_walk *w, size_t from, tail_try *tt)
{
    replay *r = w->r;
    const ggfit_gt *t = r->t;
    tstate *st = r->st;
    int rc;
    size_t grid = from, kn = tt ? tail_next(w, tt, from) : SIZE_MAX;
    /* Each node's sources as count_kept listed them: no empty slots. */
    const size_t *ref_at = w->k->ref_at.p;
    const int32_t *refs = w->k->refs.p, *ref = refs + ref_at[from];
    for (size_t i = from; i < r->n;) {
        if (i == grid) {
            if (i != from && w->ckpt)
                take_ckpt(w, i);
            grid += KEEP_EVERY;
        }
        if (i == kn) {
            if (tail_meets(w, tt, i)) {
                tt->met = i;
                return GGFIT_OK;
            }
            tt->next++;
            kn = tail_next(w, tt, i);
        }
        size_t to = grid < r->n ? grid : r->n;
        to = kn < to ? kn : to;
        for (; i < to; i++) {
            const ggfit_gt *ti = &t[i];
            const int32_t *end = refs + ref_at[i + 1];
            if (ti->view_src >= 0) {
                /* The view_src comes first in the references, when
                 * counted. */
                if (ti->op != GGFIT_OP_NONE)
                    st[*ref++].vleft--;
            } else if (!ti->allocated && !st[i].own &&
                       (rc = place_new(r, i, ti->backend)) != GGFIT_OK) {
                return rc;
            }
            if ((rc = release_refs(r, ref, end)) != GGFIT_OK)
                return rc;
            ref = end;
        }
    }
    return GGFIT_OK;
}

static inline bool placeable_input(const ggfit_gt *t)
{
    return (t->flags & GGFIT_TF_INPUT) && !t->allocated && t->view_src < 0;
}

/* Rule 2 in the suffix of a resumed graph: input e, first met counting node
 * pos, asks for t[e].size bytes on backend b. It must be the last call's
 * request of the same rank (*kk), which it then takes the address of. */
static bool pre_match(kept_walk *w, size_t e, int32_t b, size_t pos, size_t *kk)
{
    ggfit_galloc_keep *k = w->k;
    if (*kk >= k->n_log)
        return false;
    kept_placed *l = (kept_placed *)k->log.p + *kk;
    if (l->buffer != b || l->size != w->r->t[e].size ||
        ggfit__op_can_inplace(w->r->t[e].op))
        return false;
    ((uint8_t *)k->mark.p)[e] |= MARK_PLACED;
    l->pos = (int32_t)pos;
    l->e = (int32_t)e;
    ++*kk;
    return true;
}

/* The position D up to which the last walk (on n_old entries) and this one
 * do the same, given that both graphs agree on [0, S) (see above): 0 with
 * *why set when the walk must start over. Also checks rule 2's placements
 * in the suffix and takes them over (the log). */
static size_t kept_bound(kept_walk *w, size_t S, size_t n_old, int *why)
{
    replay *r = w->r;
    ggfit_galloc_keep *k = w->k;
    const ggfit_gt *t = r->t;
    size_t n = r->n, n_leafs = k->n_leafs;
    uint8_t *mark = k->mark.p;
    int32_t *held = k->held.p;
    const int32_t *refs = k->refs.p, *fwd = k->fwd.p;
    const size_t *ref_at = k->ref_at.p;
    kept_placed *log = k->log.p;
    size_t nh = 0;

    /* Rule 2: the last call's placements while counting [S, n_old) must be
     * this call's; none before S may be of a tensor past it. */
    size_t j0 = k->n_log, kk;
    while (j0 > 0 && (size_t)log[j0 - 1].pos >= S)
        j0--;
    bool pre_ok = !(j0 > 0 && (size_t)log[j0 - 1].max_e >= S);
    kk = j0;

    /* Which tensors before S each suffix holds (reads, or views with op
     * not NONE, as rule 2 counts them). */
    for (size_t x = ref_at[S]; x < ref_at[n_old]; x++) {
        int32_t e = refs[x];
        if ((size_t)e < S) {
            if (!mark[e])
                held[nh++] = e;
            mark[e] |= MARK_OLD;
        }
    }
    for (size_t i = S; i < n; i++) {
        const ggfit_gt *ti = &t[i];
        int32_t v = ti->view_src;
        if (v >= 0 && ti->op != GGFIT_OP_NONE && (size_t)v < S) {
            if (!mark[v])
                held[nh++] = v;
            mark[v] |= MARK_NEW;
        }
        if (pre_ok && placeable_input(ti) && !(mark[i] & MARK_PLACED))
            pre_ok = pre_match(w, i, ti->backend, i, &kk);
        for (unsigned j = 0; j < ti->n_src; j++) {
            int32_t p = ti->src[j];
            if (p < 0)
                continue;
            if ((size_t)p < S) {
                if (!mark[p])
                    held[nh++] = p;
                mark[p] |= MARK_NEW;
            } else if (pre_ok && placeable_input(&t[p]) && !(mark[p] & MARK_PLACED)) {
                pre_ok = pre_match(w, (size_t)p, ti->backend, i, &kk);
            }
        }
    }
    pre_ok &= kk == k->n_log;
    for (size_t j = j0; j < kk; j++)
        mark[log[j].e] = 0;

    /* Those held by one suffix only. Tensors with memory are never placed
     * or freed. */
    size_t n_x = 0;
    for (size_t x = 0; x < nh; x++) {
        int32_t e = held[x];
        uint8_t m = mark[e];
        mark[e] = 0;
        if ((m == MARK_OLD || m == MARK_NEW) && !t[e].allocated) {
            mark[e] = MARK_ONE;
            held[n_x++] = e;
        }
    }
    size_t d = S;
    for (size_t x = 0; x < k->n_fwd && (size_t)fwd[2 * x] < S; x++) {
        int32_t i = fwd[2 * x], p = fwd[2 * x + 1];
        if ((size_t)p >= S) {
            /* The node at i touches a tensor that may differ. */
            d = (size_t)i < d ? (size_t)i : d;
            pre_ok &= !placeable_input(&t[p]);
        } else if (mark[p] & MARK_ONE) {
            mark[p] |= MARK_FWD;
        }
    }

    /* Each such tensor's last consumer before S, scanning back (the walk
     * from D covers at least as many nodes). */
    size_t left = n_x, lo = n_leafs + KEEP_EVERY;
    for (size_t q = S; left && q-- > n_leafs && q >= lo;) {
        const ggfit_gt *tq = &t[q];
        for (unsigned j = 0; j < tq->n_src; j++) {
            int32_t p = tq->src[j];
            if (p >= 0 && (mark[p] & MARK_ONE)) {
                mark[p] = 0;
                left--;
                d = q < d ? q : d;
            }
        }
        /* No consumer at or after its own position: no decision on it
         * before it. */
        if ((mark[q] & (MARK_ONE | MARK_FWD)) == MARK_ONE) {
            mark[q] = 0;
            left--;
            d = q < d ? q : d;
        }
    }
    for (size_t x = 0; x < n_x; x++)
        mark[held[x]] = 0;
    if (!pre_ok) {
        *why = KEEP_WHY_PREPASS;
        return 0;
    }
    if (left || d < lo) {
        *why = KEEP_WHY_EARLY;
        return 0;
    }
    /* Rule 2's log from j0 on names this graph's tensors now. */
    for (size_t j = j0; j < k->n_log; j++) {
        int32_t before = j ? log[j - 1].max_e : -1;
        log[j].max_e = log[j].e > before ? log[j].e : before;
    }
    return d;
}

/* Copies aside the last walk's checkpoints this walk may meet it at (the
 * walk writes its own over them) and fills *tt; NULL when there are none
 * or out of memory. */
static tail_try *tail_setup(kept_walk *w, tail_try *tt, const ggfit_galloc_tail *tail,
                            size_t same, size_t n_ck_old, size_t from)
{
    ggfit_galloc_keep *k = w->k;
    size_t n_leafs = k->n_leafs, n = w->r->n;
    tt->shift = (int64_t)tail->tail_new - (int64_t)tail->tail_old;
    tt->same = same < tail->n_placed_same ? same : tail->n_placed_same;
    tt->tail_new = tail->tail_new;
    tt->tail_old = tail->tail_old;
    size_t jf = 1;
    while (jf <= n_ck_old) {
        size_t ko = n_leafs + jf * KEEP_EVERY;
        int64_t kn = (int64_t)ko + tt->shift;
        if (ko >= tt->tail_old && kn > (int64_t)from)
            break;
        jf++;
    }
    size_t jl = n_ck_old;
    while (jl >= jf && (int64_t)(n_leafs + jl * KEEP_EVERY) + tt->shift >= (int64_t)n)
        jl--;
    if (jf > jl)
        return NULL;
    const size_t *end = k->ck_end.p;
    size_t start = jf > 1 ? end[jf - 2] : 0, words = end[jl - 1] - start;
    uint64_t *ck = ggfit__buf_get(&k->ck_old, words * sizeof *ck);
    size_t *ce = ggfit__buf_get(&k->ck_old_end, (jl - jf + 1) * sizeof *ce);
    uint64_t *fo = ggfit__buf_get(&k->fin_new, w->n_arenas * FIN_WORDS * sizeof *fo);
    size_t na = w->n_arenas;
    uint64_t *suf = ggfit__buf_get(&k->pk_suf, (jl - jf + 1) * na * sizeof *suf);
    if (!ck || !ce || !fo || !suf)
        return NULL;
    /* The peak after old checkpoint x: the blocks after it, then the
     * walk's end. */
    const uint64_t *pk = k->pk.p, *pk_end = k->pk_end.p;
    for (size_t a = 0; a < na; a++) {
        uint64_t p = pk_end[a];
        for (size_t x = n_ck_old; x >= jf; x--) {
            if (x <= jl)
                suf[(x - jf) * na + a] = p;
            p = pk[(x - 1) * na + a] > p ? pk[(x - 1) * na + a] : p;
        }
    }
    tt->suf = suf;
    memcpy(ck, (const uint64_t *)k->ck.p + start, words * sizeof *ck);
    for (size_t x = jf; x <= jl; x++)
        ce[x - jf] = end[x - 1] - start;
    tt->j_first = tt->next = jf;
    tt->j_last = jl;
    tt->ck = ck;
    tt->ck_end = ce;
    tt->log_e_old = k->log_e_old.p;
    tt->fin = k->fin.p;
    tt->fin_out = fo;
    return tt;
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

/* Room for n per-tensor entries of size sz in b, keeping the first n_old. */
static void *per_tensor(ggfit__buf *b, size_t n_old, size_t n, size_t sz)
{
    return buf_grow(b, n_old * sz, n * sz);
}

ggfit_status ggfit__galloc_reserve_kept(const ggfit_gt *t, size_t n_leafs, size_t n_nodes,
                                        int n_backends, const ggfit_galloc_buft *bufts,
                                        uint64_t *size_out, ggfit_galloc_keep *k,
                                        const void *owner, uint32_t gen, size_t n_same,
                                        const ggfit_galloc_tail *tail, char **err)
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
    size_t n_old = why < 0 ? k->n : 0;   /* per-tensor entries to keep */

    size_t n_arenas = 0;
    for (int b = 0; b < n_backends; b++)
        n_arenas += bufts[b].same_as < 0;
    size_t bytes_arenas = n_arenas * sizeof(arena);
    char *mem = ggfit__buf_get(&k->arenas, bytes_arenas + (size_t)n_backends * sizeof(int));
    tstate *st = per_tensor(&k->st, n_old, n, sizeof *st);
    size_t *ref_at = per_tensor(&k->ref_at, n_old + 1, n + 1, sizeof *ref_at);
    int32_t *live = ggfit__buf_get(&k->live, n * sizeof *live);
    int32_t *held = ggfit__buf_get(&k->held, n * sizeof *held);
    /* Marks are kept 0 for every entry ever used, whatever this call
     * does. */
    size_t n_marked = k->n_marked > n ? k->n_marked : n;
    uint8_t *mark = per_tensor(&k->mark, k->n_marked, n_marked, 1);
    void *bt = why == KEEP_WHY_NEW || why == KEEP_WHY_SHAPE || !k->bufts.p
                   ? ggfit__buf_get(&k->bufts, bytes_bufts)
                   : k->bufts.p;
    size_t bytes_fin = n_arenas * FIN_WORDS * sizeof(uint64_t);
    uint64_t *fin = buf_grow(&k->fin, why < 0 ? bytes_fin : 0, bytes_fin);
    uint64_t *pk_end = buf_grow(&k->pk_end, why < 0 ? bytes_fin / FIN_WORDS : 0,
                                bytes_fin / FIN_WORDS);
    if (!mem || !st || !ref_at || !live || !held || !mark || !bt || !fin || !pk_end)
        return ggfit__fail(err, GGFIT_ENOMEM, "galloc: out of memory");
    if (n > k->n_marked) {
        memset(mark + k->n_marked, 0, n - k->n_marked);
        k->n_marked = n;
    }
    memcpy(bt, bufts, bytes_bufts);

    replay r = { .t = t, .n = n, .n_backends = n_backends, .trusted = true, .err = err,
                 .arenas = (arena *)(void *)mem, .arena_of = (int *)(void *)(mem + bytes_arenas),
                 .st = st };
    int rc = check_bufts(&r, bufts);
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

    kept_walk w = { .r = &r, .k = k, .n_arenas = n_arenas, .live = live,
                    .ordered = true };
    k->cap_ck_words = n * KEEP_WORDS_PER_TENSOR;
    size_t from = n_leafs, d = 0, j = 0, same = 0;
    /* A tail to meet the last walk in: not the whole graph, and past the
     * entries that are where they were (what tail_meets maps to itself). */
    bool try_tail = why < 0 && tail && tail->tail_new < n && tail->tail_old < n_old &&
                    tail->tail_new >= tail->n_placed_same &&
                    tail->tail_old >= tail->n_placed_same;
    if (why < 0) {
        same = n_same < n ? n_same : n;
        same = same < n_old ? same : n_old;
        /* A resume scans the suffix once more to find D: worth it only
         * when it skips some of the graph. */
        if (same < n_leafs + KEEP_EVERY || same - n_leafs < (n - n_leafs) / 8) {
            why = KEEP_WHY_EARLY;
        } else {
            if (try_tail) {
                /* kept_bound renames rule 2's log to this graph's tensors;
                 * the tail's comparison needs the last graph's. */
                int32_t *le = ggfit__buf_get(&k->log_e_old, (k->n_log + 1) * sizeof *le);
                const kept_placed *log = k->log.p;
                if (!le)
                    try_tail = false;
                for (size_t x = 0; le && x < k->n_log; x++)
                    le[x] = log[x].e;
            }
            d = kept_bound(&w, same, n_old, &why);
        }
        j = why < 0 ? (d - n_leafs) / KEEP_EVERY : 0;
        j = j < k->n_ck ? j : k->n_ck;
        if (why < 0 && j == 0)
            why = KEEP_WHY_EARLY;
    }
    size_t n_ck_old = k->n_ck;
    if (why < 0) {
        /* Resume: from p on, as rule 2 left them; the checkpoint over that
         * and the last walk's final state; this graph's counts from p. */
        from = n_leafs + j * KEEP_EVERY;
        restore_ckpt(&w, j, from, false);
        const int32_t *fwd = k->fwd.p;
        size_t m = 0;
        while (m < k->n_fwd && (size_t)fwd[2 * m] < from)
            m++;
        k->n_fwd = m;
    } else {
        memset(st, 0, n_leafs * sizeof *st);
        memset(ref_at, 0, (n_leafs + 1) * sizeof *ref_at);
        k->n_log = 0;
        k->n_fwd = 0;
        k->n_ck = 0;
        /* Rule 1: leafs, each on its own backend. */
        for (size_t i = 0; i < n_leafs; i++) {
            if (t[i].size > SIZE_LIMIT)
                return fail_limit(&r, i, "size above 2^62 bytes");
            if ((rc = place(&r, i, t[i].backend)) != GGFIT_OK)
                return rc;
        }
    }
    if ((rc = count_kept(&w, from, why >= 0)) != GGFIT_OK) {
        /* Marks are 0 between calls: clear those of states set ahead. */
        memset(mark + from, 0, n - from);
        return rc;
    }
    if (why < 0) {
        /* What rule 2 placed from `from` on (fields count_kept leaves). */
        const kept_placed *log = k->log.p;
        size_t jf = k->n_log;
        while (jf > 0 && (size_t)log[jf - 1].pos >= from)
            jf--;
        if (jf > 0 && (size_t)log[jf - 1].max_e >= from)
            jf = 0;   /* one placed before its position, past from: look at all */
        for (; jf < k->n_log; jf++) {
            const kept_placed *l = &log[jf];
            if ((size_t)l->e < from)
                continue;
            tstate *s = &st[l->e];
            s->buffer = l->buffer;
            s->chunk = l->chunk;
            s->offs = l->offs;
            s->own = true;
        }
        restore_ckpt(&w, j, from, true);
    }
    w.ckpt = w.ordered;
    tail_try tt = { 0 }, *ttp = NULL;
    if (why < 0 && try_tail && w.ordered)
        ttp = tail_setup(&w, &tt, tail, same, n_ck_old, from);
    if ((rc = walk_kept(&w, from, ttp)) != GGFIT_OK)
        return rc;
    /* The first chunks' peaks after the last checkpoint: when the walk
     * stopped, with the last walk's after where it met it. */
    for (size_t a = 0; a < n_arenas; a++) {
        const arena *ar = &r.arenas[a];
        uint64_t p = ar->n_chunks ? ar->chunks[0].peak : 0;
        if (ttp && tt.met) {
            uint64_t q = tt.suf[(tt.next - tt.j_first) * n_arenas + a];
            p = q > p ? q : p;
        }
        pk_end[a] = p;
    }
    if (ttp && tt.met) {
        /* The walk stopped where it met the last one: the rest is the
         * last walk's, whose final marks tail_meets carried over. */
        ggfit__buf sw = k->fin;
        k->fin = k->fin_new;
        k->fin_new = sw;
        fin = k->fin.p;
    } else {
        for (size_t a = 0; a < n_arenas; a++) {
            const arena *ar = &r.arenas[a];
            uint64_t *f = fin + a * FIN_WORDS;
            f[0] = (uint64_t)ar->n_chunks;
            for (int c = 0; c < ar->n_chunks; c++)
                f[1 + c] = ar->chunks[c].high;
        }
    }
    for (int b = 0; b < n_backends; b++) {
        size_out[b] = 0;
        if (bufts[b].same_as >= 0)
            continue;   /* counted at the first backend of its type */
        const uint64_t *f = fin + (size_t)r.arena_of[b] * FIN_WORDS;
        for (uint64_t c = 0; c < f[0]; c++)
            size_out[b] += f[1 + c];
    }

    k->valid = true;
    k->ordered = w.ordered;
    k->owner = owner;
    k->gen = gen;
    k->n = n;
    k->n_leafs = n_leafs;
    k->n_backends = n_backends;
    ggfit_galloc_keep_stats *s = &k->stats;
    s->n_calls++;
    s->n_nodes += n_nodes;
    s->last_bound = why < 0 ? d : 0;
    s->last_from = from;
    if (why < 0) {
        s->n_resumed++;
        s->n_skipped += from - n_leafs;
        if (ttp && tt.met) {
            s->n_tail++;
            s->n_tail_skipped += n - tt.met;
        }
    } else {
        s->n_full[why]++;
    }

    if (env_on("GGFIT_GALLOC_VERIFY")) {
        /* Every kept call against a plain replay of the same graph. */
        uint64_t full[1024];
        char *e2 = NULL;
        int rc2 = reserve(t, n_leafs, n_nodes, n_backends, bufts, full, NULL, true, &e2);
        /* Out of memory checks nothing (the tests' failing allocator). */
        if (rc2 == GGFIT_ENOMEM) {
            ggfit_free(e2);
            return GGFIT_OK;
        }
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
