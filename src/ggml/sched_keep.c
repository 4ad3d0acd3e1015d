/*
 * sched_keep.c - a split resumed from the last one (sched_keep.h): a split
 * from scratch made of sched.c's steps with the state it keeps taken
 * between them (split_kept), and the resume that redoes the rules, the
 * splits and the output only where the tensors that moved can change them,
 * running the same steps from a position. GGFIT_SCHED_VERIFY=1 checks
 * every resume against a split from scratch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml/sched_impl.h"

ggfit_sched_keep *ggfit__sched_keep_new(void)
{
    return ggfit__calloc(1, sizeof(ggfit_sched_keep));
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
    free(kp);
}

/* ------------------------------------------------------------------------
 * The steps from a position
 * ---------------------------------------------------------------------- */

/* Rules 2 and 3 over the non-view nodes from nv_from on. */
static void rules_2_3_from(sched *s, size_t nv_from)
{
    sweep(s, 1, true, nv_from, s->n_nv);
    sweep(s, -1, true, nv_from, s->n_nv);
    sweep(s, 1, false, nv_from, s->n_nv);
    sweep(s, -1, false, nv_from, s->n_nv);
    settle_from(s, nv_from);
}

/* Rule 5's state before node position k, kept at every multiple of
 * KEEP_EVERY. */
static void keep_checkpoint(ggfit_sched_keep *kp, const sched *s, size_t k)
{
    if (kp->n_ck < kp->max_ck)
        kp->ck[kp->n_ck++] = (ckpt){ .k = (int32_t)k, .n_splits = s->n_splits, .n_rec = s->n_rec,
                                     .cur = s->splits[s->n_splits - 1] };
}

/* Rule 5 from node position k (non-view node v) on, the split under way
 * being the last one, with a checkpoint at every multiple of KEEP_EVERY
 * it passes. */
static ggfit_status splits_from(sched *s, ggfit_sched_keep *kp, size_t k, size_t v)
{
    size_t n_nodes = s->n_nodes, n_nv = s->n_nv;
    size_t next_ck = (k + KEEP_EVERY - 1) / KEEP_EVERY * KEEP_EVERY;
    ggfit_status rc;
    for (;;) {
        /* The non-view nodes before the next checkpoint (nv_at: the first
         * at or after a position), then the checkpoints up to the node
         * after them: the views before it change nothing. */
        size_t v_to = next_ck < n_nodes ? (size_t)kp->nv_at[next_ck] : n_nv;
        if (v_to > v && (rc = split_nodes(s, v, v_to)) != GGFIT_OK)
            return rc;
        if (v_to > v)
            v = v_to;
        k = v < n_nv ? (size_t)s->nv_k[v] : n_nodes;
        for (; next_ck <= k && next_ck < n_nodes; next_ck += KEEP_EVERY)
            keep_checkpoint(kp, s, next_ck);
        if (k == n_nodes)
            break;
    }
    s->splits[s->n_splits - 1].k_end = (int32_t)n_nodes;
    return GGFIT_OK;
}

/* The output of splits sp0 on, the first at output index k, each split's
 * first index kept; returns the output's count. */
static size_t place_splits_from(sched *s, ggfit_sched_keep *kp, int32_t *origin, int8_t *kind,
                                int32_t sp0, size_t k)
{
    for (int32_t sp = sp0; sp < s->n_splits; sp++) {
        kp->split_out[sp] = (int32_t)k;
        k = place_split(s, origin, kind, sp, k);
    }
    return k;
}

/* ------------------------------------------------------------------------
 * A split from scratch, kept
 * ---------------------------------------------------------------------- */

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
        kp->split_out = carve(mem, &off, (nn + 1) * sizeof(int32_t), _Alignof(int32_t));
        kp->ck = carve(mem, &off, (nn / KEEP_EVERY + 2) * sizeof(ckpt), _Alignof(ckpt));
        kp->fc = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->rule1_k = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->view_first = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->view_next = carve(mem, &off, n * sizeof(int32_t), _Alignof(int32_t));
        kp->backend_in = carve(mem, &off, n, 1);
        kp->aside = carve(mem, &off, n, 1);
        kp->mark = carve(mem, &off, n, 1);
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
static void keep_rule1(ggfit_sched_keep *kp, sched *s)
{
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

static bool verify_on(void)
{
    const char *v = getenv("GGFIT_SCHED_VERIFY");
    return v && *v && strcmp(v, "0") != 0;
}

/* After a split from scratch: what it was for, and its state. */
static void keep_done(ggfit_sched_keep *kp, sched *s, ggfit_sched_out *out, size_t n_lay)
{
    const ggfit_sched_in *in = s->in;
    kp->owner = kp->want_owner;
    kp->gen = kp->want_gen;
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
    kp->out = *out;
    int32_t n_nodes = (int32_t)s->n_nodes;
    for (size_t i = 0; i < s->n; i++) {
        kp->buft_in[i] = in->t[i].buft;
        kp->backend_in[i] = in->t[i].backend;
        kp->npos[i] = -1;
        kp->fc[i] = n_nodes;
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
    /* One walk down the nodes: each one's position, and each tensor's first
     * node that is it or reads it. A resume redoes the rules from a
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
        if (kp->fc[i] == n_nodes)
            kp->fc[i] = k;
        for (unsigned j = 0; j < t->n_src; j++) {
            int32_t p = t->src[j];
            if (p < 0)
                continue;
            int32_t v = s->t[p].view_src;
            if (kp->fc[p] == n_nodes)
                kp->fc[p] = k;
            if (LATER(p) || (v >= 0 && LATER(v)))
                kp->resumable = false;
        }
        kp->npos[i] = k;
    }
#undef LATER
    kp->valid = true;
}

/* ggfit__sched_split's steps, the keep's state taken between them: its
 * arrays sized, what rule 1 left, rule 5's checkpoints, each split's first
 * output index, and at the end what the split was for. The output's
 * layout has room for twice the graph's tensors, which a resume keeps. */
static ggfit_status split_kept(const ggfit_sched_in *in, ggfit_sched_out *out, char **err,
                               ggfit_sched_keep *kp)
{
    sched s;
    bool stale;
    ggfit_status rc = split_begin(&s, in, out, kp->work, err, &stale);
    if (rc == GGFIT_OK && stale) {
        split_end(&s);
        ggfit_sched_in plain = *in;
        plain.prep = NULL;
        return ggfit__sched_split(&plain, out, err);
    }
    if (rc == GGFIT_OK)
        rc = keep_size(kp, &s);
    if (rc == GGFIT_OK && (rc = rule_1(&s)) == GGFIT_OK) {
        keep_rule1(kp, &s);
        rules_2_3_from(&s, 0);
        rc = rule_4_from(&s, 0);
    }
    if (rc == GGFIT_OK)
        rc = splits_from(&s, kp, split_first(&s), 0);
    size_t n_leafs_out = 0, n_out = 0, n_lay = 0;
    if (rc == GGFIT_OK) {
        n_out = count_out(&s, &n_leafs_out);
        n_lay = n_out > 2 * (s.n_leafs + s.n_nodes) ? n_out : 2 * (s.n_leafs + s.n_nodes);
        rc = output_begin(&s, out, n_lay);
    }
    if (rc == GGFIT_OK) {
        size_t n_leafs_placed = place_leafs(&s, out->origin, out->kind);
        size_t n_placed = place_splits_from(&s, kp, out->origin, out->kind, 0, n_leafs_placed);
        if ((rc = output_graph(&s, out, n_out, n_leafs_out, n_placed, n_leafs_placed)) ==
            GGFIT_OK)
            fill_range(&s, out, 0, n_placed);
    }
    if (rc == GGFIT_OK) {
        output_backends(&s, out);
        keep_done(kp, &s, out, n_lay);
    }
    split_end(&s);
    return rc;
}

/* ------------------------------------------------------------------------
 * The resume
 * ---------------------------------------------------------------------- */

/* Whether in is for the graph and backends the keep's split was. The
 * buffer types may differ past those both have (a fit's projections add
 * and drop the CPU's extra buffer types, AMX and CPU_REPACK, as weights
 * come to the CPU and leave it): a tensor in one of those has changed its
 * buffer type, and is redone as such. */
static bool same_config(const ggfit_sched_keep *kp, const ggfit_sched_in *in)
{
    if (kp->owner != kp->want_owner || kp->gen != kp->want_gen || kp->t != in->t ||
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

/* The kept split resumed for in (see sched_keep.h). Sets
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
                .cbe = kp->out.copy_backend, .work = kp->work };
    backend_masks(&s);
    uint8_t *mark = kp->mark;
    int32_t *changed = kp->list, *aside_i = kp->list + n;
    int8_t *aside = kp->aside;

    /* What changed: a tensor's buffer type or backend, and the views of a
     * tensor whose buffer type changed (they live in its memory). A target
     * out of range, or memory that came or went, is for the full split. */
    uint32_t n_bufts = (uint32_t)in->n_bufts, n_backends = (uint32_t)in->n_backends;
    const int32_t *moving = kp->moving;
    const int16_t *buft_in = kp->buft_in;
    const int8_t *backend_in = kp->backend_in;
    size_t n_chg = 0, n_scan = moving ? kp->n_moving : n;
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

    /* Redo the rules from kw to the end: the nodes there, the leafs rule
     * 4 places there, and what changed. */
    size_t n_late_from = 0, n_late = 0;   /* (those with a consumer) */
    while (n_late < (size_t)kp->n_late && kp->late_fc[n_late] < (int32_t)n_nodes)
        n_late++;
    while (n_late_from < n_late && kp->late_fc[n_late_from] < (int32_t)kw)
        n_late_from++;
    /* Each node once; its memory is as it was unless it or its view_src
     * changed (then it is among the changed, redone below). */
    for (size_t k = kw; k < n_nodes; k++) {
        int32_t i = s.nodes[k];
        s.be[i] = t[i].backend;
    }
    for (size_t q = n_late_from; q < n_late; q++) {
        int32_t i = kp->late[q];
        s.be[i] = t[i].backend;
        s.mb[i] = mem_buft_of(t, i);
    }
    for (size_t q = 0; q < n_chg; q++) {
        int32_t i = changed[q];
        s.be[i] = t[i].backend;
        s.mb[i] = mem_buft_of(t, i);
    }
    if (backends_of_list(&s, kp->rule1_k, s.nodes + kw, n_nodes - kw) != GGFIT_OK ||
        backends_of_list(&s, kp->rule1_k, kp->late + n_late_from, n_late - n_late_from) != GGFIT_OK ||
        backends_of_list(&s, kp->rule1_k, changed, n_chg) != GGFIT_OK)
        goto scratch;
    /* A changed leaf keeps its part: placed by rule 1, or left to rule 4. */
    for (size_t q = 0; q < n_chg; q++) {
        int32_t i = changed[q];
        if ((s.tf[i] & TF_LEAF) && (s.be[i] < 0) != ((s.tf[i] & TF_LATE) != 0))
            goto scratch;
    }
    for (size_t k = kw; k < n_nodes; k++) {
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
    rules_2_3_from(&s, (size_t)kp->nv_at[kw]);
    for (size_t q = 0; q < n_aside; q++)
        s.be[aside_i[q]] = aside[q];
    if (rule_4_from(&s, kw) != GGFIT_OK)
        goto scratch;

    /* Rule 5 from the checkpoint: the records made after it undone (each
     * was pushed at its tensor's head). */
    int32_t sp0 = ck.n_splits - 1;
    for (int32_t r = s.n_rec - 1; r >= ck.n_rec; r--)
        s.head[s.rec[r].tensor] = s.rec[r].next;
    s.n_rec = ck.n_rec;
    s.n_splits = ck.n_splits;
    s.splits[s.n_splits - 1] = ck.cur;
    kp->n_ck = c;
    if (splits_from(&s, kp, (size_t)ck.k, (size_t)kp->nv_at[ck.k]) != GGFIT_OK)
        goto scratch;

    /* The output from the head of the split under way at the checkpoint,
     * where its copies are. */
    size_t n_leafs_out = 0;
    if (count_out(&s, &n_leafs_out) > kp->cap_out)
        goto scratch;
    size_t o0 = (size_t)kp->split_out[sp0];
    ggfit_sched_out *ko = &kp->out;
    for (size_t q = o0; q < n_out_old; q++)
        if (ko->kind[q] == GGFIT_SCHED_ORIG)
            s.pos[ko->origin[q]] = -1;
    size_t n_placed = place_splits_from(&s, kp, ko->origin, ko->kind, sp0, o0);
    ko->n_nodes = n_placed - ko->n_leafs;
    ko->n_splits = s.n_splits;
    /* The leafs keep their places, not always their backends (those rule
     * 4 places at a consumer after kw). */
    fill_range(&s, ko, 0, ko->n_leafs);
    fill_range(&s, ko, o0, n_placed);
    for (size_t k = kw; k < n_nodes; k++)
        ko->backend_of[s.nodes[k]] = s.be[s.nodes[k]];
    for (size_t q = n_late_from; q < n_late; q++)
        ko->backend_of[kp->late[q]] = s.be[kp->late[q]];

    /* The keep now describes this split. */
    for (size_t q = 0; q < n_chg; q++) {
        int32_t i = changed[q];
        ko->backend_of[i] = s.be[i];
        kp->buft_in[i] = t[i].buft;
        kp->backend_in[i] = t[i].backend;
        mark[i] = 0;
    }
    kp->n_rec = s.n_rec;
    kp->n_splits = s.n_splits;
    kp->n_bufts = in->n_bufts;
    memcpy(kp->backends, in->backends, (size_t)in->n_backends * sizeof *kp->backends);
    memcpy(kp->bufts, in->bufts, (size_t)in->n_bufts * sizeof *kp->bufts);
    kp->n_resumed++;
    kp->n_redone += n_nodes - kw;
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

/* GGFIT_SCHED_VERIFY: a resumed split against one from scratch. */
static void verify(const ggfit_sched_in *in, const ggfit_sched_out *out, ggfit_sched_keep *kp)
{
    ggfit_sched_in plain = *in;
    plain.work = NULL;
    ggfit_sched_out ref;
    char *err = NULL;
    int rc = ggfit__sched_split(&plain, &ref, &err);
    if (rc == GGFIT_ENOMEM) {   /* (the tests' failing allocator): nothing to check */
        ggfit_free(err);
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
    else if (kp->moving && !moving_holds(in, kp))
        what = "moving";
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
}

ggfit_status ggfit__sched_split_cached(const ggfit_sched_in *in, ggfit_sched_keep *kp,
                                      const void *owner, uint32_t gen, const int32_t *moving,
                                      size_t n_moving, ggfit_sched_out *out, char **err)
{
    if (!kp)
        return ggfit__sched_split(in, out, err);
    if (!in || !out || !in->prep || !in->leafs || !in->nodes || in->n_copies != 1 ||
        in->backends_only || !in->backends || !in->bufts || !in->t) {
        kp->valid = false;
        return ggfit__sched_split(in, out, err);
    }
    if (err)
        *err = NULL;
    kp->want_owner = owner;
    kp->want_gen = gen;
    kp->moving = moving;
    kp->n_moving = n_moving;
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
    return split_kept(in, out, err, kp);
}
