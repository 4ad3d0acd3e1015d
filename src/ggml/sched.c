/*
 * sched.c - a model of ggml's backend scheduler; the rules are listed in
 * sched.h. Written from the behaviour of ggml_backend_sched_split_graph and
 * its helpers (ggml-backend.cpp), not from its code.
 *
 * Tensors are named by their index into the caller's array everywhere;
 * per-tensor state lives in flat arrays of that size, so no pass looks
 * anything up. This is the plain split, ggml_backend_sched_split_graph's
 * steps from the start of the graph to its end: rule 1, rules 2 and 3,
 * rule 4, rule 5's splits, then the graph for ggml-alloc. The cached split
 * (sched_keep.c) composes the same steps with what it keeps, and runs them
 * again from a position through the one-node and one-split steps that
 * sched_impl.h names; nothing here knows of it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml/sched_impl.h"

/* ------------------------------------------------------------------------
 * What a backend can do
 * ---------------------------------------------------------------------- */

/* A tensor's name for messages; unnamed ones print as "". */
static const char *nm(const ggfit_st *t)
{
    return t->name ? t->name : "";
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
void backend_masks(sched *s)
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
ggfit_status backends_of_list(sched *s, const int32_t *by_k, const int32_t *list, size_t n)
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

/* Rule 1, and the non-view nodes that rules 2, 3 and 5 walk. */
ggfit_status rule_1(sched *s)
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

    /* The non-view nodes, when no prep listed them. */
    if (!s->rule1) {
        s->n_nv = 0;
        for (size_t k = 0; k < s->n_nodes; k++)
            if (!is_view_op(s->t[s->nodes[k]].op))
                s->nv_buf[s->n_nv++] = s->nodes[k];
        s->nv = s->nv_buf;
    }
    return GGFIT_OK;
}

/* Rule 2: spread to neighbours, devices first, then any backend; rule 3,
 * which changes only the node it settles. */
static void rules_2_3(sched *s)
{
    expand(s, 1, true, 0, s->n_nv);
    expand(s, -1, true, 0, s->n_nv);
    expand(s, 1, false, 0, s->n_nv);
    expand(s, -1, false, 0, s->n_nv);
    for (size_t k = 0; k < s->n_nv; k++)
        settle(s, s->nv[k]);
}

/* Rule 4 for node i: views and leftover sources follow; the rest go to the
 * first backend that can run them. (tt and be are s's, read once by the
 * loops.) */
static inline ggfit_status rule_4_node(sched *s, const ggfit_st *tt, int8_t *be, int32_t i)
{
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
        return GGFIT_OK;
    for (int c = 0; c < s->nb && b < 0; c++)
        if (supports_op(s, c, i))
            b = c;
    if (b < 0)
        return ggfit__fail(s->err, GGFIT_EINVAL, "sched: no backend can run node %d (%.64s)",
                           (int)i, nm(t));
    be[i] = (int8_t)b;
    return GGFIT_OK;
}

static ggfit_status rule_4(sched *s)
{
    const ggfit_st *tt = s->t;
    const int32_t *nodes = s->nodes;
    int8_t *be = s->be;
    ggfit_status rc;
    for (size_t k = 0; k < s->n_nodes; k++)
        if ((rc = rule_4_node(s, tt, be, nodes[k])) != GGFIT_OK)
            return rc;
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

/* The first split: it starts at node 0 but takes the backend of the first
 * node that is not a view op, whose position it returns. */
size_t split_first(sched *s)
{
    const ggfit_st *t = s->t;
    size_t n_nodes = s->n_nodes;
    size_t k = 0;
    while (k < n_nodes && is_view_op(t[s->nodes[k]].op))
        k++;
    s->splits[0] = (split){ .backend = k < n_nodes ? s->be[s->nodes[k]]
                                     : n_nodes ? s->be[s->nodes[0]] : s->cpu };
    s->n_splits = 1;
    return k;
}

/* Rule 5 for the non-view nodes [v_from, v_to) (view ops stay in the split
 * they follow), the split under way being the last one. */
ggfit_status split_nodes(sched *s, size_t v_from, size_t v_to)
{
    _Static_assert(GGFIT_GALLOC_MAX_SRC <= 16, "a node's sources fit a mask");
    const ggfit_st *t = s->t;
    const int32_t *nodes = s->nodes, *nv_k = s->nv_k;
    const int8_t *be = s->be;
    split *sp = &s->splits[s->n_splits - 1];
    int cur = sp->backend;
    bool copies = s->in->n_copies > 1;
    for (size_t v = v_from; v < v_to; v++) {
        size_t k = (size_t)nv_k[v];
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
    return GGFIT_OK;
}

/* Rule 5: the splits and their copies, non-view node by non-view node
 * from the first to the last. */
static ggfit_status make_splits(sched *s)
{
    split_first(s);
    ggfit_status rc = split_nodes(s, 0, s->n_nv);
    s->splits[s->n_splits - 1].k_end = (int32_t)s->n_nodes;
    return rc;
}

/* ------------------------------------------------------------------------
 * Rule 6: the graph for ggml-alloc
 * ---------------------------------------------------------------------- */

/* The number of output entries place_all makes, and how many are leafs:
 * every input tensor once; n_copies - 1 more per graph input (the current
 * copy is the input itself, or its node entry); per copy record its
 * dependency view and n_copies copies, leafs when n_copies > 1. */
size_t count_out(const sched *s, size_t *n_leafs_out)
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

/* Gives the output's leafs their places (origin and kind), in ggml's order:
 * the graph inputs' copies, every split's input copies (n_copies > 1), the
 * leafs; returns their count. Called once (TF_EMITTED starts clear).
 * Positions come before contents because a dependency view may name a view
 * op placed later in its split. */
size_t place_leafs(sched *s, int32_t *origin, int8_t *kind)
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
#undef HAS_MEM
#undef PUT
    return k;
}

/* The output of split sp, its first entry at output index k: its input
 * copies, then its nodes; returns the index after it. */
size_t place_split(sched *s, int32_t *origin, int8_t *kind, int32_t sp, size_t k)
{
    int n_copies = s->in->n_copies;
    bool skip_mem = s->in->for_galloc;
    const int32_t *nodes = s->nodes;
    const int8_t *mb = s->mb;
    int32_t *pos = s->pos;
#define PUT(o, kd) do { origin[k] = (o); kind[k] = (int8_t)(kd); k++; } while (0)
#define HAS_MEM(o) (skip_mem && mem_buft(s, (o)) >= 0)
    const split *spl = &s->splits[sp];
    for (int32_t r = spl->rec_first; r < spl->rec_first + spl->n_inputs; r++) {
        if (!HAS_MEM(s->rec[r].tensor))
            PUT(s->rec[r].tensor, GGFIT_SCHED_DEP);
        if (n_copies == 1) {
            s->rec[r].pos = s->rec[r].pos_cur = (int32_t)k;
            s->cbe[k] = s->rec[r].backend;
            PUT(s->rec[r].tensor, 0);
        }
    }
    for (int32_t q = spl->k_start, end = spl->k_end; q < end; q++) {
        int32_t i = nodes[q];
        if (skip_mem && mb[i] >= 0 && !reads_fresh(s, i))
            continue;
        pos[i] = (int32_t)k;
        PUT(i, GGFIT_SCHED_ORIG);
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

/* Fills output entries [k0, n_out): all of them, or a resume's part. Not
 * inlined into its callers, so that fill_entry, the output's hottest loop,
 * is inlined here, once. */
__attribute__((noinline)) void fill_range(const sched *s, ggfit_sched_out *out, size_t k0, size_t n_out)
{
    ggfit_gt *g = out->t;
    for (size_t k = k0; k < n_out; k++)
        fill_entry(s, out, k, &g[k]);   /* (its only call: inlined) */
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
void *carve(char *base, size_t *off, size_t bytes, size_t align)
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

/* ------------------------------------------------------------------------
 * Rules 2 to 4 from a position, for a split resumed (sched_keep.c); the
 * plain split runs the same one-node steps above from the start
 * ---------------------------------------------------------------------- */

void sweep(sched *s, int dir, bool gpu_only, size_t from, size_t to)
{
    expand(s, dir, gpu_only, from, to);
}

void settle_from(sched *s, size_t nv_from)
{
    for (size_t k = nv_from; k < s->n_nv; k++)
        settle(s, s->nv[k]);
}

ggfit_status rule_4_from(sched *s, size_t k)
{
    const ggfit_st *tt = s->t;
    const int32_t *nodes = s->nodes;
    int8_t *be = s->be;
    ggfit_status rc;
    for (; k < s->n_nodes; k++)
        if ((rc = rule_4_node(s, tt, be, nodes[k])) != GGFIT_OK)
            return rc;
    return GGFIT_OK;
}

/* ------------------------------------------------------------------------
 * A split, from start to end
 * ---------------------------------------------------------------------- */

ggfit_status split_begin(sched *s, const ggfit_sched_in *in, ggfit_sched_out *out,
                         struct ggfit__buf *work, char **err, bool *stale)
{
    *s = (sched){ .in = in, .err = err, .work = work };
    *stale = false;
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

    s->t = in->t;
    s->n = n;
    s->leafs = in->leafs;
    s->nodes = in->nodes;
    s->n_leafs = in->n_leafs;
    s->n_nodes = in->n_nodes;
    s->nb = in->n_backends;
    s->cpu = in->n_backends - 1;

    /* Scratch, one block: per-tensor state, the dense lists when the caller
     * gave none, a copy record per source slot and a split per node (both
     * bounds, touched only as far as used). The slot count is known after
     * the lists are checked, so the records go in a second block. */
    size_t off = 0;
    char *mem = NULL;
    for (int pass = 0; pass < 2; pass++) {
        off = 0;
        s->be = carve(mem, &off, n, 1);
        s->mb = carve(mem, &off, n, 1);
        s->tf = carve(mem, &off, n, 1);
        s->head = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        s->pos = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        s->slot_of = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        s->nv_k = carve(mem, &off, in->n_nodes * sizeof(int32_t), _Alignof(int32_t));
        s->rewired = carve(mem, &off, n * sizeof(uint16_t), _Alignof(uint16_t));
        s->graph_inputs = carve(mem, &off, (in->n_copies > 1 ? n : 0) * sizeof(int32_t),
                                _Alignof(int32_t));
        int32_t *lists = carve(mem, &off, (dense ? n : 0) * sizeof(int32_t), _Alignof(int32_t));
        s->splits = carve(mem, &off, (in->n_nodes + 1) * sizeof(split), _Alignof(split));
        s->nv_buf = carve(mem, &off, (prep ? 0 : in->n_nodes) * sizeof(int32_t),
                          _Alignof(int32_t));
        if (pass == 0 && !(mem = work ? ggfit__buf_get(&work[0], off) : ggfit__malloc(off)))
            return ggfit__fail(err, GGFIT_ENOMEM, "sched: out of memory");
        s->scratch = mem;
        if (pass == 1 && dense) {
            for (size_t i = 0; i < n; i++)
                lists[i] = (int32_t)i;
            s->leafs = lists;
            s->nodes = lists + in->n_leafs;
        }
    }
    size_t slots = 0;
    if (prep) {
        /* Checked when prepared; only the buffer types and backends are new. */
        memcpy(s->tf, prep->tf, n);
        slots = prep->slots;
        s->nv = prep->nv;
        s->n_nv = prep->n_nv;
        s->rule1 = prep->rule1;
        s->rule1_by = prep->rule1_by;
        s->rule1_kind = prep->rule1_kind;
        s->n_rule1 = prep->n_rule1;
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
            bool listed = s->tf[i] & (TF_LEAF | TF_NODE);
            s->be[i] = listed ? ti->backend : -1;
            s->mb[i] = listed ? mem_buft_of(in->t, (int32_t)i) : -1;
            s->head[i] = -1;
            s->rewired[i] = 0;
            s->pos[i] = -1;
            bad |= listed && ((uint32_t)(ti->buft + 1) > n_bufts ||
                              (uint32_t)(ti->backend + 1) > n_backends ||
                              ((s->tf[i] & TF_MEM) != 0) != (ti->buft >= 0));
        }
        for (size_t k = 0; bad && k < s->n_leafs + s->n_nodes; k++) {
            int32_t i = k < s->n_leafs ? s->leafs[k] : s->nodes[k - s->n_leafs];
            const ggfit_st *ti = &in->t[i];
            if ((uint32_t)(ti->buft + 1) > n_bufts || (uint32_t)(ti->backend + 1) > n_backends)
                return check_targets(s, i);
            if (((s->tf[i] & TF_MEM) != 0) != (ti->buft >= 0)) {
                /* Memory came or went: the prep no longer holds. */
                *stale = true;
                return GGFIT_OK;
            }
        }
    } else {
        memset(s->tf, 0, n);
        if ((rc = check_graph(s, &slots, NULL)) != GGFIT_OK)
            return rc;
        for (size_t i = 0; i < n; i++) {
            bool listed = s->tf[i] & (TF_LEAF | TF_NODE);
            s->be[i] = listed ? in->t[i].backend : -1;
            s->mb[i] = listed ? mem_buft_of(in->t, (int32_t)i) : -1;
            if (listed && weight_of(&in->t[i]))
                s->tf[i] |= TF_WEIGHT;
            s->head[i] = -1;
            s->rewired[i] = 0;
            s->pos[i] = -1;
        }
    }
    if (slots > INT32_MAX || slots > SIZE_MAX / (sizeof(copy_rec) + sizeof(int32_t)))
        return ggfit__fail(err, GGFIT_ELIMIT, "sched: graph too large");
    /* The copy records, then per source slot the record it reads. */
    size_t rec_bytes = slots * (sizeof(copy_rec) + sizeof(int32_t));
    copy_rec *recs = work ? ggfit__buf_get(&work[1], rec_bytes) : ggfit__malloc(rec_bytes);
    if (!recs)
        return ggfit__fail(err, GGFIT_ENOMEM, "sched: out of memory");
    s->rec = recs;
    s->max_rec = (int32_t)slots;
    s->srec = (int32_t *)(void *)(recs + slots);
    int32_t slot = 0, n_nv = 0;
    for (size_t k = 0; k < s->n_nodes; k++) {
        const ggfit_st *tk = &in->t[s->nodes[k]];
        if (!is_view_op(tk->op)) {
            s->slot_of[s->nodes[k]] = slot;
            slot += tk->n_src;
            s->nv_k[n_nv++] = (int32_t)k;
        }
    }
    backend_masks(s);
    return GGFIT_OK;
}

void split_end(sched *s)
{
    if (!s->work) {
        free(s->rec);
        free(s->scratch);
    }
    s->rec = NULL;
    s->scratch = NULL;
}

ggfit_status output_begin(sched *s, ggfit_sched_out *out, size_t n_lay)
{
    /* The caller's buffer is asked for room for twice the graph's tensors
     * (a view and a copy per tensor; llama.cpp's graphs copy far fewer): a
     * fit's later splits of the same graph, with more copies than the
     * first, then fit in it, where growing it would move it to fresh pages
     * (each a fault), and the pages past what a split uses are never
     * touched. */
    const ggfit_sched_in *in = s->in;
    size_t o_off = out_layout(NULL, out, n_lay, s->n);
    size_t o_want = out_layout(NULL, out, 2 * (s->n_leafs + s->n_nodes), s->n);
    char *omem = s->work ? ggfit__buf_get(&s->work[2], o_want > o_off ? o_want : o_off)
                         : ggfit__malloc(o_off);
    if (!omem) {
        memset(out, 0, sizeof *out);
        return ggfit__fail(s->err, GGFIT_ENOMEM, "sched: out of memory");
    }
    out_layout(omem, out, n_lay, s->n);
    s->cbe = out->copy_backend;
    out->borrowed = s->work != NULL;
    out->n_backends = in->n_backends;
    return GGFIT_OK;
}

ggfit_status output_graph(sched *s, ggfit_sched_out *out, size_t n_out, size_t n_leafs_out,
                          size_t n_placed, size_t n_leafs_placed)
{
    /* count_out is exact, or with for_galloc a bound */
    if (s->in->for_galloc ? n_placed > n_out || n_leafs_placed > n_leafs_out
                          : n_placed != n_out || n_leafs_placed != n_leafs_out) {
        ggfit__sched_free(out);   /* unreachable */
        return ggfit__fail(s->err, GGFIT_EINVAL, "sched: output count mismatch");
    }
    out->n_leafs = n_leafs_placed;
    out->n_nodes = n_placed - n_leafs_placed;
    out->n_splits = s->n_splits;
    return GGFIT_OK;
}

void output_backends(const sched *s, ggfit_sched_out *out)
{
    const ggfit_sched_in *in = s->in;
    for (size_t i = 0; i < s->n; i++)
        out->backend_of[i] = s->be[i];
    /* ggml-alloc keeps one allocator per distinct buffer type. */
    for (int b = 0; b < in->n_backends; b++) {
        const ggfit_sched_buft *bt = &in->bufts[in->backends[b].buft];
        out->galloc[b] = (ggfit_galloc_buft){ .alignment = bt->alignment,
                                              .max_size = bt->max_size, .same_as = -1 };
        for (int a = 0; a < b && out->galloc[b].same_as < 0; a++)
            if (in->backends[a].buft == in->backends[b].buft)
                out->galloc[b].same_as = a;
    }
}

/* ggml_backend_sched_split_graph: the rules from the first node to the
 * last, the splits, then the graph for ggml-alloc. */
ggfit_status ggfit__sched_split(const ggfit_sched_in *in, ggfit_sched_out *out, char **err)
{
    sched s;
    bool stale;
    ggfit_status rc = split_begin(&s, in, out, in ? in->work : NULL, err, &stale);
    if (rc == GGFIT_OK && stale) {
        split_end(&s);
        ggfit_sched_in plain = *in;
        plain.prep = NULL;
        return ggfit__sched_split(&plain, out, err);
    }
    if (rc == GGFIT_OK && (rc = rule_1(&s)) == GGFIT_OK) {
        rules_2_3(&s);
        rc = rule_4(&s);
    }
    if (rc == GGFIT_OK && !in->backends_only)
        rc = make_splits(&s);
    size_t n_leafs_out = 0, n_out = 0;
    if (rc == GGFIT_OK && !in->backends_only)
        n_out = count_out(&s, &n_leafs_out);
    if (rc == GGFIT_OK)
        rc = output_begin(&s, out, n_out);
    if (rc == GGFIT_OK && !in->backends_only) {
        size_t n_leafs_placed = place_leafs(&s, out->origin, out->kind), n_placed = n_leafs_placed;
        for (int32_t sp = 0; sp < s.n_splits; sp++)
            n_placed = place_split(&s, out->origin, out->kind, sp, n_placed);
        if ((rc = output_graph(&s, out, n_out, n_leafs_out, n_placed, n_leafs_placed)) ==
            GGFIT_OK)
            fill_range(&s, out, 0, n_placed);
    }
    if (rc == GGFIT_OK)
        output_backends(&s, out);
    split_end(&s);
    return rc;
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
