/*
 * sched.h - a model of ggml's backend scheduler (ggml_backend_sched_split_graph
 * in ggml-backend.cpp), internal.
 *
 * llama.cpp does not hand its graph to ggml-alloc directly. The scheduler
 * first gives every tensor a backend, cuts the node list into splits that
 * run on one backend each, and for every split input that lives where the
 * split's backend cannot read it inserts a copy (preceded by a view of the
 * source that keeps the source alive until the copy is made). ggml-alloc
 * then sizes each backend's compute buffer on that rewritten graph, so the
 * copies and the backend choice are part of the bytes llama.cpp reports.
 * This is that rewrite, written from the rules (not from ggml's code); its
 * output is the graph format of galloc.h, ready for ggfit__galloc_reserve.
 *
 * Backends are in scheduler order: the model's devices, then accelerators
 * (BLAS), then the CPU, which must be last. A lower index is a higher
 * priority. "Supports buffer type" is the device's supports_buft; "supports
 * the op" is supports_op, which the caller states per tensor as the set of
 * backends that cannot run it (usually none).
 *
 * The rules, in the order the scheduler applies them:
 *  1. Each leaf, then each node, that has no backend yet (the caller may
 *     pre-assign some: llama.cpp pins the tensors its graph callback names
 *     "norm" or "l_last" with a layer index, i.e. "norm-<il>", to the
 *     layer's device when every layer is offloaded or the ubatch has fewer
 *     than 32 tokens; with -nkvo, the attention output to the CPU; a reset
     of the scheduler, which ggml_backend_sched_reserve_size does before it
     splits, forgets those pins) gets one from
 *     where its data already is: a tensor with memory (or a view of one) goes
 *     to the first backend that supports that buffer type and the op; a
 *     graph input goes to the CPU; any other op except ROPE and
 *     FLASH_ATTN_EXT follows its first source that is a weight (lives in a
 *     weights buffer; views of weights do not count): the first backend that
 *     supports the weight's buffer type and the op, unless that is the CPU,
 *     the weight is in host memory and op offload is on, in which case the
 *     first higher-priority backend that supports the op and wants to offload
 *     it (CUDA: batch >= 32) takes it. Otherwise no backend yet.
 *  2. Four sweeps over the nodes, skipping view ops (VIEW, RESHAPE, PERMUTE,
 *     TRANSPOSE), carry a backend to the unassigned nodes next to assigned
 *     ones (when the backend supports the op): down then up carrying only
 *     non-CPU backends (a CPU node stops the carry), then down then up
 *     carrying any backend.
 *  3. Each non-view node still unassigned goes to the backend, among those
 *     that support its op, with the most sources it can read in place (first
 *     such backend on ties). An assigned node moves to a higher-priority
 *     backend that has the same compute buffer type, supports the op, and
 *     can read every source.
 *  4. In node order: a view takes its view_src's backend; each unassigned
 *     source takes its view_src's backend (views) or the node's; a node still
 *     unassigned takes the first backend that supports its op.
 *  5. Splits: from the first non-view node, a new split starts at each
 *     non-view node whose backend differs from the current split's, or that
 *     uses a weight the split's backend cannot read (so the previous weight
 *     copies can be freed), or that needs a new input when the split already
 *     has as many as its capacity (30, doubled when one node overflows it).
 *     View ops stay in the split they follow. Each source of a non-view node
 *     on another backend whose memory the split's backend cannot read gets a
 *     copy on the split's backend; one copy per (tensor, backend) for the
 *     whole graph, made by the first split that needs it and listed as that
 *     split's input, and the node reads the copy instead.
 *  6. The graph for ggml-alloc: per split, for each input, a view of the
 *     input (op NONE, on the input's backend) then the copy (on the split's
 *     backend), then the split's nodes; the leafs unchanged.
 *  With pipeline parallelism (n_copies > 1) every copy exists n_copies times
 *  and is flagged input and output; graph inputs used by a non-view node get
 *  n_copies - 1 such copies too (the current copy is the tensor itself, which
 *  is flagged output as well). All of them are leafs, ahead of the original
 *  ones: graph-input copies, then each split's input copies. ggml lists the
 *  current copy of a split input among both leafs and nodes; ggml-alloc
 *  places it as a leaf and its node entry does nothing, so it is emitted
 *  only as a leaf (the view before it stays a node), and a graph input that
 *  reappears among the original leafs is not emitted twice (one that is a
 *  node, never the case in llama.cpp, stays only among the nodes).
 *
 * What this model leaves out: backends that reorder a split's nodes
 * (graph_optimize, which some GPU backends implement; CPU and RPC do not, as
 * the recorded graphs confirm); a split's input
 * capacity carried over from an earlier graph (ggml keeps the grown capacity
 * across calls; it only matters for a split with more than 30 inputs); the
 * size of a copy on a buffer type that pads (CUDA quantized rows): a copy has
 * its source's size.
 */
#ifndef GGFIT_SCHED_H
#define GGFIT_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml/galloc.h"

#define GGFIT_SCHED_MAX_BACKENDS 16  /* GGML_SCHED_MAX_BACKENDS */
#define GGFIT_SCHED_MAX_BUFTS 32     /* bits of ggfit_sched_backend.bufts */
#define GGFIT_SCHED_MAX_COPIES 4     /* GGML_SCHED_MAX_COPIES */
#define GGFIT_SCHED_SPLIT_INPUTS 30  /* GGML_SCHED_MAX_SPLIT_INPUTS */
#define GGFIT_SCHED_NAME 64          /* GGML_MAX_NAME */

/* One buffer type. */
typedef struct ggfit_sched_buft {
    const char *name;     /* for messages; may be NULL */
    bool is_host;         /* ggml_backend_buft_is_host: CPU memory */
    uint64_t alignment;   /* for ggml-alloc */
    uint64_t max_size;    /* for ggml-alloc; UINT64_MAX: unlimited */
} ggfit_sched_buft;

/* When a backend takes an op whose weight is in host memory (offload_op). */
typedef enum ggfit_sched_offload {
    GGFIT_OFFLOAD_NEVER,  /* CPU, RPC, BLAS: never */
    GGFIT_OFFLOAD_BATCH,  /* CUDA, HIP, SYCL: any op but GET_ROWS whose batch
                             (MUL_MAT: ne[1]; MUL_MAT_ID, ROPE: ne[2]; else
                             rows) is at least offload_min_batch */
    GGFIT_OFFLOAD_MATMUL, /* Metal: MUL_MAT and MUL_MAT_ID only, same batch */
} ggfit_sched_offload;

/* One backend, in scheduler order; the last must be the CPU. */
typedef struct ggfit_sched_backend {
    const char *name;     /* ggml_backend_name: copies are "<name>#<tensor>#<c>" */
    int32_t buft;         /* its compute buffer type (index into bufts) */
    uint32_t bufts;       /* bit k set: it can use buffer type k (supports_buft);
                             must include buft */
    bool is_cpu;
    ggfit_sched_offload offload;
    int64_t offload_min_batch; /* 32 in ggml (GGML_OP_OFFLOAD_MIN_BATCH) */
} ggfit_sched_backend;

/* One tensor of the graph as llama.cpp builds it. The graph builder
 * (graph.h) makes its tensors of this type, so a built graph goes to the
 * scheduler as it is; the fields marked "builder" are its own and the
 * scheduler ignores them. */
struct ggfit_tensor_info;
typedef struct ggfit_st {
    const char *name;     /* ggml's name, or NULL (only used in messages and
                             to name copies) */
    int64_t ne[4];
    uint64_t nb[4];       /* builder: strides in bytes, as ggml */
    uint64_t size;        /* bytes (ggml_nbytes, or the buffer type's alloc
                             size when it pads) */
    uint64_t view_offs;   /* bytes into view_src */
    const struct ggfit_tensor_info *weight; /* builder: the model tensor of a
                             weight */
    int32_t src[GGFIT_GALLOC_MAX_SRC]; /* sources in slot order; -1: empty */
    int32_t view_src;     /* index of the viewed tensor (the root, never a
                             view); -1: not a view */
    int32_t il;           /* builder: the layer of a cache or a FA node, -1 */
    int32_t pin_il;       /* builder: pinned to this layer's backend, which
                             follows the placement; -1 */
    uint32_t type;        /* ggfit_type */
    uint32_t flags;       /* GGFIT_TF_* */
    uint32_t unsupported; /* bit b set: backend b cannot run this op */
    int16_t buft;         /* buffer type its memory is in (weights, KV cache,
                             recurrent state); -1: none. Ignored for views,
                             which live in their view_src's buffer */
    int8_t backend;       /* pre-assigned backend
                             (ggml_backend_sched_set_tensor_backend); -1 */
    uint8_t n_src;        /* slots used, <= GGFIT_GALLOC_MAX_SRC */
    uint8_t op;           /* ggfit_op */
    bool weights;         /* its buffer is a weights buffer (usage WEIGHTS) */
    bool tied;            /* builder: the tied output's own copy of
                             token_embd, in the output's buffer type */
    bool dup;             /* builder: one of a per-layer weight's copies, one
                             per buffer type (rope factors) */
} ggfit_st;

struct ggfit_sched_prep;
struct ggfit__buf;

/* The scheduler's input: the graph and the backends. */
typedef struct ggfit_sched_in {
    const ggfit_st *t;    /* the tensors; sources and view_src index into t */
    size_t n_tensors;     /* entries of t (those in no list are ignored) */
    const int32_t *leafs; /* ggml's leaf list: indices into t */
    const int32_t *nodes; /* ggml's node list, in execution order. With both
                             lists NULL, t is n_leafs leafs then n_nodes nodes
                             (n_tensors is then ignored) */
    size_t n_leafs, n_nodes;
    const ggfit_sched_backend *backends;
    int n_backends;       /* 1 .. GGFIT_SCHED_MAX_BACKENDS */
    const ggfit_sched_buft *bufts;
    int n_bufts;          /* 1 .. GGFIT_SCHED_MAX_BUFTS */
    int n_copies;         /* 1, or GGFIT_SCHED_MAX_COPIES with pipeline
                             parallelism (llama.cpp: several GPUs, all layers
                             offloaded, split mode layer, no -ot) */
    int cur_copy;         /* 0 for llama.cpp's reserve */
    bool op_offload;      /* llama.cpp's op_offload (default true; --no-op-offload) */
    const struct ggfit_sched_prep *prep; /* NULL, or ggfit__sched_prepare's
                             work for this graph (lists given, not dense) */
    bool for_galloc;      /* the output is only what ggml-alloc places or
                             frees: tensors with memory (weights, caches, views
                             of them, the views that keep them alive) are left
                             out, and a source that is one reads -1. ggml-alloc
                             never places, frees or hands on such a tensor, so
                             the bytes are the same; the full graph is what is
                             compared with llama.cpp's */
    bool backends_only;   /* rules 1-4 only: the output has backend_of and
                             no graph (llama.cpp's -fa auto probe looks no
                             further) */
    struct ggfit__buf *work; /* NULL, or GGFIT_SCHED_WORK buffers the caller
                             keeps between splits for the scratch and the
                             output, which then borrows them: it stays valid
                             until the next split with the same buffers */
} ggfit_sched_in;

#define GGFIT_SCHED_WORK 3

/* What the scheduler works out from a graph's structure alone: the checks
 * of the lists, sources and views, the non-view nodes, and which tensors
 * rule 1 can decide. It stays valid while the lists, sources, views, ops,
 * flags, pre-assigned backends and weights flags stay the same and each
 * tensor keeps having memory (buft >= 0) or not; only buffer types and the
 * backends may change. A split that finds a tensor gained or lost memory
 * works without it. */
typedef struct ggfit_sched_prep {
    size_t n;             /* entries of t */
    size_t slots;         /* source slots of non-view nodes */
    uint8_t *tf;          /* per tensor: listed as leaf / node, has memory */
    int32_t *nv;          /* the non-view nodes, in node order */
    size_t n_nv;
    int32_t *rule1;       /* leafs then nodes that rule 1 may place */
    int32_t *rule1_by;    /* per rule1 entry: the tensor that decides, the
                             one with its memory or its first weight */
    uint8_t *rule1_kind;  /* per rule1 entry: GGFIT_RULE1_* */
    size_t n_rule1;
} ggfit_sched_prep;

/* How rule 1 places a tensor the prep lists (see backend_from_cur). */
enum {
    GGFIT_RULE1_MEMORY,   /* where rule1_by's memory is */
    GGFIT_RULE1_INPUT,    /* a graph input: the CPU */
    GGFIT_RULE1_WEIGHT,   /* where its first weight, rule1_by, is */
};

/* Fills *prep for in's graph (lists required); GGFIT_EINVAL for what
 * ggfit__sched_split rejects, GGFIT_ENOMEM. Free with ggfit__sched_prep_free. */
ggfit_status ggfit__sched_prepare(const ggfit_sched_in *in, ggfit_sched_prep *prep, char **err);
void ggfit__sched_prep_free(ggfit_sched_prep *prep);

/* What an output tensor is, next to the input tensor it derives from. */
enum {
    GGFIT_SCHED_ORIG = -1, /* the input tensor itself */
    GGFIT_SCHED_DEP = -2,  /* the view that keeps a split input alive */
    /* >= 0: copy number c of the input tensor on its backend */
};

/* The scheduler's output. */
typedef struct ggfit_sched_out {
    ggfit_gt *t;          /* n_leafs leafs then n_nodes nodes, for galloc */
    size_t n_leafs, n_nodes;
    int32_t *origin;      /* per output tensor: the input tensor (index into
                             in->t) it is, views or copies */
    int8_t *kind;         /* per output tensor: GGFIT_SCHED_ORIG, _DEP or the
                             copy number */
    int32_t *backend_of;  /* per input tensor (index into in->t): the backend
                             it was given; -1 for tensors not in the graph */
    int n_splits;
    int n_backends;
    ggfit_galloc_buft galloc[GGFIT_SCHED_MAX_BACKENDS]; /* per backend: its
                             compute buffer type, for ggfit__galloc_reserve
                             (backends sharing one share an allocator) */
    int8_t *copy_backend; /* per output tensor of kind >= 0: the backend
                             of a split input's copy; -1 for a graph input's
                             extra copies, which stay on its backend */
    bool borrowed;        /* the memory is the caller's work buffer */
} ggfit_sched_out;

/* Runs the scheduler on in and fills *out (one allocation, released with
 * ggfit__sched_free). Returns GGFIT_OK; GGFIT_EINVAL for a malformed input
 * (an index out of range, a tensor listed twice, a source or view_src not in
 * the graph, a leaf with sources, the last backend not the CPU, a backend that
 * cannot use its own buffer type) and where ggml aborts (a tensor with memory that no
 * backend can run, a tensor left without a backend); GGFIT_ELIMIT past 2^31
 * tensors; GGFIT_ENOMEM. On failure *err (when err is not NULL) is a message
 * the caller frees with ggfit_free(), and *out is empty. */
ggfit_status ggfit__sched_split(const ggfit_sched_in *in, ggfit_sched_out *out, char **err);

/* Frees what ggfit__sched_split allocated; *out may be empty. */
void ggfit__sched_free(ggfit_sched_out *out);

/* Writes ggml's name for output tensor i into name: the input's own name,
 * "<name> (view)" for a dependency view, "<backend>#<name>#<c>" for a copy,
 * truncated to 63 characters as ggml does. */
void ggfit__sched_name(const ggfit_sched_in *in, const ggfit_sched_out *out, size_t i,
                       char name[GGFIT_SCHED_NAME]);

#endif
