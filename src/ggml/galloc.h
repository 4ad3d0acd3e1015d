/*
 * galloc.h - a model of ggml's graph allocator (ggml-alloc.c), internal.
 *
 * llama.cpp sizes each backend's compute buffer by handing one graph to
 * ggml_gallocr_reserve_n (through ggml_backend_sched): ggml-alloc walks the
 * graph in execution order, places every tensor it owns in a per-backend
 * address space with a best-fit free list, frees a tensor after its last
 * consumer runs, and reports each address space's high-water mark. The
 * compute bytes llama.cpp prints are those marks, so reproducing them to the
 * byte means replaying the same walk with the same rules; this file is that
 * replay, written from the rules (not from ggml's code).
 *
 * The graph is one array of ggfit_gt, as the scheduler passes it: the n_leafs
 * leafs first, then the n_nodes nodes in execution order (copies the
 * scheduler inserts between backends included, as ordinary nodes). Sources
 * and view sources are indices into the same array, so a graph builder fills
 * the array directly and the replay does no lookups.
 *
 * The rules, in the order the walk applies them:
 *  1. Every leaf is allocated first, on its own backend, in leaf order.
 *  2. A pass over the nodes counts each tensor's consumers (every src slot
 *     counts, so a tensor used twice by one node has two) and each tensor's
 *     views (nodes with a view_src, except op NONE: the scheduler's
 *     dependency views do not keep their source alive). Graph inputs met on
 *     the way (flag INPUT, as a node or as a source) are allocated then, on
 *     the consuming node's backend, so they sit below everything else.
 *  3. For each node in order: its sources are allocated if they are not yet
 *     (on the node's backend), then the node itself. A tensor is never
 *     allocated when it already has memory (`allocated`: weights, KV cache)
 *     or is a view (it lives in its view_src's memory).
 *  4. In-place: a node whose op may run in place (ggfit__op_can_inplace)
 *     takes over the memory of its first source, in src order, that galloc
 *     itself allocated (so never a view, a weight or a cache), is not an
 *     OUTPUT, has the node's type and shape (hence the same strides: both
 *     are contiguous), and has exactly one consumer left (this node) and no
 *     views. The node then lives on that source's backend, and any tail the
 *     node does not need is freed.
 *  5. Otherwise the node gets fresh memory on its backend (rule 7).
 *  6. After a node runs, each source loses one consumer; a source left with
 *     no consumers and no views is freed if galloc owns it. A view source
 *     instead drops one view from its view_src, which is freed once it has
 *     neither consumers nor views. OUTPUT tensors are never freed.
 *  7. Each backend's address space is up to 16 chunks. A request, rounded
 *     up to the alignment, takes the smallest free block that fits among the
 *     blocks that are not a chunk's last (ties: the later block; chunks are
 *     scanned in order and each restarts the comparison), else the last
 *     block of the chunk whose high-water mark it extends least (or, when
 *     none needs to grow, fits most tightly), else a new chunk of max_size
 *     (at least the request; the 16th is unbounded). Freed bytes merge with
 *     adjacent free blocks. A chunk's size is its high-water mark, and a
 *     backend's size is the sum over its chunks.
 */
#ifndef GGFIT_GALLOC_H
#define GGFIT_GALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggfit.h"
#include "ggml/ops.h"

#define GGFIT_GALLOC_MAX_SRC 10           /* GGML_MAX_SRC */
#define GGFIT_GALLOC_MAX_CHUNKS 16        /* buffers per backend (ggml vbuffer) */
#define GGFIT_GALLOC_MAX_FREE_BLOCKS 256  /* free blocks per chunk, as ggml */

/* One tensor of the graph. */
typedef struct ggfit_gt {
    uint64_t size;        /* bytes its backend's buffer type asks for
                             (ggml_backend_buft_get_alloc_size): ggml_nbytes
                             on CPU, RPC-to-CPU and Metal, more on CUDA for
                             some quantized tensors; before alignment */
    int64_t ne[4];        /* shape; with type, decides in-place reuse */
    uint32_t type;        /* ggfit_type */
    uint32_t flags;       /* GGFIT_TF_* */
    int32_t backend;      /* scheduler backend (buffer) index; -1 if none */
    int32_t view_src;     /* index of the tensor whose memory this one views
                             (ggml keeps the root, never a view); -1: not a
                             view */
    uint64_t view_offs;   /* bytes into view_src; informational */
    int32_t src[GGFIT_GALLOC_MAX_SRC]; /* sources in ggml's slot order; -1 or
                                          slots past n_src are empty */
    uint8_t n_src;        /* slots used, <= GGFIT_GALLOC_MAX_SRC */
    uint8_t op;           /* ggfit_op */
    bool allocated;       /* already has memory (weights, KV cache, views of
                             them): galloc neither places nor frees it */
    bool strided;         /* a split input's copy that keeps a strided
                             source's strides (ggml_dup_tensor_layout): no
                             node has its layout, so none reuses it */
} ggfit_gt;

/* One backend's buffer type, as ggml-alloc sees it. */
typedef struct ggfit_galloc_buft {
    uint64_t alignment;   /* a power of two; every request is rounded up */
    uint64_t max_size;    /* largest single buffer (chunk); UINT64_MAX when
                             unlimited (CPU, CUDA) */
    int32_t same_as;      /* index of an earlier backend with the same buffer
                             type, whose allocator (alignment, max_size and
                             address space) this one then shares; -1 */
} ggfit_galloc_buft;

/* Replays ggml_gallocr_reserve_n on the graph t[0 .. n_leafs + n_nodes) (leafs
 * first) over n_backends buffer types and stores in size_out[b] the bytes
 * ggml-alloc reserves for backend b: the sum of its chunks' high-water marks.
 * A backend that shares a buffer type with an earlier one (same_as) reports
 * 0, its bytes being counted at the first, as ggml_gallocr_reserve_n_size
 * does. The graph is not modified; the replay's scratch state is one block,
 * kept in *work when the caller gives one (reused by the next call), else
 * allocated and freed before return.
 *
 * Returns GGFIT_OK; GGFIT_EINVAL for a malformed graph (an index out of
 * range, a tensor to allocate without a backend, a bad alignment);
 * GGFIT_ELIMIT when a chunk would need more than 256 free blocks or a size
 * exceeds 2^62 (ggml aborts on the first; neither happens in real graphs);
 * GGFIT_ENOMEM. On failure *err (when err is not NULL) is set to a message
 * the caller frees with ggfit_free(), and size_out is left undefined. */
struct ggfit__buf;
ggfit_status ggfit__galloc_reserve(const ggfit_gt *t, size_t n_leafs, size_t n_nodes,
                                   int n_backends, const ggfit_galloc_buft *bufts,
                                   uint64_t *size_out, struct ggfit__buf *work, char **err);

/* The same for a graph the scheduler made (ggfit__sched_split's output),
 * whose indices are in range by construction: only the sizes are checked. */
ggfit_status ggfit__galloc_reserve_trusted(const ggfit_gt *t, size_t n_leafs, size_t n_nodes,
                                           int n_backends, const ggfit_galloc_buft *bufts,
                                           uint64_t *size_out, struct ggfit__buf *work,
                                           char **err);

#endif
