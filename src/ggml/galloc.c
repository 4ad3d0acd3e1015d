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
    uint64_t end = *offs_out + size;
    if (end > c->high)
        c->high = end;
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
