/*
 * sched_impl.h - what sched.c (the split from scratch) and sched_keep.c
 * (the split kept, and resumed from a kept one) share: the scheduler's
 * working state, the kept state, and the steps of a split, which
 * sched_keep.c composes with what it keeps and runs again from a position
 * on part of the graph. Internal to src/ggml.
 */
#ifndef GGFIT_SCHED_IMPL_H
#define GGFIT_SCHED_IMPL_H

#include "base/base.h"
#include "ggml/sched.h"
#include "ggml/sched_keep.h"

/* The steps sched_keep.c composes, named for the objects (namespace.h's rule). */
#define backend_masks     ggfit__sched_backend_masks
#define backends_of_list  ggfit__sched_backends_of_list
#define split_begin       ggfit__sched_split_begin
#define split_end         ggfit__sched_split_end
#define rule_1            ggfit__sched_rule_1
#define sweep             ggfit__sched_sweep
#define settle_from       ggfit__sched_settle_from
#define rule_4_from       ggfit__sched_rule_4_from
#define split_first       ggfit__sched_split_first
#define split_nodes       ggfit__sched_split_nodes
#define count_out         ggfit__sched_count_out
#define output_begin      ggfit__sched_output_begin
#define place_leafs       ggfit__sched_place_leafs
#define place_split       ggfit__sched_place_split
#define output_graph      ggfit__sched_output_graph
#define output_backends   ggfit__sched_output_backends
#define fill_range        ggfit__sched_fill_range
#define carve             ggfit__sched_carve

/* The copies of one tensor on one backend (ggml's tensor_copy(t, backend, c)
 * for every c at once). Records are made in rule 5 in node order, so each
 * split's inputs are a contiguous run of them. */
typedef struct copy_rec {
    int32_t tensor;       /* the source tensor */
    int32_t next;         /* next record of the same tensor; -1 */
    int32_t pos;          /* output index of copy 0; the others follow it */
    int32_t pos_cur;      /* output index of the copy consumers read */
    int8_t backend;
} copy_rec;

typedef struct split {
    int32_t backend;
    int32_t k_start, k_end;   /* its nodes: positions [k_start, k_end) of the
                                 node list */
    int32_t rec_first;        /* its inputs: records [rec_first, +n_inputs) */
    int32_t n_inputs;
    int32_t capacity;         /* ggml's inputs_capacity */
} split;

enum {
    TF_LEAF = 1,          /* in the leaf list */
    TF_NODE = 2,          /* in the node list */
    TF_GRAPH_INPUT = 4,   /* listed among the graph inputs (n_copies > 1) */
    TF_EMITTED = 8,       /* already placed in the output */
    TF_MEM = 16,          /* prep: it had memory (buft >= 0) */
    TF_WEIGHT = 32,       /* a weight as the scheduler sees one (is_weight) */
    TF_LATE = 64,         /* keep: a leaf rule 1 leaves to rule 4 */
};

/* A resume's marks, per tensor (ggfit_sched_keep.mark). */
enum {
    KEEP_CHANGED = 1,     /* its buffer type or backend changed */
    KEEP_VIEW = 2,        /* a view of a tensor that changed */
};

/* Per node position, after rule 1 (ggfit_sched_keep.at). */
enum {
    AT_ANCHOR = 1,        /* a non-view node rule 1 placed */
    AT_LATE_VIEW = 2,     /* a view rule 1 left unassigned: rule 4 places it */
    AT_VIEW = 4,          /* a view */
};

typedef struct sched {
    const ggfit_sched_in *in;
    const ggfit_st *t;
    size_t n;                 /* entries of t */
    const int32_t *leafs, *nodes;
    size_t n_leafs, n_nodes;
    int nb;                   /* backends */
    int cpu;                  /* the last backend */
    char **err;

    int8_t *be;               /* per tensor: backend; -1 */
    int8_t *mb;               /* per tensor: the buffer type its memory is in
                                 (mem_buft); -1 */
    uint8_t *tf;              /* per tensor: TF_* */
    int32_t *head;            /* per tensor: first copy record; -1 */
    int32_t *pos;             /* per tensor: output index; -1 */
    int32_t *graph_inputs;    /* n_copies > 1: inputs in order of first use */
    int32_t n_graph_inputs;
    const int32_t *nv;        /* the non-view nodes, in node order */
    size_t n_nv;
    int32_t *nv_k;            /* and their node positions */
    int32_t *nv_buf;          /* where they are listed without a prep */
    const int32_t *rule1;     /* with a prep: what rule 1 may place; else NULL */
    const int32_t *rule1_by;  /* and what decides each (ggfit_sched_prep) */
    const uint8_t *rule1_kind;
    size_t n_rule1;
    uint32_t buft_backends[GGFIT_SCHED_MAX_BUFTS]; /* per buffer type: bit b
                                 set when backend b can use it */
    uint32_t shares_up;       /* bit b set when a higher-priority backend has
                                 backend b's compute buffer type */
    uint32_t offloaders;      /* bit b set when backend b may take an op whose
                                 weight is in host memory (offload_op) */
    uint32_t bufts_of[GGFIT_SCHED_MAX_BACKENDS]; /* per backend: its bufts */
    int32_t buft_of[GGFIT_SCHED_MAX_BACKENDS];   /* and its compute buft */
    copy_rec *rec;
    int32_t n_rec, max_rec;
    int32_t *slot_of;         /* per non-view node: its first source slot */
    uint16_t *rewired;        /* per non-view node: bit j set when rule 5
                                 rewired source j to a copy (its srec); 0 for
                                 the other tensors */
    int32_t *srec;            /* per source slot that rule 5 rewired: the copy
                                 record it reads */
    split *splits;
    int32_t n_splits;
    int8_t *cbe;              /* the output's copy_backend */
    struct ggfit__buf *work;  /* the scratch's buffers (GGFIT_SCHED_WORK), or
                                 NULL: split_end frees it */
    void *scratch;            /* the per-tensor block (rec is the other) */
} sched;

/* ------------------------------------------------------------------------
 * The kept state (see sched_keep.h)
 * ---------------------------------------------------------------------- */

#define KEEP_EVERY 32     /* node positions between checkpoints of rule 5 */
_Static_assert((KEEP_EVERY & (KEEP_EVERY - 1)) == 0, "KEEP_EVERY is a power of two");

/* Rule 5's state before node position k. */
typedef struct ckpt {
    int32_t k;
    int32_t n_splits, n_rec;
    split cur;            /* the split under way, as it was then */
} ckpt;

struct ggfit_sched_keep {
    ggfit__buf work[GGFIT_SCHED_WORK]; /* the scratch, records and output */
    ggfit__buf own;       /* the arrays below */
    bool valid;           /* the rest describes the last split */
    bool resumable;       /* the graph's order lets a split resume */
    /* What the split under way is for (ggfit__sched_split_cached's
     * arguments). */
    const void *want_owner;
    uint32_t want_gen;
    const int32_t *moving;
    size_t n_moving;
    /* What the last split was for. */
    const void *owner;
    uint32_t gen;
    const ggfit_st *t;
    const int32_t *leafs, *nodes;
    const ggfit_sched_prep *prep;
    size_t n, n_leafs, n_nodes;
    int n_backends, n_bufts;
    bool op_offload, for_galloc;
    ggfit_sched_backend backends[GGFIT_SCHED_MAX_BACKENDS];
    ggfit_sched_buft bufts[GGFIT_SCHED_MAX_BUFTS];
    /* Its state after it, in work. */
    int8_t *be, *mb;
    uint8_t *tf;
    int32_t *head, *pos;
    copy_rec *rec;
    int32_t n_rec, max_rec;
    int32_t *slot_of, *srec;
    uint16_t *rewired;
    split *splits;
    int32_t n_splits;
    ggfit_sched_out out;  /* its output, borrowing work[2] */
    size_t cap_out;       /* output entries the layout has room for */
    /* What a resume reads, in own. */
    int16_t *buft_in;     /* per tensor: its buffer type then */
    int8_t *backend_in;   /* and its pre-assigned backend */
    uint8_t *mark;        /* per tensor: KEEP_* (a resume's scratch) */
    int32_t *npos;        /* per tensor: its node position; -1 */
    int32_t *list;        /* scratch: the changed tensors, then what a
                             resume sets aside */
    int8_t *aside;        /* and their backends */
    uint8_t *at;          /* per node position: AT_* */
    int32_t *nv_pos;      /* per non-view node: its node position (the
                             scratch's nv_k) */
    int32_t *nv_at;       /* per node position: the index among the non-view
                             nodes of the first one at or after it */
    int32_t *late;        /* the leafs rule 1 leaves unassigned (rule 4 places
                             each at its first consumer), by that consumer */
    int32_t *late_fc;     /* its node position; n_nodes when none */
    int32_t n_late;
    ckpt *ck;
    int32_t n_ck, max_ck;
    int32_t *split_out;   /* per split: the output index of its first entry */
    int32_t *rule1_k;     /* per tensor: its entry in the prep's rule1; -1
                             when rule 1 does not decide it */
    int32_t *fc;          /* per tensor: the first node position that is it
                             or reads it; n_nodes when none */
    int32_t *view_first;  /* per tensor: the first listed view of it; -1 */
    int32_t *view_next;   /* per view: the next view of its view_src; -1 */
    uint64_t n_resumed, n_redone; /* ggfit__sched_keep_stats */
};

/* ggml_is_view_op (what galloc's ggfit__op_is_view says), here so the
 * sweeps do not call across files for every node. */
_Static_assert(GGFIT_OP_VIEW == GGFIT_OP_RESHAPE + 1 && GGFIT_OP_PERMUTE == GGFIT_OP_RESHAPE + 2 &&
               GGFIT_OP_TRANSPOSE == GGFIT_OP_RESHAPE + 3, "the view ops are consecutive");
static inline bool is_view_op(int op)
{
    return (unsigned)(op - GGFIT_OP_RESHAPE) <= 3u;
}

static inline bool supports_op(const sched *s, int b, int32_t i)
{
    return !(s->t[i].unsupported & (UINT32_C(1) << b));
}

/* What mem_buft returns, worked out once per split for listed tensor i. */
static inline int8_t mem_buft_of(const ggfit_st *t, int32_t i)
{
    return (int8_t)(t[i].view_src >= 0 ? t[t[i].view_src].buft : t[i].buft);
}

/* ------------------------------------------------------------------------
 * The steps of a split (sched.c), in the order ggfit__sched_split runs
 * them
 * ---------------------------------------------------------------------- */

/* The scratch and the per-tensor state for in, in work's buffers (NULL:
 * its own); *stale set (GGFIT_OK) when in's prep no longer holds (memory
 * came or went): the split is then made without it. split_end frees what
 * it took, whatever it returned. */
ggfit_status split_begin(sched *s, const ggfit_sched_in *in, ggfit_sched_out *out,
                         struct ggfit__buf *work, char **err, bool *stale);
void split_end(sched *s);
void backend_masks(sched *s);
ggfit_status rule_1(sched *s);
/* Rule 1 again for the listed tensors (by_k: each one's rule1 entry, or
 * -1). */
ggfit_status backends_of_list(sched *s, const int32_t *by_k, const int32_t *list, size_t n);
/* One sweep of rule 2 over the non-view nodes [from, to); rule 3 over the
 * non-view nodes from nv_from on; rule 4 over the node positions from k
 * on. */
void sweep(sched *s, int dir, bool gpu_only, size_t from, size_t to);
void settle_from(sched *s, size_t nv_from);
ggfit_status rule_4_from(sched *s, size_t k);
/* Rule 5: the first split (returns the position of the first non-view
 * node), then the non-view nodes [v_from, v_to) in order, the split under
 * way being the last one; the last split's k_end is the caller's to set. */
size_t split_first(sched *s);
ggfit_status split_nodes(sched *s, size_t v_from, size_t v_to);
size_t count_out(const sched *s, size_t *n_leafs_out);
/* The output's memory, with room for n_lay entries. */
ggfit_status output_begin(sched *s, ggfit_sched_out *out, size_t n_lay);
/* The output's places: its leafs (returns their count), then split sp's
 * entries from output index k (returns the index after them). */
size_t place_leafs(sched *s, int32_t *origin, int8_t *kind);
size_t place_split(sched *s, int32_t *origin, int8_t *kind, int32_t sp, size_t k);
/* The placed entries checked against count_out's (then filled:
 * fill_range); every tensor's backend and ggml-alloc's buffer types. */
ggfit_status output_graph(sched *s, ggfit_sched_out *out, size_t n_out, size_t n_leafs_out,
                          size_t n_placed, size_t n_leafs_placed);
void output_backends(const sched *s, ggfit_sched_out *out);
/* Fills output entries [k0, n_out): all of them, or a resume's part. */
void fill_range(const sched *s, ggfit_sched_out *out, size_t k0, size_t n_out);
void *carve(char *base, size_t *off, size_t bytes, size_t align);

#endif
