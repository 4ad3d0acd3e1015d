/*
 * sched.c - a model of ggml's backend scheduler; the rules are listed in
 * sched.h. Written from the behaviour of ggml_backend_sched_split_graph and
 * its helpers (ggml-backend.cpp), not from its code.
 *
 * Tensors are named by their index into the caller's array everywhere;
 * per-tensor state lives in flat arrays of that size, so no pass looks
 * anything up.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ggml/sched.h"

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
    KEEP_REDO = 4,        /* decided again: rule 1 runs on it */
    KEEP_DIRTY = 8,       /* its backend or memory differs from the kept
                             split's, or it changed */
};

/* Per node position, after rule 1 (ggfit_sched_keep.at). */
enum {
    AT_ANCHOR = 1,        /* a non-view node rule 1 placed */
    AT_LATE_VIEW = 2,     /* a view rule 1 left unassigned: rule 4 places it */
    AT_VIEW = 4,          /* a view */
    AT_SWEPT = 8,         /* a non-view node with a backend before rule 3 */
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
    ggfit_sched_keep *keep;   /* the kept state being made, or NULL */
    int8_t *cbe;              /* the output's copy_backend */
} sched;

/* ------------------------------------------------------------------------
 * The kept state (see ggfit_sched_keep in sched.h)
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
    int32_t *fixed;       /* a resume's scratch: the views it moved after ke */
    int32_t *lcv;         /* per tensor: the last node position that is or
                             reads it or a view of it; -1 when none. A node
                             after lcv[x] of every dirty x (a resume's
                             KEEP_DIRTY) reads nothing dirty */
    int32_t *nv_at;       /* per node position: the index among the non-view
                             nodes of the first one at or after it */
    int32_t *late;        /* the leafs rule 1 leaves unassigned (rule 4 places
                             each at its first consumer), by that consumer */
    int32_t *late_fc;     /* its node position; n_nodes when none */
    int32_t n_late;
    ckpt *ck;
    int32_t n_ck, max_ck;
    int32_t *split_out;   /* per split: the output index of its first entry */
    int32_t *out_at;      /* per checkpoint position k (k / KEEP_EVERY): the
                             output index of node k's entry, or of the next */
    int32_t *rule1_k;     /* per tensor: its entry in the prep's rule1; -1
                             when rule 1 does not decide it */
    int32_t *fc;          /* per tensor: the first node position that is it
                             or reads it; n_nodes when none */
    int32_t *view_first;  /* per tensor: the first listed view of it; -1 */
    int32_t *view_next;   /* per view: the next view of its view_src; -1 */
    uint64_t n_resumed, n_redone; /* ggfit__sched_keep_stats */
    int8_t *old_be, *old_mb; /* a resume's scratch: the kept split's
                             backend and memory of what it decides again */
    split *old_splits;    /* and its splits from the checkpoint's on */
    int32_t *old_rec;     /* and their inputs (tensor, backend pairs) */
    int32_t *mid_map;     /* ggfit_sched_out.mid_new */
    int32_t *mid;         /* and its output's origin, kind and copy backend
                             between the first entry rewritten and the
                             reused tail (3 per entry) */
    ggfit_gt *prev;       /* GGFIT_SCHED_VERIFY: the last output, copied */
    bool prev_ok;         /* (not when that copy could not be made) */
    size_t n_prev;
};

/* ------------------------------------------------------------------------
 * What a backend can do
 * ---------------------------------------------------------------------- */

/* ggml_is_view_op (what galloc's ggfit__op_is_view says), here so the
 * sweeps do not call across files for every node. */
_Static_assert(GGFIT_OP_VIEW == GGFIT_OP_RESHAPE + 1 && GGFIT_OP_PERMUTE == GGFIT_OP_RESHAPE + 2 &&
               GGFIT_OP_TRANSPOSE == GGFIT_OP_RESHAPE + 3, "the view ops are consecutive");
static inline bool is_view_op(int op)
{
    return (unsigned)(op - GGFIT_OP_RESHAPE) <= 3u;
}

/* A tensor's name for messages; unnamed ones print as "". */
static const char *nm(const ggfit_st *t)
{
    return t->name ? t->name : "";
}

static bool supports_op(const sched *s, int b, int32_t i)
{
    return !(s->t[i].unsupported & (UINT32_C(1) << b));
}

static bool supports_buft(const sched *s, int b, int buft)
{
    return buft >= 0 && (s->bufts_of[b] & (UINT32_C(1) << buft));
}

/* The buffer type a tensor's memory is in: its view_src's for a view (ggml
 * reads view_src->buffer), its own otherwise; -1 when it has none. */
static int mem_buft(const sched *s, int32_t i)
{
    return s->mb[i];
}

/* What mem_buft returns, worked out once per split for listed tensor i. */
static int8_t mem_buft_of(const ggfit_st *t, int32_t i)
{
    return (int8_t)(t[i].view_src >= 0 ? t[t[i].view_src].buft : t[i].buft);
}

/* A weight as the scheduler sees one: a tensor in a weights buffer. ggml
 * tests src->buffer, which a view does not have when the graph is built, so
 * views of weights are not weights. */
static bool weight_of(const ggfit_st *t)
{
    return t->view_src < 0 && t->buft >= 0 && t->weights;
}

static bool is_weight(const sched *s, int32_t i)
{
    return s->tf[i] & TF_WEIGHT;
}

/* ggml_backend_offload_op: does backend b want op i, whose weight is in host
 * memory? */
static bool wants_offload(const sched *s, int b, int32_t i)
{
    const ggfit_sched_backend *bk = &s->in->backends[b];
    const ggfit_st *t = &s->t[i];
    int64_t batch;
    switch (t->op) {
    case GGFIT_OP_GET_ROWS: batch = 0; break;   /* CUDA never takes it */
    case GGFIT_OP_MUL_MAT: batch = t->ne[1]; break;
    case GGFIT_OP_MUL_MAT_ID:
    case GGFIT_OP_ROPE:
    case GGFIT_OP_ROPE_BACK: batch = t->ne[2]; break;
    default: batch = t->ne[1] * t->ne[2] * t->ne[3]; break;
    }
    switch (bk->offload) {
    case GGFIT_OFFLOAD_BATCH:
        return batch >= bk->offload_min_batch;
    case GGFIT_OFFLOAD_MATMUL:
        return (t->op == GGFIT_OP_MUL_MAT || t->op == GGFIT_OP_MUL_MAT_ID) &&
               batch >= bk->offload_min_batch;
    default:
        return false;
    }
}

/* The first backend (highest priority) that can use the buffer tensor m
 * lives in and can run op i; -1 if m has no memory or none can. */
static int backend_from_buffer(const sched *s, int32_t m, int32_t i)
{
    int buft = mem_buft(s, m);
    if (buft < 0)
        return -1;
    /* The lowest backend that uses the buffer type and runs the op. */
    uint32_t ok = s->buft_backends[buft] & ~s->t[i].unsupported;
    return ok ? __builtin_ctz(ok) : -1;
}

/* ggml_backend_sched_buffer_supported: can backend b read tensor i where it
 * is? Its memory if it has some, else the compute buffer of its backend or,
 * for a view without one, of its view_src's backend. */
static bool can_read(const sched *s, int32_t i, int b)
{
    int buft = mem_buft(s, i);
    if (buft < 0) {
        int tb = s->be[i];
        if (tb < 0 && s->t[i].view_src >= 0)
            tb = s->be[s->t[i].view_src];
        if (tb < 0)
            return false;
        buft = s->buft_of[tb];
    }
    return supports_buft(s, b, buft);
}

/* Fills s->buft_backends, s->shares_up and the per-backend copies of the
 * backends' buffer types, which can_read reads for every source. */
static void backend_masks(sched *s)
{
    const ggfit_sched_in *in = s->in;
    for (int bt = 0; bt < in->n_bufts; bt++)
        for (int b = 0; b < in->n_backends; b++)
            if (in->backends[b].bufts & (UINT32_C(1) << bt))
                s->buft_backends[bt] |= UINT32_C(1) << b;
    for (int b = 0; b < in->n_backends; b++) {
        s->bufts_of[b] = in->backends[b].bufts;
        if (in->backends[b].offload != GGFIT_OFFLOAD_NEVER)
            s->offloaders |= UINT32_C(1) << b;
        s->buft_of[b] = in->backends[b].buft;
        for (int a = 0; a < b; a++)
            if (in->backends[a].buft == in->backends[b].buft)
                s->shares_up |= UINT32_C(1) << b;
    }
}

/* Does a source p of a node on backend b need a copy there? */
static bool needs_copy(const sched *s, int32_t p, int b)
{
    return s->be[p] != b && !can_read(s, p, b);
}

/* ------------------------------------------------------------------------
 * Rules 1-4: a backend for every tensor
 * ---------------------------------------------------------------------- */

/* Rule 1 for op i whose first weight is w. */
static int weight_backend(const sched *s, int32_t w, int32_t i)
{
    int wb = backend_from_buffer(s, w, i);
    /* A weight in host memory: a device that finds the batch large enough
     * would rather copy the weight than leave the op to the CPU. */
    if (s->in->op_offload && wb == s->cpu && s->in->bufts[s->t[w].buft].is_host) {
        uint32_t may = s->offloaders & ~s->t[i].unsupported;
        for (int g = 0; g < wb && (may >> g); g++)
            if ((may >> g & 1) && wants_offload(s, g, i))
                return g;
    }
    return wb;   /* the first weight decides, even when nothing fits */
}

/* Rule 1 for tensor i: *out is its backend, or -1 when nothing decides it
 * yet. Fails where ggml aborts. */
static ggfit_status backend_from_cur(sched *s, int32_t i, int *out)
{
    const ggfit_st *t = &s->t[i];
    *out = backend_from_buffer(s, i, i);
    if (*out >= 0)
        return GGFIT_OK;
    int buft = mem_buft(s, i);
    if (buft >= 0) {
        /* Its data cannot move and no backend that reads it runs the op. */
        const char *bn = s->in->bufts[buft].name;
        return ggfit__fail(s->err, GGFIT_EINVAL,
                           "sched: tensor %d (%.64s) is in buffer type %s, which no backend "
                           "that can run its op uses", (int)i, nm(t), bn ? bn : "?");
    }
    if (t->flags & GGFIT_TF_INPUT) {
        *out = s->cpu;   /* filled by the host */
        return GGFIT_OK;
    }
    /* The rope frequencies and the attention sinks are too small to pull an
     * op to their backend. */
    if (t->op == GGFIT_OP_ROPE || t->op == GGFIT_OP_FLASH_ATTN_EXT)
        return GGFIT_OK;
    for (unsigned j = 0; j < t->n_src; j++) {
        int32_t w = t->src[j];
        if (w >= 0 && is_weight(s, w)) {
            *out = weight_backend(s, w, i);
            return GGFIT_OK;
        }
    }
    return GGFIT_OK;
}

/* Rule 1 for the prep's entry k, tensor i, which has no backend yet. What
 * decides it is its own memory and the decider's (rule1_by), never another
 * tensor's backend, so the entries can be decided in any order. */
static inline ggfit_status rule1_entry(sched *s, size_t k, int32_t i)
{
    int32_t by = s->rule1_by[k];
    int b;
    switch (s->rule1_kind[k]) {
    case GGFIT_RULE1_MEMORY:
        b = backend_from_buffer(s, by, i);
        if (b < 0) {
            int rc = backend_from_cur(s, i, &b);   /* says why */
            if (rc != GGFIT_OK)
                return rc;
        }
        break;
    case GGFIT_RULE1_INPUT:
        b = s->cpu;
        break;
    default:
        b = weight_backend(s, by, i);
        break;
    }
    s->be[i] = (int8_t)b;
    return GGFIT_OK;
}

/* Rule 1 as the prep has sorted it: for each tensor it can decide, what
 * decides it (see ggfit__sched_prepare), so that no source is searched. */
static ggfit_status backends_from_prep(sched *s)
{
    for (size_t k = 0; k < s->n_rule1; k++) {
        int32_t i = s->rule1[k];
        int rc;
        if (s->be[i] < 0 && (rc = rule1_entry(s, k, i)) != GGFIT_OK)
            return rc;
    }
    return GGFIT_OK;
}

/* Rule 1 again for the n listed tensors, by_k[i] being tensor i's entry in
 * the prep's rule1 (-1 for one rule 1 does not decide). A tensor listed
 * twice is decided once. */
static ggfit_status backends_of_list(sched *s, const int32_t *by_k, const int32_t *list, size_t n)
{
    for (size_t q = 0; q < n; q++) {
        int32_t i = list[q], k = by_k[i];
        int rc;
        if (k >= 0 && s->be[i] < 0 && (rc = rule1_entry(s, (size_t)k, i)) != GGFIT_OK)
            return rc;
    }
    return GGFIT_OK;
}

/* One sweep of rule 2 over the nodes, down (dir 1) or up (dir -1). With
 * gpu_only a CPU node breaks the carry rather than starting one: the CPU is
 * then used only where weights are, or where no other backend ran around. */
static void expand(sched *s, int dir, bool gpu_only, size_t from, size_t to)
{
    const ggfit_st *t = s->t;
    int8_t *be = s->be;
    int stop = gpu_only ? s->cpu : -1;   /* the backend that breaks the carry */
    int cur = -1;
    ptrdiff_t step = dir > 0 ? 1 : -1;
    const int32_t *nv = dir > 0 ? s->nv + from : s->nv + to - 1;
    for (size_t k = from; k < to; k++, nv += step) {
        int32_t i = *nv;
        int b = be[i];
        if (b >= 0)
            cur = b == stop ? -1 : b;
        else if (cur >= 0 && !(t[i].unsupported & (UINT32_C(1) << cur)))
            be[i] = (int8_t)cur;
    }
}

/* Rule 3 for non-view node i. */
static void settle(sched *s, int32_t i)
{
    const ggfit_st *t = &s->t[i];
    if (s->be[i] < 0) {
        /* Unassigned: the backend that can read most sources in place. */
        int best = -1;
        for (int b = 0; b < s->nb; b++) {
            if (!supports_op(s, b, i))
                continue;
            int n_ok = 0;
            for (unsigned j = 0; j < t->n_src; j++) {
                int32_t p = t->src[j];
                if (p < 0)
                    continue;
                bool placed = s->be[p] >= 0 ||
                              (s->t[p].view_src >= 0 && s->be[s->t[p].view_src] >= 0);
                n_ok += placed && can_read(s, p, b);
            }
            if (n_ok > best) {
                best = n_ok;
                s->be[i] = (int8_t)b;
            }
        }
        return;
    }
    /* Assigned: move up to a higher-priority backend sharing its compute
     * buffer type (BLAS next to the CPU) when it can run and read it all. */
    if (!(s->shares_up & (UINT32_C(1) << s->be[i])))
        return;
    int own = s->in->backends[s->be[i]].buft;
    for (int b = 0; b < s->be[i]; b++) {
        if (s->in->backends[b].buft != own || !supports_op(s, b, i))
            continue;
        bool all = true;
        for (unsigned j = 0; j < t->n_src && all; j++)
            all = t->src[j] < 0 || can_read(s, t->src[j], b);
        if (all) {
            s->be[i] = (int8_t)b;
            return;
        }
    }
}

static void rules_2_3(sched *s, size_t nv_from, size_t nv_to, size_t settle_to);
static ggfit_status rule_4(sched *s, size_t k_from, size_t k_to);
static void keep_rule1(sched *s);

static ggfit_status assign_backends(sched *s)
{
    int rc;

    /* Rule 1: where the data is. Caller assignments stay. A prep lists
     * the tensors it can decide; the others stay unassigned. */
    if (s->rule1 && (rc = backends_from_prep(s)) != GGFIT_OK)
        return rc;
    for (size_t k = 0; !s->rule1 && k < s->n_leafs + s->n_nodes; k++) {
        int32_t i = k < s->n_leafs ? s->leafs[k] : s->nodes[k - s->n_leafs];
        if (s->be[i] >= 0)
            continue;
        int b = -1;
        if ((rc = backend_from_cur(s, i, &b)) != GGFIT_OK)
            return rc;
        s->be[i] = (int8_t)b;
    }

    /* Rule 2: spread to neighbours, devices first, then any backend. */
    if (!s->rule1) {
        s->n_nv = 0;
        for (size_t k = 0; k < s->n_nodes; k++)
            if (!is_view_op(s->t[s->nodes[k]].op))
                s->nv_buf[s->n_nv++] = s->nodes[k];
        s->nv = s->nv_buf;
    }
    if (s->keep)
        keep_rule1(s);
    rules_2_3(s, 0, s->n_nv, s->n_nv);
    return rule_4(s, 0, s->n_nodes);
}

/* Rules 2 and 3 (and rule 4 below) run from the start or, resuming, from a
 * node rule 1 placed (see ggfit_sched_keep): the sweeps over non-view nodes
 * [nv_from, nv_to), and rule 3 over [nv_from, settle_to). */
static void rules_2_3(sched *s, size_t nv_from, size_t nv_to, size_t settle_to)
{
    expand(s, 1, true, nv_from, nv_to);
    expand(s, -1, true, nv_from, nv_to);
    expand(s, 1, false, nv_from, nv_to);
    expand(s, -1, false, nv_from, nv_to);

    /* Rule 3, which changes only the node it settles. The keep notes which
     * nodes had a backend before it (rule 3 moves none of those when no two
     * backends share a buffer type). */
    uint8_t *at = s->keep ? s->keep->at : NULL;
    for (size_t k = nv_from; k < settle_to; k++) {
        int32_t i = s->nv[k];
        if (at && s->be[i] >= 0)
            at[s->nv_k[k]] |= AT_SWEPT;
        settle(s, i);
    }
}

static ggfit_status rule_4(sched *s, size_t k_from, size_t k_to)
{
    /* Rule 4: views and leftover sources follow; the rest go to the first
     * backend that can run them. */
    const ggfit_st *tt = s->t;
    const int32_t *nodes = s->nodes;
    int8_t *be = s->be;
    for (size_t k = k_from; k < k_to; k++) {
        int32_t i = nodes[k];
        const ggfit_st *t = &tt[i];
        int b = be[i];
        if (b < 0 && t->view_src >= 0)
            be[i] = (int8_t)(b = be[t->view_src]);
        for (unsigned j = 0; j < t->n_src; j++) {
            int32_t p = t->src[j];   /* never i itself */
            if (p >= 0 && be[p] < 0)
                be[p] = tt[p].view_src >= 0 ? be[tt[p].view_src] : (int8_t)b;
        }
        if (b >= 0)
            continue;
        for (int c = 0; c < s->nb && b < 0; c++)
            if (supports_op(s, c, i))
                b = c;
        if (b < 0)
            return ggfit__fail(s->err, GGFIT_EINVAL, "sched: no backend can run node %d (%.64s)",
                               (int)i, nm(t));
        be[i] = (int8_t)b;
    }
    return GGFIT_OK;
}

/* ------------------------------------------------------------------------
 * Rule 5: splits and copies
 * ---------------------------------------------------------------------- */

static int32_t find_copy(const sched *s, int32_t p, int b)
{
    for (int32_t r = s->head[p]; r >= 0; r = s->rec[r].next)
        if (s->rec[r].backend == b)
            return r;
    return -1;
}

static ggfit_status fail_unplaced(sched *s, int32_t p)
{
    /* ggml asserts; a source that is a leaf nobody placed gets here. */
    return ggfit__fail(s->err, GGFIT_EINVAL, "sched: source %d (%.64s) has no backend",
                       (int)p, nm(&s->t[p]));
}

static ggfit_status splits_from(sched *s, size_t k, size_t v);
static void keep_checkpoint(sched *s, size_t k);

static ggfit_status make_splits(sched *s)
{
    const ggfit_st *t = s->t;
    size_t n_nodes = s->n_nodes;

    /* The first split starts at node 0 but takes the backend of the first
     * node that is not a view op. */
    size_t k = 0;
    while (k < n_nodes && is_view_op(t[s->nodes[k]].op))
        k++;
    split *sp = &s->splits[0];
    *sp = (split){ .backend = k < n_nodes ? s->be[s->nodes[k]]
                            : n_nodes ? s->be[s->nodes[0]] : s->cpu };
    s->n_splits = 1;
    return splits_from(s, k, 0);
}

/* Rule 5 from node position k on, the split under way being the last one;
 * v is the index among the non-view nodes of the first at or after k (view
 * ops stay in the split they follow, so rule 5 walks the others). */
static ggfit_status splits_from(sched *s, size_t k, size_t v)
{
    _Static_assert(GGFIT_GALLOC_MAX_SRC <= 16, "a node's sources fit a mask");
    const ggfit_st *t = s->t;
    const int32_t *nodes = s->nodes;
    const int8_t *be = s->be;
    const int32_t *nv_k = s->nv_k;
    size_t n_nodes = s->n_nodes, n_nv = s->n_nv;
    split *sp = &s->splits[s->n_splits - 1];
    int cur = sp->backend;
    bool copies = s->in->n_copies > 1;
    /* The next node position that gets a checkpoint, when kept. */
    size_t next_ck = s->keep ? (k + KEEP_EVERY - 1) / KEEP_EVERY * KEEP_EVERY : SIZE_MAX;

    for (;; v++) {
        k = v < n_nv ? (size_t)nv_k[v] : n_nodes;
        /* The checkpoints up to k: the views before it change nothing. */
        for (; next_ck <= k && next_ck < n_nodes; next_ck += KEEP_EVERY)
            keep_checkpoint(s, next_ck);
        if (k == n_nodes)
            break;
        int32_t i = nodes[k];
        const ggfit_st *nd = &t[i];
        int nb = be[i];

        /* The sources that need a copy on nb, the node's split's backend
         * whether or not a split starts here. */
        unsigned need = 0;
        for (unsigned j = 0; j < nd->n_src; j++) {
            int32_t p = nd->src[j];
            if (p < 0)
                continue;
            if (be[p] < 0)
                return fail_unplaced(s, p);
            if (needs_copy(s, p, nb))
                need |= 1u << j;
        }

        bool new_split = nb != cur;
        if (!new_split && need && sp->n_inputs > 0) {
            for (unsigned j = 0; need >> j && !new_split; j++) {
                if (!(need >> j & 1))
                    continue;
                int32_t p = nd->src[j];
                /* A weight the backend cannot read: a new split lets the
                 * copies of earlier weights be freed. ggml checks a full
                 * split only when it is exactly full, against any source
                 * that would need a new input. */
                new_split = is_weight(s, p) ||
                            (sp->n_inputs >= sp->capacity && find_copy(s, p, cur) < 0);
            }
        }
        if (new_split) {
            sp->k_end = (int32_t)k;
            sp = &s->splits[s->n_splits++];
            *sp = (split){ .backend = nb, .k_start = (int32_t)k, .rec_first = s->n_rec };
            cur = nb;
        }

        for (unsigned j = 0; copies && j < nd->n_src; j++) {
            int32_t p = nd->src[j];
            if (p >= 0 && (t[p].flags & GGFIT_TF_INPUT) && !(s->tf[p] & TF_GRAPH_INPUT)) {
                s->tf[p] |= TF_GRAPH_INPUT;
                s->graph_inputs[s->n_graph_inputs++] = p;
            }
        }
        /* Each slot that needs a copy reads the copy on cur. */
        s->rewired[i] = (uint16_t)need;
        if (!need)
            continue;
        int32_t *sr = &s->srec[s->slot_of[i]];
        for (unsigned j = 0; need >> j; j++) {
            if (!(need >> j & 1))
                continue;
            int32_t p = nd->src[j];
            if ((sr[j] = find_copy(s, p, cur)) >= 0)
                continue;
            if (s->n_rec >= s->max_rec)   /* unreachable: one per source slot */
                return ggfit__fail(s->err, GGFIT_EINVAL, "sched: copy table full");
            s->rec[s->n_rec] = (copy_rec){ .tensor = p, .next = s->head[p], .pos = -1,
                                           .pos_cur = -1, .backend = (int8_t)cur };
            sr[j] = s->n_rec;
            s->head[p] = s->n_rec++;
            if (sp->n_inputs >= sp->capacity)
                sp->capacity = sp->capacity ? 2 * sp->capacity : GGFIT_SCHED_SPLIT_INPUTS;
            sp->n_inputs++;
        }
    }
    sp->k_end = (int32_t)n_nodes;
    return GGFIT_OK;
}

/* ------------------------------------------------------------------------
 * Rule 6: the graph for ggml-alloc
 * ---------------------------------------------------------------------- */

/* The number of output entries place_all makes, and how many are leafs:
 * every input tensor once; n_copies - 1 more per graph input (the current
 * copy is the input itself, or its node entry); per copy record its
 * dependency view and n_copies copies, leafs when n_copies > 1. */
static size_t count_out(const sched *s, size_t *n_leafs_out)
{
    size_t n_copies = (size_t)s->in->n_copies, gi = (size_t)s->n_graph_inputs,
           rec = (size_t)s->n_rec;
    *n_leafs_out = s->n_leafs + gi * (n_copies - 1) + (n_copies > 1 ? rec * n_copies : 0);
    return s->n_leafs + s->n_nodes + gi * (n_copies - 1) + rec * (n_copies + 1);
}

/* Whether node i (with memory) reads a tensor ggml-alloc places: a source
 * without memory, or a copy (a write into the KV cache reads the new K and
 * V, which then live until it runs). */
static bool reads_fresh(const sched *s, int32_t i)
{
    const ggfit_st *t = &s->t[i];
    bool rewired = !is_view_op(t->op);
    for (unsigned j = 0; j < t->n_src; j++) {
        int32_t p = t->src[j];
        if (p >= 0 && (mem_buft(s, p) < 0 || (rewired && needs_copy(s, p, s->be[i]))))
            return true;
    }
    return false;
}

/* Gives every output entry its place (origin and kind), in ggml's order,
 * and returns the count; called once (TF_EMITTED starts clear). Positions
 * come before contents because a dependency view may name a view op placed
 * later in its split. */
static void keep_split_out(sched *s, int32_t sp, size_t k);
static size_t place_splits(sched *s, int32_t *origin, int8_t *kind, int32_t sp0, size_t k,
                           int32_t q_kept, size_t k_kept, size_t *k_head);

static size_t place_all(sched *s, int32_t *origin, int8_t *kind, size_t *n_leafs_out)
{
    int n_copies = s->in->n_copies, cur_copy = s->in->cur_copy;
    size_t k = 0;

    /* for_galloc: an entry with memory, or the view keeping one alive, is
     * not emitted (its position stays -1). */
    bool skip_mem = s->in->for_galloc;
#define PUT(o, kd) do { origin[k] = (o); kind[k] = (int8_t)(kd); k++; } while (0)
#define HAS_MEM(o) (skip_mem && mem_buft(s, (o)) >= 0)

    if (n_copies > 1) {
        for (int32_t g = 0; g < s->n_graph_inputs; g++) {
            int32_t p = s->graph_inputs[g];
            for (int c = 0; c < n_copies; c++) {
                if (c != cur_copy) {
                    s->cbe[k] = -1;
                    PUT(p, c);
                } else if (s->tf[p] & TF_LEAF) {
                    /* The input itself is the current copy, listed here
                     * first. A graph input that is a node keeps its place
                     * among the nodes. */
                    s->tf[p] |= TF_EMITTED;
                    if (HAS_MEM(p))
                        continue;
                    s->pos[p] = (int32_t)k;
                    PUT(p, GGFIT_SCHED_ORIG);
                }
            }
        }
        for (int32_t sp = 0; sp < s->n_splits; sp++) {
            const split *spl = &s->splits[sp];
            for (int32_t r = spl->rec_first; r < spl->rec_first + spl->n_inputs; r++) {
                s->rec[r].pos = (int32_t)k;
                s->rec[r].pos_cur = (int32_t)k + cur_copy;
                for (int c = 0; c < n_copies; c++) {
                    s->cbe[k] = s->rec[r].backend;
                    PUT(s->rec[r].tensor, c);
                }
            }
        }
    }
    for (size_t q = 0; q < s->n_leafs; q++) {
        int32_t i = s->leafs[q];
        if ((s->tf[i] & TF_EMITTED) || HAS_MEM(i))
            continue;
        s->pos[i] = (int32_t)k;
        PUT(i, GGFIT_SCHED_ORIG);
    }
    *n_leafs_out = k;
#undef HAS_MEM
#undef PUT
    return place_splits(s, origin, kind, 0, k, 0, 0, NULL);
}

/* The output of splits sp0 on, the first at output index k; returns the
 * output's count. A resume that found split sp0's inputs as they were keeps
 * its nodes before position q_kept, in place: its nodes go on at output
 * index k_kept, and *k_head is where its inputs' entries end. */
static size_t place_splits(sched *s, int32_t *origin, int8_t *kind, int32_t sp0, size_t k,
                           int32_t q_kept, size_t k_kept, size_t *k_head)
{
    int n_copies = s->in->n_copies;
    bool skip_mem = s->in->for_galloc;
    const int32_t *nodes = s->nodes;
    const int8_t *mb = s->mb;
    int32_t *pos = s->pos;
    int32_t *out_at = s->keep ? s->keep->out_at : NULL;   /* per checkpoint */
#define PUT(o, kd) do { origin[k] = (o); kind[k] = (int8_t)(kd); k++; } while (0)
#define HAS_MEM(o) (skip_mem && mem_buft(s, (o)) >= 0)
    for (int32_t sp = sp0; sp < s->n_splits; sp++) {
        const split *spl = &s->splits[sp];
        if (s->keep)
            keep_split_out(s, sp, k);
        for (int32_t r = spl->rec_first; r < spl->rec_first + spl->n_inputs; r++) {
            if (!HAS_MEM(s->rec[r].tensor))
                PUT(s->rec[r].tensor, GGFIT_SCHED_DEP);
            if (n_copies == 1) {
                s->rec[r].pos = s->rec[r].pos_cur = (int32_t)k;
                s->cbe[k] = s->rec[r].backend;
                PUT(s->rec[r].tensor, 0);
            }
        }
        int32_t q = spl->k_start;
        if (sp == sp0 && k_head) {
            *k_head = k;
            if (q_kept > q) {
                q = q_kept;
                k = k_kept;
            }
        }
        int64_t next_ck = out_at ? ((int64_t)q + KEEP_EVERY - 1) / KEEP_EVERY * KEEP_EVERY : INT64_MAX;
        for (int32_t end = spl->k_end; q < end; q++) {
            if (q == next_ck) {
                out_at[q / KEEP_EVERY] = (int32_t)k;
                next_ck += KEEP_EVERY;
            }
            int32_t i = nodes[q];
            if (skip_mem && mb[i] >= 0 && !reads_fresh(s, i))
                continue;
            pos[i] = (int32_t)k;
            PUT(i, GGFIT_SCHED_ORIG);
        }
    }
#undef HAS_MEM
#undef PUT
    return k;
}

/* Whether t's strides are not those of a contiguous tensor of its type and
 * shape (ggml_are_same_layout compares them); false when the caller gave no
 * strides (recorded graphs). */
static bool strided(const ggfit_st *t)
{
    uint64_t nb = ggfit_row_bytes(t->type, ggfit_type_block_size(t->type));
    if (t->nb[0] == 0)
        return false;
    if (t->nb[0] != nb)
        return true;
    nb = ggfit_row_bytes(t->type, (uint64_t)t->ne[0]);
    for (int d = 1; d < 4; d++) {
        if (t->nb[d] != nb)
            return true;
        nb *= (uint64_t)t->ne[d];
    }
    return false;
}

/* Builds output entry k in *g. Every field is written, the empty ones too:
 * a whole-struct copy of a blank entry costs more than the rest. The small
 * fields after src are cleared with the padding, so that equal graphs are
 * equal byte for byte. Copies and views have their source's type, shape and
 * size. */
static inline void fill_entry(const sched *s, const ggfit_sched_out *out, size_t k, ggfit_gt *g)
{
    int32_t o = out->origin[k];
    const ggfit_st *src = &s->t[o];
    g->size = src->size;
    memcpy(g->ne, src->ne, sizeof g->ne);
    g->type = src->type;
    g->flags = 0;
    g->view_src = -1;
    g->view_offs = 0;
    memset(g->src, 0xff, sizeof g->src);   /* every slot -1 */
    memset(&g->n_src, 0, sizeof *g - offsetof(ggfit_gt, n_src));
    g->op = GGFIT_OP_NONE;
    int kd = out->kind[k];
    if (kd == GGFIT_SCHED_ORIG) {
        const int32_t *pos = s->pos;
        uint8_t tf = s->tf[o];
        g->flags = src->flags;
        if (tf & TF_GRAPH_INPUT)   /* ggml sets output on it */
            g->flags |= GGFIT_TF_INPUT | GGFIT_TF_OUTPUT;
        g->backend = s->be[o];
        g->op = src->op;
        g->allocated = mem_buft(s, o) >= 0;
        if (src->view_src >= 0) {
            g->view_src = pos[src->view_src];
            g->view_offs = src->view_offs;
        }
        unsigned n_src = src->n_src;
        g->n_src = (uint8_t)n_src;
        /* Rule 5 rewired the sources of non-view nodes that needed a copy
         * to the copy on the node's backend (rewired is 0 for the rest). */
        unsigned rw = s->rewired[o];
        if (rw) {
            const int32_t *sr = &s->srec[s->slot_of[o]];
            for (unsigned j = 0; j < n_src; j++) {
                int32_t p = src->src[j];
                if (p >= 0)
                    g->src[j] = rw >> j & 1 ? s->rec[sr[j]].pos_cur : pos[p];
            }
        } else {
            for (unsigned j = 0; j < n_src; j++) {
                int32_t p = src->src[j];
                if (p >= 0)
                    g->src[j] = pos[p];
            }
        }
    } else if (kd == GGFIT_SCHED_DEP) {
        /* ggml_view_tensor of the input, with the input as src[0]: it
         * keeps the input alive until the copy is made. */
        g->backend = s->be[o];
        g->allocated = mem_buft(s, o) >= 0;
        g->view_src = src->view_src >= 0 ? s->pos[src->view_src] : s->pos[o];
        g->view_offs = src->view_src >= 0 ? src->view_offs : 0;
        g->src[0] = s->pos[o];
        g->n_src = 1;
    } else {
        /* A copy: a fresh tensor with the source's layout. A split
         * input's copies are on the split's backend; a graph input's
         * extra copies stay on its backend. */
        if (s->in->n_copies > 1)
            g->flags = GGFIT_TF_INPUT | GGFIT_TF_OUTPUT;
        g->backend = out->copy_backend[k] >= 0 ? out->copy_backend[k] : s->be[o];
        g->strided = strided(src);
    }
}

/* Fills output entries [k0, n_out). With same, the entries hold the
 * previous split's output (kept) and are compared with what they become
 * until one differs: *same is then its index. */
static void fill(sched *s, ggfit_sched_out *out, size_t k0, size_t n_out, size_t *same)
{
    bool compare = same && *same == SIZE_MAX;
    ggfit_gt *g = out->t, was;
    for (size_t k = k0; k < n_out; k++) {
        if (compare)
            was = g[k];
        fill_entry(s, out, k, &g[k]);   /* (its only call: inlined) */
        if (compare && memcmp(&was, &g[k], sizeof was) != 0) {
            *same = k;
            compare = false;
        }
    }
}

/* ------------------------------------------------------------------------
 * Entry points
 * ---------------------------------------------------------------------- */

static ggfit_status check_backends(const ggfit_sched_in *in, char **err)
{
    if (in->n_backends < 1 || in->n_backends > GGFIT_SCHED_MAX_BACKENDS)
        return ggfit__fail(err, GGFIT_EINVAL, "sched: %d backends (1 to %d)", in->n_backends,
                           GGFIT_SCHED_MAX_BACKENDS);
    if (in->n_bufts < 1 || in->n_bufts > GGFIT_SCHED_MAX_BUFTS)
        return ggfit__fail(err, GGFIT_EINVAL, "sched: %d buffer types (1 to %d)", in->n_bufts,
                           GGFIT_SCHED_MAX_BUFTS);
    if (in->n_copies < 1 || in->n_copies > GGFIT_SCHED_MAX_COPIES ||
        in->cur_copy < 0 || in->cur_copy >= in->n_copies)
        return ggfit__fail(err, GGFIT_EINVAL, "sched: copy %d of %d", in->cur_copy, in->n_copies);
    /* ggml_backend_sched_new asserts both. */
    if (!in->backends[in->n_backends - 1].is_cpu)
        return ggfit__fail(err, GGFIT_EINVAL, "sched: the last backend must be the CPU");
    for (int b = 0; b < in->n_backends; b++) {
        const ggfit_sched_backend *bk = &in->backends[b];
        if (bk->buft < 0 || bk->buft >= in->n_bufts || !(bk->bufts & (UINT32_C(1) << bk->buft)))
            return ggfit__fail(err, GGFIT_EINVAL,
                               "sched: backend %d cannot use its own buffer type %d", b, (int)bk->buft);
    }
    return GGFIT_OK;
}

/* Tensor i's buffer type and pre-assigned backend are in range. */
static ggfit_status check_targets(const sched *s, int32_t i)
{
    const ggfit_st *t = &s->t[i];
    if (t->buft < -1 || t->buft >= s->in->n_bufts)
        return ggfit__fail(s->err, GGFIT_EINVAL, "sched: tensor %d: buffer type %d", (int)i,
                           (int)t->buft);
    if (t->backend < -1 || t->backend >= s->in->n_backends)
        return ggfit__fail(s->err, GGFIT_EINVAL, "sched: tensor %d: backend %d", (int)i,
                           (int)t->backend);
    return GGFIT_OK;
}

/* Rule 1 decides a tensor without a caller's backend when it has memory
 * (its own or its view_src's), is a graph input, or (but for ROPE and
 * FLASH_ATTN_EXT) uses a weight, in that order; see backend_from_cur. Adds
 * listed tensor i to the prep's rule1 when rule 1 decides it; every
 * listed tensor's TF_MEM is set. */
static void rule1_note(ggfit_sched_prep *prep, const ggfit_st *t, int32_t i)
{
    const ggfit_st *ti = &t[i];
    if (ti->backend >= 0)
        return;
    int32_t owner = ti->view_src >= 0 ? ti->view_src : i, by = -1;
    uint8_t kind = GGFIT_RULE1_WEIGHT;
    if (prep->tf[owner] & TF_MEM) {
        kind = GGFIT_RULE1_MEMORY;
        by = owner;
    } else if (ti->flags & GGFIT_TF_INPUT) {
        kind = GGFIT_RULE1_INPUT;
    } else if (ti->op != GGFIT_OP_ROPE && ti->op != GGFIT_OP_FLASH_ATTN_EXT) {
        for (unsigned j = 0; j < ti->n_src && by < 0; j++) {
            int32_t w = ti->src[j];
            if (w >= 0 && t[w].view_src < 0 && (prep->tf[w] & TF_MEM) && t[w].weights)
                by = w;
        }
    }
    if (by < 0 && kind != GGFIT_RULE1_INPUT)
        return;
    prep->rule1[prep->n_rule1] = i;
    prep->rule1_by[prep->n_rule1] = by;
    prep->rule1_kind[prep->n_rule1++] = kind;
}

/* Marks the lists in s->tf and checks every index; counts in *slots the
 * source slots of non-view nodes, which bounds the copies. With a prep
 * (s->tf is prep->tf), the same two walks fill it: TF_MEM as the lists are
 * marked, then, once every listed tensor is marked, TF_WEIGHT, the
 * non-view nodes and rule 1's tensors. Each walk goes through the leafs,
 * then the nodes, and stops at the first entry that fails. */
static ggfit_status check_graph(sched *s, size_t *slots, ggfit_sched_prep *prep)
{
    /* n <= INT32_MAX (the callers check), so one unsigned test covers
     * i < 0 and i >= n, and one covers a target's [-1, count). */
    const uint32_t n = (uint32_t)s->n;
    const uint32_t n_bufts = (uint32_t)s->in->n_bufts, n_backends = (uint32_t)s->in->n_backends;
    const ggfit_st *t = s->t;
    uint8_t *tf = s->tf;
    for (int part = 0; part < 2; part++) {
        bool leaf = part == 0;
        const int32_t *list = leaf ? s->leafs : s->nodes;
        size_t count = leaf ? s->n_leafs : s->n_nodes;
        for (size_t k = 0; k < count; k++) {
            int32_t i = list[k];
            if ((uint32_t)i >= n)
                return ggfit__fail(s->err, GGFIT_EINVAL, "sched: %s %zu: tensor %d out of range",
                                   leaf ? "leaf" : "node", k, (int)i);
            if (tf[i] & (TF_LEAF | TF_NODE))
                return ggfit__fail(s->err, GGFIT_EINVAL,
                                   "sched: tensor %d (%.64s) is listed twice", (int)i, nm(&t[i]));
            tf[i] |= leaf ? TF_LEAF : TF_NODE;
            if (prep && t[i].buft >= 0)
                tf[i] |= TF_MEM;
        }
    }
    size_t n_slots = 0;
    for (int part = 0; part < 2; part++) {
        bool leaf = part == 0;
        const int32_t *list = leaf ? s->leafs : s->nodes;
        size_t count = leaf ? s->n_leafs : s->n_nodes;
        for (size_t k = 0; k < count; k++) {
            int32_t i = list[k];
            const ggfit_st *ti = &t[i];
            if (ti->n_src > (leaf ? 0 : GGFIT_GALLOC_MAX_SRC))
                return ggfit__fail(s->err, GGFIT_EINVAL, "sched: tensor %d: %u sources%s", (int)i,
                                   (unsigned)ti->n_src, leaf ? " on a leaf" : "");
            int32_t v = ti->view_src;
            if (v != -1 && ((uint32_t)v >= n || v == i || !(tf[v] & (TF_LEAF | TF_NODE)) ||
                            t[v].view_src >= 0))
                return ggfit__fail(s->err, GGFIT_EINVAL,
                                   "sched: tensor %d: view_src %d is not a non-view tensor of the graph",
                                   (int)i, (int)v);
            if ((uint32_t)(ti->buft + 1) > n_bufts || (uint32_t)(ti->backend + 1) > n_backends)
                return check_targets(s, i);   /* says which */
            for (unsigned j = 0; j < ti->n_src; j++) {
                int32_t p = ti->src[j];
                if ((uint32_t)p < n ? p == i || !(tf[p] & (TF_LEAF | TF_NODE)) : p != -1)
                    return ggfit__fail(s->err, GGFIT_EINVAL,
                                       "sched: tensor %d: source %u (%d) is not in the graph",
                                       (int)i, j, (int)p);
            }
            if (prep) {
                if (weight_of(ti))
                    tf[i] |= TF_WEIGHT;
                rule1_note(prep, t, i);
            }
            if (!leaf && !is_view_op(ti->op)) {
                n_slots += ti->n_src;
                if (prep)
                    prep->nv[prep->n_nv++] = i;
            }
        }
    }
    *slots = n_slots;
    return GGFIT_OK;
}

/* Carves bytes at the given alignment from a block; with base NULL it only
 * advances *off, which sizes the block. */
static void *carve(char *base, size_t *off, size_t bytes, size_t align)
{
    *off = (*off + align - 1) / align * align;
    void *p = base ? base + *off : NULL;
    *off += bytes;
    return p;
}

/* Places the output's arrays in mem for n_out output tensors and n input
 * tensors, and returns the bytes they take; with mem NULL it only sizes. */
static size_t out_layout(char *mem, ggfit_sched_out *out, size_t n_out, size_t n)
{
    size_t off = 0;
    out->t = carve(mem, &off, n_out * sizeof(ggfit_gt), _Alignof(ggfit_gt));
    out->origin = carve(mem, &off, n_out * sizeof(int32_t), _Alignof(int32_t));
    out->backend_of = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
    out->kind = carve(mem, &off, n_out, 1);
    out->copy_backend = carve(mem, &off, n_out, 1);
    return off;
}

static ggfit_status keep_size(ggfit_sched_keep *kp, sched *s);
static void keep_done(ggfit_sched_keep *kp, sched *s, ggfit_sched_out *out, size_t n_lay);

static ggfit_status split_full(const ggfit_sched_in *in, ggfit_sched_out *out, char **err,
                              ggfit_sched_keep *kp)
{
    if (err)
        *err = NULL;
    if (!out)
        return ggfit__fail(err, GGFIT_EINVAL, "sched: no output");
    memset(out, 0, sizeof *out);
    if (!in || !in->backends || !in->bufts || (!in->t && in->n_leafs + in->n_nodes > 0) ||
        (!in->leafs != !in->nodes && in->n_leafs + in->n_nodes > 0))
        return ggfit__fail(err, GGFIT_EINVAL, "sched: no graph, backends or buffer types");
    int rc = check_backends(in, err);
    if (rc != GGFIT_OK)
        return rc;
    bool dense = !in->leafs && !in->nodes;
    size_t n = dense ? in->n_leafs + in->n_nodes : in->n_tensors;
    const ggfit_sched_prep *prep = dense ? NULL : in->prep;
    if (prep && prep->n != n)
        return ggfit__fail(err, GGFIT_EINVAL, "sched: the prep is for another graph");
    if (in->n_leafs > INT32_MAX || in->n_nodes > INT32_MAX - in->n_leafs || n > INT32_MAX ||
        n > SIZE_MAX / 64)
        return ggfit__fail(err, GGFIT_ELIMIT, "sched: more than 2^31 tensors");

    sched s = { .in = in, .t = in->t, .n = n, .leafs = in->leafs, .nodes = in->nodes,
                .n_leafs = in->n_leafs, .n_nodes = in->n_nodes, .nb = in->n_backends,
                .cpu = in->n_backends - 1, .err = err, .keep = kp };
    struct ggfit__buf *work = kp ? kp->work : in->work;

    /* Scratch, one block: per-tensor state, the dense lists when the caller
     * gave none, a copy record per source slot and a split per node (both
     * bounds, touched only as far as used). The slot count is known after
     * the lists are checked, so the records go in a second block. */
    size_t off = 0;
    char *mem = NULL;
    for (int pass = 0; pass < 2; pass++) {
        off = 0;
        s.be = carve(mem, &off, n, 1);
        s.mb = carve(mem, &off, n, 1);
        s.tf = carve(mem, &off, n, 1);
        s.head = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        s.pos = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        s.slot_of = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        s.nv_k = carve(mem, &off, in->n_nodes * sizeof(int32_t), _Alignof(int32_t));
        s.rewired = carve(mem, &off, n * sizeof(uint16_t), _Alignof(uint16_t));
        s.graph_inputs = carve(mem, &off, (in->n_copies > 1 ? n : 0) * sizeof(int32_t),
                               _Alignof(int32_t));
        int32_t *lists = carve(mem, &off, (dense ? n : 0) * sizeof(int32_t), _Alignof(int32_t));
        s.splits = carve(mem, &off, (in->n_nodes + 1) * sizeof(split), _Alignof(split));
        s.nv_buf = carve(mem, &off, (prep ? 0 : in->n_nodes) * sizeof(int32_t),
                         _Alignof(int32_t));
        if (pass == 0 && !(mem = work ? ggfit__buf_get(&work[0], off) : ggfit__malloc(off)))
            return ggfit__fail(err, GGFIT_ENOMEM, "sched: out of memory");
        if (pass == 1 && dense) {
            for (size_t i = 0; i < n; i++)
                lists[i] = (int32_t)i;
            s.leafs = lists;
            s.nodes = lists + in->n_leafs;
        }
    }
    size_t slots = 0;
    copy_rec *recs = NULL;
    if (prep) {
        /* Checked when prepared; only the buffer types and backends are new. */
        memcpy(s.tf, prep->tf, n);
        slots = prep->slots;
        s.nv = prep->nv;
        s.n_nv = prep->n_nv;
        s.rule1 = prep->rule1;
        s.rule1_by = prep->rule1_by;
        s.rule1_kind = prep->rule1_kind;
        s.n_rule1 = prep->n_rule1;
        /* A target out of range fails, memory that came or went drops the
         * prep. One unsigned test covers both ranges ([-1, count)). The
         * test runs in tensor order, which walks the graph's memory from
         * start to end (the lists jump about), together with the start of
         * the per-tensor state; only when it finds something does the walk
         * in list order below say what, as check_graph would (check_targets
         * names the first target out of range). */
        uint32_t n_bufts = (uint32_t)in->n_bufts, n_backends = (uint32_t)in->n_backends;
        bool bad = false;
        for (size_t i = 0; i < n; i++) {
            const ggfit_st *ti = &in->t[i];
            bool listed = s.tf[i] & (TF_LEAF | TF_NODE);
            s.be[i] = listed ? ti->backend : -1;
            s.mb[i] = listed ? mem_buft_of(in->t, (int32_t)i) : -1;
            s.head[i] = -1;
            s.rewired[i] = 0;
            s.pos[i] = -1;
            bad |= listed && ((uint32_t)(ti->buft + 1) > n_bufts ||
                              (uint32_t)(ti->backend + 1) > n_backends ||
                              ((s.tf[i] & TF_MEM) != 0) != (ti->buft >= 0));
        }
        for (size_t k = 0; bad && k < s.n_leafs + s.n_nodes; k++) {
            int32_t i = k < s.n_leafs ? s.leafs[k] : s.nodes[k - s.n_leafs];
            const ggfit_st *ti = &in->t[i];
            if ((uint32_t)(ti->buft + 1) > n_bufts || (uint32_t)(ti->backend + 1) > n_backends) {
                rc = check_targets(&s, i);
                goto done;
            }
            if (((s.tf[i] & TF_MEM) != 0) != (ti->buft >= 0)) {
                /* Memory came or went: the prep no longer holds. */
                ggfit_sched_in plain = *in;
                plain.prep = NULL;
                plain.keep = NULL;
                if (!work)
                    free(mem);
                return split_full(&plain, out, err, NULL);
            }
        }
    } else {
        memset(s.tf, 0, n);
        if ((rc = check_graph(&s, &slots, NULL)) != GGFIT_OK)
            goto done;
        for (size_t i = 0; i < n; i++) {
            bool listed = s.tf[i] & (TF_LEAF | TF_NODE);
            s.be[i] = listed ? in->t[i].backend : -1;
            s.mb[i] = listed ? mem_buft_of(in->t, (int32_t)i) : -1;
            if (listed && weight_of(&in->t[i]))
                s.tf[i] |= TF_WEIGHT;
            s.head[i] = -1;
            s.rewired[i] = 0;
            s.pos[i] = -1;
        }
    }
    if (slots > INT32_MAX || slots > SIZE_MAX / (sizeof(copy_rec) + sizeof(int32_t))) {
        rc = ggfit__fail(err, GGFIT_ELIMIT, "sched: graph too large");
        goto done;
    }
    /* The copy records, then per source slot the record it reads. */
    size_t rec_bytes = slots * (sizeof(copy_rec) + sizeof(int32_t));
    recs = work ? ggfit__buf_get(&work[1], rec_bytes) : ggfit__malloc(rec_bytes);
    if (!recs) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "sched: out of memory");
        goto done;
    }
    s.rec = recs;
    s.max_rec = (int32_t)slots;
    s.srec = (int32_t *)(void *)(recs + slots);
    int32_t slot = 0, n_nv = 0;
    for (size_t k = 0; k < s.n_nodes; k++) {
        const ggfit_st *tk = &in->t[s.nodes[k]];
        if (!is_view_op(tk->op)) {
            s.slot_of[s.nodes[k]] = slot;
            slot += tk->n_src;
            s.nv_k[n_nv++] = (int32_t)k;
        }
    }
    backend_masks(&s);

    if (kp && (rc = keep_size(kp, &s)) != GGFIT_OK)
        goto done;
    if ((rc = assign_backends(&s)) != GGFIT_OK ||
        (!in->backends_only && (rc = make_splits(&s)) != GGFIT_OK))
        goto done;

    /* Size the output, then place and fill it. The caller's buffer is
     * asked for room for twice the graph's tensors (a view and a copy per
     * tensor; llama.cpp's graphs copy far fewer): a fit's later splits of
     * the same graph, with more copies than the first, then fit in it,
     * where growing it would move it to fresh pages (each a fault), and the
     * pages past what a split uses are never touched. */
    size_t n_leafs_out = 0;
    size_t n_out = in->backends_only ? 0 : count_out(&s, &n_leafs_out);
    size_t n_lay = n_out;
    if (kp && n_lay < 2 * (s.n_leafs + s.n_nodes))
        n_lay = 2 * (s.n_leafs + s.n_nodes);   /* a resume keeps the layout */
    size_t o_off = out_layout(NULL, out, n_lay, n);
    size_t o_want = out_layout(NULL, out, 2 * (s.n_leafs + s.n_nodes), n);
    char *omem = work ? ggfit__buf_get(&work[2], o_want > o_off ? o_want : o_off)
                      : ggfit__malloc(o_off);
    if (!omem) {
        memset(out, 0, sizeof *out);
        rc = ggfit__fail(err, GGFIT_ENOMEM, "sched: out of memory");
        goto done;
    }
    out_layout(omem, out, n_lay, n);
    s.cbe = out->copy_backend;
    out->borrowed = work != NULL;
    out->n_backends = in->n_backends;
    if (!in->backends_only) {
        size_t n_leafs_placed = 0, n_placed = place_all(&s, out->origin, out->kind,
                                                        &n_leafs_placed);
        /* count_out is exact, or with for_galloc a bound */
        if (in->for_galloc ? n_placed > n_out || n_leafs_placed > n_leafs_out
                           : n_placed != n_out || n_leafs_placed != n_leafs_out) {
            ggfit__sched_free(out);   /* unreachable */
            rc = ggfit__fail(err, GGFIT_EINVAL, "sched: output count mismatch");
            goto done;
        }
        out->n_leafs = n_leafs_placed;
        out->n_nodes = n_placed - n_leafs_placed;
        out->n_splits = s.n_splits;
        fill(&s, out, 0, n_placed, NULL);
        out->tail_new = n_placed;   /* no tail of an earlier split */
    }
    for (size_t i = 0; i < n; i++)
        out->backend_of[i] = s.be[i];

    /* ggml-alloc keeps one allocator per distinct buffer type. */
    for (int b = 0; b < in->n_backends; b++) {
        const ggfit_sched_buft *bt = &in->bufts[in->backends[b].buft];
        out->galloc[b] = (ggfit_galloc_buft){ .alignment = bt->alignment,
                                              .max_size = bt->max_size, .same_as = -1 };
        for (int a = 0; a < b && out->galloc[b].same_as < 0; a++)
            if (in->backends[a].buft == in->backends[b].buft)
                out->galloc[b].same_as = a;
    }
    rc = GGFIT_OK;
    if (kp)
        keep_done(kp, &s, out, n_lay);
done:
    if (!work) {
        free(recs);
        free(mem);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Keeping a split, and resuming from it
 * ---------------------------------------------------------------------- */

ggfit_sched_keep *ggfit__sched_keep_new(void)
{
    return ggfit__calloc(1, sizeof(ggfit_sched_keep));
}

void ggfit__sched_keep_drop(ggfit_sched_keep *kp)
{
    if (kp)
        kp->valid = false;
}

void ggfit__sched_keep_stats(const ggfit_sched_keep *kp, uint64_t *n_resumed, uint64_t *n_redone)
{
    *n_resumed = kp ? kp->n_resumed : 0;
    *n_redone = kp ? kp->n_redone : 0;
}

void ggfit__sched_keep_free(ggfit_sched_keep *kp)
{
    if (!kp)
        return;
    for (int k = 0; k < GGFIT_SCHED_WORK; k++)
        ggfit__buf_free(&kp->work[k]);
    ggfit__buf_free(&kp->own);
    free(kp->prev);
    free(kp);
}

/* Sizes the keep's own arrays for s's graph before a split from scratch. */
static ggfit_status keep_size(ggfit_sched_keep *kp, sched *s)
{
    size_t n = s->n, nn = s->n_nodes, off = 0;
    char *mem = NULL;
    kp->valid = false;
    for (int pass = 0; pass < 2; pass++) {
        off = 0;
        kp->buft_in = carve(mem, &off, n * sizeof(int16_t), _Alignof(int16_t));
        kp->npos = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->list = carve(mem, &off, 2 * n * sizeof(int32_t), _Alignof(int32_t));
        kp->late = carve(mem, &off, s->n_leafs * sizeof(int32_t), _Alignof(int32_t));
        kp->late_fc = carve(mem, &off, s->n_leafs * sizeof(int32_t), _Alignof(int32_t));
        kp->nv_at = carve(mem, &off, nn * sizeof(int32_t), _Alignof(int32_t));
        kp->fixed = carve(mem, &off, nn * sizeof(int32_t), _Alignof(int32_t));
        kp->lcv = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->split_out = carve(mem, &off, (nn + 1) * sizeof(int32_t), _Alignof(int32_t));
        kp->ck = carve(mem, &off, (nn / KEEP_EVERY + 2) * sizeof(ckpt), _Alignof(ckpt));
        kp->out_at = carve(mem, &off, (nn / KEEP_EVERY + 2) * sizeof(int32_t), _Alignof(int32_t));
        kp->fc = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->rule1_k = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->view_first = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->view_next = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->backend_in = carve(mem, &off, n, 1);
        kp->aside = carve(mem, &off, n, 1);
        kp->mark = carve(mem, &off, n, 1);
        kp->old_be = carve(mem, &off, n, 1);
        kp->old_mb = carve(mem, &off, n, 1);
        kp->old_splits = carve(mem, &off, (nn + 1) * sizeof(split), _Alignof(split));
        kp->old_rec = carve(mem, &off, 2 * s->max_rec * sizeof(int32_t), _Alignof(int32_t));
        kp->mid = carve(mem, &off, 3 * 2 * (s->n_leafs + nn) * sizeof(int32_t),
                        _Alignof(int32_t));
        kp->mid_map = carve(mem, &off, 2 * (s->n_leafs + nn) * sizeof(int32_t),
                            _Alignof(int32_t));
        kp->at = carve(mem, &off, nn, 1);
        if (pass == 0 && !(mem = ggfit__buf_get(&kp->own, off)))
            return ggfit__fail(s->err, GGFIT_ENOMEM, "sched: out of memory");
    }
    memset(kp->mark, 0, n);
    kp->max_ck = (int32_t)(nn / KEEP_EVERY + 2);
    kp->n_ck = 0;
    kp->n_late = 0;
    return GGFIT_OK;
}

static uint8_t at_flags(const sched *s, int32_t i)
{
    if (is_view_op(s->t[i].op))
        return AT_VIEW | (s->be[i] < 0 ? AT_LATE_VIEW : 0);
    return s->be[i] >= 0 ? AT_ANCHOR : 0;
}

/* After rule 1 from scratch: the anchors, and what rule 4 will place. A
 * leaf rule 1 leaves unassigned is placed by rule 4 at its first consumer:
 * which leafs these are depends on their own memory and inputs only, so
 * the list holds for every split of the graph. */
static void keep_rule1(sched *s)
{
    ggfit_sched_keep *kp = s->keep;
    kp->nv_pos = s->nv_k;
    int32_t n_late = 0, nv = 0;
    for (size_t k = 0; k < s->n_nodes; k++) {
        int32_t i = s->nodes[k];
        kp->at[k] = at_flags(s, i);
        kp->nv_at[k] = nv;
        if (!is_view_op(s->t[i].op))
            nv++;
        const ggfit_st *t = &s->t[i];
        for (unsigned j = 0; j < t->n_src; j++) {
            int32_t p = t->src[j];
            if (p >= 0 && (s->tf[p] & TF_LEAF) && s->be[p] < 0 && !(s->tf[p] & TF_LATE)) {
                s->tf[p] |= TF_LATE;
                kp->late[n_late] = p;
                kp->late_fc[n_late++] = (int32_t)k;
            }
        }
    }
    for (size_t q = 0; q < s->n_leafs; q++) {
        int32_t i = s->leafs[q];
        if (s->be[i] < 0 && !(s->tf[i] & TF_LATE)) {
            s->tf[i] |= TF_LATE;
            kp->late[n_late] = i;
            kp->late_fc[n_late++] = (int32_t)s->n_nodes;
        }
    }
    kp->n_late = n_late;
}

/* Called at every node position k that is a multiple of KEEP_EVERY. */
static void keep_checkpoint(sched *s, size_t k)
{
    ggfit_sched_keep *kp = s->keep;
    if (kp->n_ck < kp->max_ck)
        kp->ck[kp->n_ck++] = (ckpt){ .k = (int32_t)k, .n_splits = s->n_splits, .n_rec = s->n_rec,
                                     .cur = s->splits[s->n_splits - 1] };
}

static void keep_split_out(sched *s, int32_t sp, size_t k)
{
    s->keep->split_out[sp] = (int32_t)k;
}

static bool verify_on(void)
{
    const char *v = getenv("GGFIT_SCHED_VERIFY");
    return v && *v && strcmp(v, "0") != 0;
}

/* In GGFIT_SCHED_VERIFY runs, a copy of the output, to check the next
 * resume's n_same against. */
static void keep_prev(ggfit_sched_keep *kp, const ggfit_sched_out *out)
{
    size_t n_out = out->n_leafs + out->n_nodes;
    free(kp->prev);
    kp->prev = ggfit__malloc(n_out * sizeof *kp->prev + 1);
    kp->n_prev = kp->prev ? n_out : 0;
    kp->prev_ok = kp->prev != NULL;
    if (kp->prev)
        memcpy(kp->prev, out->t, n_out * sizeof *kp->prev);
}

/* After a split from scratch: what it was for, and its state. */
static void keep_done(ggfit_sched_keep *kp, sched *s, ggfit_sched_out *out, size_t n_lay)
{
    const ggfit_sched_in *in = s->in;
    kp->owner = in->keep_owner;
    kp->gen = in->keep_gen;
    kp->t = in->t;
    kp->leafs = in->leafs;
    kp->nodes = in->nodes;
    kp->prep = in->prep;
    kp->n = s->n;
    kp->n_leafs = s->n_leafs;
    kp->n_nodes = s->n_nodes;
    kp->n_backends = in->n_backends;
    kp->n_bufts = in->n_bufts;
    kp->op_offload = in->op_offload;
    kp->for_galloc = in->for_galloc;
    memcpy(kp->backends, in->backends, (size_t)in->n_backends * sizeof *kp->backends);
    memcpy(kp->bufts, in->bufts, (size_t)in->n_bufts * sizeof *kp->bufts);
    kp->be = s->be;
    kp->mb = s->mb;
    kp->tf = s->tf;
    kp->head = s->head;
    kp->pos = s->pos;
    kp->rec = s->rec;
    kp->slot_of = s->slot_of;
    kp->rewired = s->rewired;
    kp->srec = s->srec;
    kp->n_rec = s->n_rec;
    kp->max_rec = s->max_rec;
    kp->splits = s->splits;
    kp->n_splits = s->n_splits;
    kp->cap_out = n_lay;
    out->n_same = 0;
    kp->out = *out;
    int32_t n_nodes = (int32_t)s->n_nodes;
    for (size_t i = 0; i < s->n; i++) {
        kp->buft_in[i] = in->t[i].buft;
        kp->backend_in[i] = in->t[i].backend;
        kp->npos[i] = -1;
        kp->fc[i] = n_nodes;
        kp->lcv[i] = -1;
        kp->rule1_k[i] = -1;
        kp->view_first[i] = -1;
    }
    for (size_t k = 0; k < s->n_rule1; k++)
        kp->rule1_k[s->rule1[k]] = (int32_t)k;
    for (size_t k = 0; k < s->n_leafs + s->n_nodes; k++) {
        int32_t i = k < s->n_leafs ? s->leafs[k] : s->nodes[k - s->n_leafs], v = s->t[i].view_src;
        if (v >= 0) {
            kp->view_next[i] = kp->view_first[v];
            kp->view_first[v] = i;
        }
    }
    /* One walk down the nodes: each one's position, each tensor's first node
     * that is it or reads it, and its last that is or reads it or a view of
     * it. A resume redoes the rules from a
     * node on and keeps what the nodes before it read: that holds when every
     * node reads only nodes before it (a node not walked yet is at k or
     * after), as in any graph ggml builds. */
    kp->resumable = kp->n_ck > 0;
#define LATER(x) (kp->npos[x] < 0 && (s->tf[x] & TF_NODE))
    for (int32_t k = 0; k < n_nodes; k++) {
        int32_t i = s->nodes[k];
        const ggfit_st *t = &s->t[i];
        if (t->view_src >= 0 && LATER(t->view_src))
            kp->resumable = false;
        kp->lcv[i] = k;
        if (t->view_src >= 0)
            kp->lcv[t->view_src] = k;
        if (kp->fc[i] == n_nodes)
            kp->fc[i] = k;
        for (unsigned j = 0; j < t->n_src; j++) {
            int32_t p = t->src[j];
            if (p < 0)
                continue;
            int32_t v = s->t[p].view_src;
            kp->lcv[p] = k;
            if (v >= 0)
                kp->lcv[v] = k;
            if (kp->fc[p] == n_nodes)
                kp->fc[p] = k;
            if (LATER(p) || (v >= 0 && LATER(v)))
                kp->resumable = false;
        }
        kp->npos[i] = k;
    }
#undef LATER
    kp->valid = true;
    if (verify_on())
        keep_prev(kp, out);
}

/* Whether in is for the graph and backends the keep's split was. The
 * buffer types may differ past those both have (a fit's projections add
 * and drop the CPU's extra buffer types, AMX and CPU_REPACK, as weights
 * come to the CPU and leave it): a tensor in one of those has changed its
 * buffer type, and is redone as such. */
static bool same_config(const ggfit_sched_keep *kp, const ggfit_sched_in *in)
{
    if (kp->owner != in->keep_owner || kp->gen != in->keep_gen || kp->t != in->t ||
        kp->leafs != in->leafs || kp->nodes != in->nodes || kp->prep != in->prep ||
        kp->n != in->n_tensors || kp->n_leafs != in->n_leafs || kp->n_nodes != in->n_nodes ||
        kp->n_backends != in->n_backends || kp->op_offload != in->op_offload ||
        kp->for_galloc != in->for_galloc)
        return false;
    int common = kp->n_bufts < in->n_bufts ? kp->n_bufts : in->n_bufts;
    uint32_t mask = common >= 32 ? UINT32_MAX : (UINT32_C(1) << common) - 1;
    for (int b = 0; b < in->n_backends; b++) {
        const ggfit_sched_backend *x = &kp->backends[b], *y = &in->backends[b];
        if (x->buft != y->buft || y->buft >= common || ((x->bufts ^ y->bufts) & mask) ||
            x->is_cpu != y->is_cpu || x->offload != y->offload ||
            x->offload_min_batch != y->offload_min_batch)
            return false;
    }
    for (int b = 0; b < common; b++) {
        const ggfit_sched_buft *x = &kp->bufts[b], *y = &in->bufts[b];
        if (x->is_host != y->is_host || x->alignment != y->alignment || x->max_size != y->max_size)
            return false;
    }
    return true;
}

/* Whether tensor i and what its entry reads decide as in the kept split. */
static bool clean(const sched *s, const uint8_t *mark, int32_t i)
{
    const ggfit_st *t = &s->t[i];
    if ((mark[i] & KEEP_DIRTY) || (t->view_src >= 0 && (mark[t->view_src] & KEEP_DIRTY)))
        return false;
    for (unsigned j = 0; j < t->n_src; j++) {
        int32_t p = t->src[j];
        if (p >= 0 && ((mark[p] & KEEP_DIRTY) ||
                       (s->t[p].view_src >= 0 && (mark[s->t[p].view_src] & KEEP_DIRTY))))
            return false;
    }
    return true;
}

/* The first of the last splits that are the kept split's (the same
 * backend, nodes and inputs, the old ones shifted by the change in the
 * number of splits) and whose tensors decide as they did; n_splits when
 * none. Old splits sp0 on are in kp->old_splits, their inputs from record
 * rec0 on in kp->old_rec; no node after dirty_to is or reads (directly or
 * through a view) a dirty tensor. */
static int32_t tail_split(const sched *s, const ggfit_sched_keep *kp, int32_t sp0,
                          int32_t n_old_splits, int32_t rec0, int32_t n_old_rec, int32_t dirty_to)
{
    const uint8_t *mark = kp->mark;
    int32_t shift = s->n_splits - (sp0 + n_old_splits), j = s->n_splits - 1;
    for (; j > sp0 && j - shift > sp0; j--) {
        const split *a = &s->splits[j], *b = &kp->old_splits[j - shift - sp0];
        if (a->backend != b->backend || a->k_start != b->k_start || a->k_end != b->k_end ||
            a->n_inputs != b->n_inputs || b->rec_first < rec0 ||
            b->rec_first + b->n_inputs > rec0 + n_old_rec)
            break;
        bool same = true;
        for (int32_t r = 0; same && r < a->n_inputs; r++) {
            const copy_rec *x = &s->rec[a->rec_first + r];
            const int32_t *y = &kp->old_rec[2 * (b->rec_first - rec0 + r)];
            same = x->tensor == y[0] && x->backend == y[1] && clean(s, mark, x->tensor);
        }
        /* (nodes after dirty_to are clean; an input's own sources are
         * read earlier) */
        for (int32_t q = a->k_start; same && q < a->k_end && q <= dirty_to; q++)
            same = clean(s, mark, s->nodes[q]);
        if (!same)
            break;
    }
    return j + 1;
}

/* What each kept output entry between k0 and t_old (described in
 * kp->mid) is now: its new index, or -1. */
static void map_middle(sched *s, size_t k0, size_t t_old)
{
    const int32_t *mid = s->keep->mid;
    int32_t *map = s->keep->mid_map;
    for (size_t x = k0; x < t_old; x++) {
        const int32_t *m = &mid[3 * (x - k0)];
        int32_t to = -1;
        if (m[1] == GGFIT_SCHED_ORIG) {
            to = s->pos[m[0]];
        } else if (m[1] >= 0 && m[2] >= 0) {
            int32_t r = find_copy(s, m[0], m[2]);
            to = r >= 0 ? s->rec[r].pos_cur : -1;
        }
        map[x - k0] = to;
    }
}

/* The kept split resumed for in (see ggfit_sched_keep in sched.h). Sets
 * *done, or leaves it false when the split must start from scratch (which
 * also reports any error). The marks are all clear between calls. */
static void resume(ggfit_sched_keep *kp, const ggfit_sched_in *in, ggfit_sched_out *out,
                   bool *done)
{
    *done = false;
    if (!kp->resumable)
        return;
    const ggfit_sched_prep *prep = in->prep;
    const ggfit_st *t = in->t;
    size_t n = kp->n, n_nodes = kp->n_nodes;
    sched s = { .in = in, .t = t, .n = n, .leafs = in->leafs, .nodes = in->nodes,
                .n_leafs = in->n_leafs, .n_nodes = n_nodes, .nb = in->n_backends,
                .cpu = in->n_backends - 1, .err = NULL,
                .be = kp->be, .mb = kp->mb, .tf = kp->tf, .head = kp->head, .pos = kp->pos,
                .nv = prep->nv, .n_nv = prep->n_nv, .nv_k = kp->nv_pos, .rule1 = prep->rule1,
                .rule1_by = prep->rule1_by, .rule1_kind = prep->rule1_kind,
                .n_rule1 = prep->n_rule1, .rec = kp->rec, .n_rec = kp->n_rec,
                .slot_of = kp->slot_of, .srec = kp->srec, .rewired = kp->rewired,
                .max_rec = kp->max_rec, .splits = kp->splits, .n_splits = kp->n_splits,
                .keep = kp, .cbe = kp->out.copy_backend };
    backend_masks(&s);
    uint8_t *mark = kp->mark;
    int32_t *changed = kp->list, *aside_i = kp->list + n;
    int8_t *aside = kp->aside;

    /* What changed: a tensor's buffer type or backend, and the views of a
     * tensor whose buffer type changed (they live in its memory). A target
     * out of range, or memory that came or went, is for the full split. */
    uint32_t n_bufts = (uint32_t)in->n_bufts, n_backends = (uint32_t)in->n_backends;
    const int32_t *moving = in->moving;
    const int16_t *buft_in = kp->buft_in;
    const int8_t *backend_in = kp->backend_in;
    size_t n_chg = 0, n_scan = moving ? in->n_moving : n;
    for (size_t q = 0; q < n_scan; q++) {
        size_t i = moving ? (size_t)moving[q] : q;
        if (i >= n)
            goto scratch;
        const ggfit_st *ti = &t[i];
        if (ti->buft == buft_in[i] && ti->backend == backend_in[i])
            continue;
        if (!(s.tf[i] & (TF_LEAF | TF_NODE)))
            continue;
        if ((uint32_t)(ti->buft + 1) > n_bufts || (uint32_t)(ti->backend + 1) > n_backends ||
            ((s.tf[i] & TF_MEM) != 0) != (ti->buft >= 0))
            goto scratch;
        mark[i] = KEEP_CHANGED;
        changed[n_chg++] = (int32_t)i;
    }
    size_t n_out_old = kp->out.n_leafs + kp->out.n_nodes;
    if (n_chg == 0) {
        kp->out.n_same = kp->out.n_placed_same = n_out_old;
        kp->out.tail_new = n_out_old;
        *out = kp->out;
        *done = true;
        return;
    }
    for (size_t q = 0, n_own = n_chg; q < n_own; q++) {
        int32_t v = changed[q];   /* (a view is never a view_src) */
        for (int32_t i = kp->view_first[v]; i >= 0; i = kp->view_next[i]) {
            if (!mark[i]) {
                mark[i] = KEEP_VIEW;
                changed[n_chg++] = i;
            }
        }
    }

    /* The first node that is, or reads, a changed tensor; the rules start
     * again at the last node before it that rule 1 placed. */
    size_t first = n_nodes;
    for (size_t q = 0; q < n_chg; q++)
        if ((size_t)kp->fc[changed[q]] < first)
            first = (size_t)kp->fc[changed[q]];
    size_t kw = first;
    while (kw > 0 && !(kp->at[kw - 1] & AT_ANCHOR))
        kw--;
    if (first == n_nodes || kw == 0)
        goto scratch;
    kw--;
    int32_t c = kp->n_ck - 1;
    while (c >= 0 && kp->ck[c].k > (int32_t)kw)
        c--;
    if (c < 0)
        goto scratch;
    ckpt ck = kp->ck[c];

    /* The rules end at ke: the first node rule 1 placed after the last
     * node that is, or reads, a changed tensor (every sweep's carry starts
     * again there, and the sweeps up start there). The nodes after it keep
     * their backends when rule 3 moves no node that has one (no two
     * backends share a buffer type) and every non-view node there had one
     * before rule 3; only the views rule 4 places after their view_src, and
     * the leafs it places after theirs, may follow a change (below).
     * Otherwise the rules run to the end. */
    size_t ke = n_nodes;
    if (!s.shares_up) {
        int32_t last = -1;   /* (the views of what changed are among the changed) */
        for (size_t q = 0; q < n_chg; q++) {
            int32_t i = changed[q];
            last = kp->lcv[i] > last ? kp->lcv[i] : last;
            last = kp->npos[i] > last ? kp->npos[i] : last;
        }
        size_t k = (size_t)last + 1;
        while (k < n_nodes && !(kp->at[k] & AT_ANCHOR))
            k++;
        ke = k;
        for (; k < n_nodes && ke < n_nodes; k++)
            if (!(kp->at[k] & (AT_VIEW | AT_SWEPT)))
                ke = n_nodes;
    }

    /* Redo [kw, ke): the nodes there, the leafs rule 4 places there, and
     * what changed. */
    size_t n_late_from = 0, n_late_to;
    while (n_late_from < (size_t)kp->n_late && kp->late_fc[n_late_from] < (int32_t)kw)
        n_late_from++;
    n_late_to = n_late_from;
    while (n_late_to < (size_t)kp->n_late && kp->late_fc[n_late_to] < (int32_t)ke)
        n_late_to++;
#define REDO(i) do { int32_t i_ = (i); \
                     if (!(mark[i_] & KEEP_REDO)) { kp->old_be[i_] = s.be[i_]; kp->old_mb[i_] = s.mb[i_]; } \
                     s.be[i_] = t[i_].backend; s.mb[i_] = mem_buft_of(t, i_); \
                     mark[i_] |= KEEP_REDO; } while (0)
    /* The nodes first: each once, and its memory is as it was unless it or
     * its view_src changed (then it is among the changed, redone below). */
    for (size_t k = kw; k < ke; k++) {
        int32_t i = s.nodes[k];
        kp->old_be[i] = s.be[i];
        kp->old_mb[i] = s.mb[i];
        s.be[i] = t[i].backend;
        mark[i] |= KEEP_REDO;
    }
    for (size_t q = n_late_from; q < n_late_to; q++)
        REDO(kp->late[q]);
    for (size_t q = 0; q < n_chg; q++)
        REDO(changed[q]);
#undef REDO
    if (backends_of_list(&s, kp->rule1_k, s.nodes + kw, ke - kw) != GGFIT_OK ||
        backends_of_list(&s, kp->rule1_k, kp->late + n_late_from, n_late_to - n_late_from) != GGFIT_OK ||
        backends_of_list(&s, kp->rule1_k, changed, n_chg) != GGFIT_OK)
        goto scratch;
    /* A changed leaf keeps its part: placed by rule 1, or left to rule 4. */
    for (size_t q = 0; q < n_chg; q++) {
        int32_t i = changed[q];
        if ((s.tf[i] & TF_LEAF) && (s.be[i] < 0) != ((s.tf[i] & TF_LATE) != 0))
            goto scratch;
    }
    for (size_t k = kw; k < ke; k++) {
        int32_t i = s.nodes[k];   /* (a view stays one: at_flags) */
        kp->at[k] = kp->at[k] & AT_VIEW ? AT_VIEW | (s.be[i] < 0 ? AT_LATE_VIEW : 0)
                                        : s.be[i] >= 0 ? AT_ANCHOR : 0;
    }

    /* Rules 2 and 3 ran before rule 4 placed anything: what rule 4 placed
     * before kw is set aside while they run. */
    size_t n_aside = 0;
    for (size_t q = 0; q < n_late_from; q++) {
        aside_i[n_aside] = kp->late[q];
        aside[n_aside++] = s.be[kp->late[q]];
        s.be[kp->late[q]] = -1;
    }
    for (size_t k = 0; k < kw; k++)
        if (kp->at[k] & AT_LATE_VIEW) {
            aside_i[n_aside] = s.nodes[k];
            aside[n_aside++] = s.be[s.nodes[k]];
            s.be[s.nodes[k]] = -1;
        }
    size_t nv_kw = (size_t)kp->nv_at[kw], nv_ke = ke < n_nodes ? (size_t)kp->nv_at[ke] : s.n_nv;
    rules_2_3(&s, nv_kw, ke < n_nodes ? nv_ke + 1 : s.n_nv, nv_ke);
    for (size_t q = 0; q < n_aside; q++)
        s.be[aside_i[q]] = aside[q];
    if (rule_4(&s, kw, ke) != GGFIT_OK)
        goto scratch;
    /* What now differs from the kept split. */
    int32_t dirty_to = -1;   /* the last node that is or reads something dirty */
#define SET_DIRTY(i) do { mark[i] |= KEEP_DIRTY; \
                          dirty_to = kp->lcv[i] > dirty_to ? kp->lcv[i] : dirty_to; } while (0)
#define DIRTY(i) do { int32_t i_ = (i); \
                      if ((mark[i_] & (KEEP_CHANGED | KEEP_VIEW)) || s.be[i_] != kp->old_be[i_] || \
                          s.mb[i_] != kp->old_mb[i_]) SET_DIRTY(i_); } while (0)
    for (size_t k = kw; k < ke; k++) {
        int32_t i = s.nodes[k];   /* (its memory changed only if it did) */
        if ((mark[i] & (KEEP_CHANGED | KEEP_VIEW)) || s.be[i] != kp->old_be[i])
            SET_DIRTY(i);
    }
    for (size_t q = n_late_from; q < n_late_to; q++)
        DIRTY(kp->late[q]);
    for (size_t q = 0; q < n_chg; q++)
        DIRTY(changed[q]);
#undef DIRTY
    /* After ke, rule 4 places a view where its view_src is, and a leaf
     * where its view_src is or else where its first consumer is: those
     * follow a view_src that changed. */
    size_t n_fixed = 0;
    int32_t *fixed = kp->fixed;
    for (size_t k = ke; k < n_nodes; k++) {
        int32_t i = s.nodes[k], v = t[i].view_src;
        if (!(kp->at[k] & AT_LATE_VIEW) || !(mark[v] & KEEP_DIRTY))
            continue;
        int b = s.be[v];
        for (int cb = 0; cb < s.nb && b < 0; cb++)
            if (supports_op(&s, cb, i))
                b = cb;
        if (b < 0)
            goto scratch;
        if (b != s.be[i]) {
            s.be[i] = (int8_t)b;
            SET_DIRTY(i);
            fixed[n_fixed++] = i;
        }
    }
#undef SET_DIRTY
    for (size_t q = n_late_to; q < (size_t)kp->n_late; q++) {
        int32_t i = kp->late[q], v = t[i].view_src;
        if (v >= 0 && (mark[v] & KEEP_DIRTY))
            goto scratch;   /* (a leaf view: none in llama.cpp's graphs) */
    }

    /* Rule 5 from the checkpoint: the records made after it undone (each
     * was pushed at its tensor's head). The inputs split sp0 (under way
     * at the checkpoint) had are noted first. */
    int32_t sp0 = ck.n_splits - 1;
    split old0 = s.splits[sp0];
    int32_t n_old_in = old0.rec_first + old0.n_inputs - ck.n_rec;
    if (n_old_in < 0 || (size_t)n_old_in > n)
        n_old_in = -1;
    for (int32_t r = 0; r < n_old_in; r++) {
        aside_i[r] = s.rec[ck.n_rec + r].tensor;
        aside[r] = s.rec[ck.n_rec + r].backend;
    }
    /* The kept split's splits and inputs from there on, for a tail of
     * its output that may stay. */
    int32_t n_old_splits = s.n_splits - sp0, n_old_rec = s.n_rec - ck.n_rec;
    memcpy(kp->old_splits, s.splits + sp0, (size_t)n_old_splits * sizeof *kp->old_splits);
    for (int32_t r = 0; r < n_old_rec; r++) {
        kp->old_rec[2 * r] = s.rec[ck.n_rec + r].tensor;
        kp->old_rec[2 * r + 1] = s.rec[ck.n_rec + r].backend;
    }
    for (int32_t r = s.n_rec - 1; r >= ck.n_rec; r--)
        s.head[s.rec[r].tensor] = s.rec[r].next;
    s.n_rec = ck.n_rec;
    s.n_splits = ck.n_splits;
    s.splits[s.n_splits - 1] = ck.cur;
    kp->n_ck = c;
    if (splits_from(&s, (size_t)ck.k, (size_t)kp->nv_at[ck.k]) != GGFIT_OK)
        goto scratch;

    /* The output from the head of the split under way at the checkpoint,
     * where its copies are. */
    size_t n_leafs_out = 0;
    if (count_out(&s, &n_leafs_out) > kp->cap_out)
        goto scratch;
    /* When split sp0 has the inputs it had, in the same order, its
     * entries before node ck.k are as they were (nodes before kw read and
     * decide as before, and every index they hold is before them). */
    size_t o0 = (size_t)kp->split_out[sp0];
    const split *new0 = &s.splits[sp0];
    bool kept = n_old_in >= 0 && new0->rec_first == old0.rec_first &&
                new0->n_inputs == old0.n_inputs && ck.k > new0->k_start &&
                ck.k < old0.k_end && ck.k < new0->k_end;   /* node ck.k in sp0 both times */
    for (int32_t r = 0; kept && r < n_old_in; r++)
        kept = s.rec[ck.n_rec + r].tensor == aside_i[r] && s.rec[ck.n_rec + r].backend == aside[r];
    size_t k_kept = kept ? (size_t)kp->out_at[ck.k / KEEP_EVERY] : o0, k_head = o0;
    ggfit_sched_out *ko = &kp->out;

    /* The splits at the end that are the kept split's, on tensors that
     * decide as they did, have its output entries, moved and with their
     * indices mapped (ggfit_sched_out.tail_new): ggml-alloc's walk there
     * may meet the kept one's again. */
    int32_t tail = tail_split(&s, kp, sp0, n_old_splits, ck.n_rec, n_old_rec, dirty_to);
    size_t t_old = n_out_old;
    if (tail < s.n_splits) {
        int32_t old_j = tail - (s.n_splits - (sp0 + n_old_splits));
        t_old = (size_t)kp->split_out[old_j];
        if (t_old < k_kept || t_old > n_out_old) {
            tail = s.n_splits;
            t_old = n_out_old;
        }
    }
    for (size_t q = k_kept; tail < s.n_splits && q < t_old; q++) {
        kp->mid[3 * (q - k_kept)] = ko->origin[q];
        kp->mid[3 * (q - k_kept) + 1] = ko->kind[q];
        kp->mid[3 * (q - k_kept) + 2] = ko->copy_backend[q];
    }
    for (size_t q = k_kept; q < n_out_old; q++)
        if (ko->kind[q] == GGFIT_SCHED_ORIG)
            s.pos[ko->origin[q]] = -1;
    size_t n_placed = place_splits(&s, ko->origin, ko->kind, sp0, o0, kept ? ck.k : 0, k_kept,
                                   &k_head);
    ko->n_nodes = n_placed - ko->n_leafs;
    ko->n_splits = s.n_splits;
    ko->n_placed_same = k_kept;
    ko->tail_new = n_placed;
    ko->tail_old = n_out_old;
    ko->mid_new = kp->mid_map;
    if (tail < s.n_splits && n_placed - (size_t)kp->split_out[tail] == n_out_old - t_old) {
        ko->tail_new = (size_t)kp->split_out[tail];
        ko->tail_old = t_old;
        map_middle(&s, k_kept, t_old);
    }
    /* The leafs keep their places, not always their backends (those rule
     * 4 places at a consumer after kw). */
    size_t same = SIZE_MAX;
    fill(&s, ko, 0, ko->n_leafs, &same);
    if (kept)
        fill(&s, ko, o0, k_head, &same);
    fill(&s, ko, k_kept, n_placed, &same);
    if (same > n_placed)
        same = n_placed;
    ko->n_same = same < n_out_old ? same : n_out_old;
    /* Entries below n_same are also where they were. */
    if (ko->n_same > ko->n_placed_same) {
        ko->mid_new += ko->n_same - ko->n_placed_same;
        ko->n_placed_same = ko->n_same;
    }
    if (ko->n_placed_same > ko->tail_old) {
        ko->tail_new = n_placed;   /* (the tail starts in the same part) */
        ko->tail_old = n_out_old;
        ko->n_placed_same = ko->n_same;
    }
    for (size_t k = kw; k < ke; k++)
        ko->backend_of[s.nodes[k]] = s.be[s.nodes[k]];
    for (size_t q = n_late_from; q < n_late_to; q++)
        ko->backend_of[kp->late[q]] = s.be[kp->late[q]];
    for (size_t q = 0; q < n_fixed; q++) {
        ko->backend_of[fixed[q]] = s.be[fixed[q]];
        mark[fixed[q]] = 0;
    }

    /* The keep now describes this split. */
    for (size_t q = 0; q < n_chg; q++) {
        int32_t i = changed[q];
        ko->backend_of[i] = s.be[i];
        kp->buft_in[i] = t[i].buft;
        kp->backend_in[i] = t[i].backend;
        mark[i] = 0;
    }
    for (size_t k = kw; k < ke; k++)
        mark[s.nodes[k]] = 0;
    for (size_t q = n_late_from; q < n_late_to; q++)
        mark[kp->late[q]] = 0;
    kp->n_rec = s.n_rec;
    kp->n_splits = s.n_splits;
    kp->n_bufts = in->n_bufts;
    memcpy(kp->backends, in->backends, (size_t)in->n_backends * sizeof *kp->backends);
    memcpy(kp->bufts, in->bufts, (size_t)in->n_bufts * sizeof *kp->bufts);
    kp->n_resumed++;
    kp->n_redone += ke - kw;
    *out = *ko;
    *done = true;
    return;
scratch:
    memset(mark, 0, n);
    kp->valid = false;
}

/* GGFIT_SCHED_VERIFY: every tensor's buft and backend are the keep's
 * (which the resume updated for the moving ones only). */
static bool moving_holds(const ggfit_sched_in *in, const ggfit_sched_keep *kp)
{
    for (size_t i = 0; i < kp->n; i++)
        if ((kp->tf[i] & (TF_LEAF | TF_NODE)) &&
            (in->t[i].buft != kp->buft_in[i] || in->t[i].backend != kp->backend_in[i]))
            return false;
    return true;
}

/* GGFIT_SCHED_VERIFY: the output's tail is the kept one's, mapped (see
 * ggfit_sched_out.tail_new). */
static bool tail_holds(const ggfit_sched_out *out, const ggfit_sched_keep *kp)
{
    size_t n_out = out->n_leafs + out->n_nodes;
    if (out->tail_new > n_out || out->n_placed_same > n_out || out->n_same > out->n_placed_same)
        return false;
    if (out->tail_new == n_out)
        return true;
    if (out->tail_old > kp->n_prev || n_out - out->tail_new != kp->n_prev - out->tail_old ||
        out->tail_old < out->n_placed_same)
        return false;
    for (size_t k = out->tail_new; k < n_out; k++) {
        ggfit_gt g = kp->prev[out->tail_old + (k - out->tail_new)];
        for (int j = -1; j < (int)g.n_src; j++) {
            int32_t *x = j < 0 ? &g.view_src : &g.src[j];
            if (*x < 0 || (size_t)*x < out->n_placed_same)
                continue;
            if ((size_t)*x >= out->tail_old)
                *x = (int32_t)((size_t)*x - out->tail_old + out->tail_new);
            else if ((*x = out->mid_new[(size_t)*x - out->n_placed_same]) < 0)
                return false;
        }
        if (memcmp(&g, &out->t[k], sizeof g) != 0)
            return false;
    }
    return true;
}

/* GGFIT_SCHED_VERIFY: a resumed split against one from scratch. */
static void verify(const ggfit_sched_in *in, const ggfit_sched_out *out, ggfit_sched_keep *kp)
{
    ggfit_sched_in plain = *in;
    plain.keep = NULL;
    plain.work = NULL;
    ggfit_sched_out ref;
    char *err = NULL;
    int rc = split_full(&plain, &ref, &err, NULL);
    if (rc == GGFIT_ENOMEM) {   /* (the tests' failing allocator): nothing to check */
        ggfit_free(err);
        keep_prev(kp, out);
        return;
    }
    if (rc != GGFIT_OK) {
        fprintf(stderr, "GGFIT_SCHED_VERIFY: the split from scratch failed: %s\n",
                err ? err : "?");
        abort();
    }
    size_t n_out = out->n_leafs + out->n_nodes;
    const char *what = NULL;
    if (ref.n_leafs != out->n_leafs || ref.n_nodes != out->n_nodes || ref.n_splits != out->n_splits)
        what = "counts";
    else if (memcmp(ref.t, out->t, n_out * sizeof *out->t) != 0)
        what = "graph";
    else if (memcmp(ref.origin, out->origin, n_out * sizeof *out->origin) != 0 ||
             memcmp(ref.kind, out->kind, n_out) != 0)
        what = "origins";
    else if (memcmp(ref.backend_of, out->backend_of, in->n_tensors * sizeof *out->backend_of))
        what = "backends";
    else if (in->moving && !moving_holds(in, kp))
        what = "moving";
    else if (kp->prev_ok && !tail_holds(out, kp))
        what = "tail";
    else if (kp->prev_ok && out->n_same > kp->n_prev)
        what = "n_same";
    else if (kp->prev_ok &&
             memcmp(kp->prev, out->t, out->n_same * sizeof *out->t) != 0)
        what = "n_same";
    if (what) {
        size_t k = 0;
        while (k < n_out && k < ref.n_leafs + ref.n_nodes && !memcmp(&ref.t[k], &out->t[k], sizeof ref.t[k]))
            k++;
        fprintf(stderr, "GGFIT_SCHED_VERIFY: a resumed split differs (%s; first entry %zu of %zu)\n",
                what, k, n_out);
        for (size_t q = k > 2 ? k - 2 : 0; q < k + 3 && q < n_out && q < ref.n_leafs + ref.n_nodes; q++)
            fprintf(stderr, "  %zu: from scratch tensor %d kind %d backend %d, resumed tensor %d kind "
                    "%d backend %d\n", q, ref.origin[q], ref.kind[q], ref.t[q].backend,
                    out->origin[q], out->kind[q], out->t[q].backend);
        abort();
    }
    ggfit__sched_free(&ref);
    keep_prev(kp, out);
}

ggfit_status ggfit__sched_split(const ggfit_sched_in *in, ggfit_sched_out *out, char **err)
{
    ggfit_sched_keep *kp = in ? in->keep : NULL;
    if (!kp)
        return split_full(in, out, err, NULL);
    if (!out || !in->prep || !in->leafs || !in->nodes || in->n_copies != 1 || in->backends_only ||
        !in->backends || !in->bufts || !in->t) {
        kp->valid = false;
        return split_full(in, out, err, NULL);
    }
    if (err)
        *err = NULL;
    if (kp->valid && same_config(kp, in)) {
        bool done = false;
        resume(kp, in, out, &done);
        if (done) {
            if (verify_on())
                verify(in, out, kp);
            return GGFIT_OK;
        }
    }
    kp->valid = false;
    return split_full(in, out, err, kp);
}

ggfit_status ggfit__sched_prepare(const ggfit_sched_in *in, ggfit_sched_prep *prep, char **err)
{
    if (err)
        *err = NULL;
    if (!prep)
        return ggfit__fail(err, GGFIT_EINVAL, "sched: no prep");
    memset(prep, 0, sizeof *prep);
    if (!in || !in->t || !in->leafs || !in->nodes || !in->backends || !in->bufts)
        return ggfit__fail(err, GGFIT_EINVAL, "sched: a prep needs a graph with lists");
    int rc = check_backends(in, err);
    if (rc != GGFIT_OK)
        return rc;
    size_t n = in->n_tensors;
    if (in->n_leafs > INT32_MAX || in->n_nodes > INT32_MAX - in->n_leafs || n > INT32_MAX)
        return ggfit__fail(err, GGFIT_ELIMIT, "sched: more than 2^31 tensors");
    size_t n_list = in->n_leafs + in->n_nodes;
    char *mem = ggfit__malloc((in->n_nodes + 2 * n_list) * sizeof(int32_t) + n + n_list + 1);
    if (!mem)
        return ggfit__fail(err, GGFIT_ENOMEM, "sched: out of memory");
    prep->n = n;
    prep->nv = (int32_t *)(void *)mem;
    prep->rule1 = prep->nv + in->n_nodes;
    prep->rule1_by = prep->rule1 + n_list;
    prep->tf = (uint8_t *)(prep->rule1_by + n_list);
    prep->rule1_kind = prep->tf + n;
    memset(prep->tf, 0, n);
    sched s = { .in = in, .t = in->t, .n = n, .leafs = in->leafs, .nodes = in->nodes,
                .n_leafs = in->n_leafs, .n_nodes = in->n_nodes, .nb = in->n_backends,
                .cpu = in->n_backends - 1, .err = err, .tf = prep->tf };
    if ((rc = check_graph(&s, &prep->slots, prep)) != GGFIT_OK) {
        ggfit__sched_prep_free(prep);
        return rc;
    }
    return GGFIT_OK;
}

void ggfit__sched_prep_free(ggfit_sched_prep *prep)
{
    if (!prep)
        return;
    free(prep->nv);   /* the block starts with nv */
    memset(prep, 0, sizeof *prep);
}

void ggfit__sched_free(ggfit_sched_out *out)
{
    if (!out)
        return;
    if (!out->borrowed)
        free(out->t);   /* the block starts with t */
    memset(out, 0, sizeof *out);
}

void ggfit__sched_name(const ggfit_sched_in *in, const ggfit_sched_out *out, size_t i,
                       char name[GGFIT_SCHED_NAME])
{
    /* Built in a larger buffer, then cut to 63 characters like ggml's
     * snprintf into tensor->name. */
    char buf[3 * GGFIT_SCHED_NAME];
    const ggfit_st *t = &in->t[out->origin[i]];
    int kd = out->kind[i];
    if (kd == GGFIT_SCHED_ORIG) {
        snprintf(buf, sizeof buf, "%.63s", nm(t));
    } else if (kd == GGFIT_SCHED_DEP) {
        snprintf(buf, sizeof buf, "%.63s (view)", nm(t));
    } else {
        const char *bn = in->backends[out->t[i].backend].name;
        snprintf(buf, sizeof buf, "%.63s#%.63s#%d", bn ? bn : "?", nm(t), kd);
    }
    size_t len = strlen(buf);
    if (len > GGFIT_SCHED_NAME - 1)
        len = GGFIT_SCHED_NAME - 1;
    memcpy(name, buf, len);
    name[len] = '\0';
}
