/*
 * sched_keep.h - the scheduler's cached split, internal: a split that
 * resumes the last split of the same graph instead of starting from
 * scratch. The plain split (ggfit__sched_split, sched.h) is the default
 * everywhere; this path is for a caller that splits one graph many times
 * with only a few tensors moving between splits (a fit's projections of a
 * kept graph: src/llama/graph_cache.h says when the library takes it, and
 * GGFIT_CACHE forces it on or off). Its output is byte for byte the plain
 * split's; GGFIT_SCHED_VERIFY=1 checks every resume against one.
 *
 * A fit's projections of one graph differ in where a few tensors live; the
 * next split finds the first node that reads a tensor whose buffer type or
 * backend changed, and redoes the rules from the last node before it that
 * rule 1 placed to the end of the graph (the sweeps restart there: such a
 * node restarts every sweep's carry, and the sweeps up stop at it), the
 * splits from a checkpoint before it, and the output from the head of the
 * split under way there (a split's copies come first). What it skips is
 * the graph's head, up to the first layer that moved.
 */
#ifndef GGFIT_SCHED_KEEP_H
#define GGFIT_SCHED_KEEP_H

#include "ggml/sched.h"

/* The kept state: the last split, its scratch and its output, which the
 * next split resumes or replaces. */
typedef struct ggfit_sched_keep ggfit_sched_keep;
/* A new, empty keep (NULL when out of memory); free(NULL) does nothing. */
ggfit_sched_keep *ggfit__sched_keep_new(void);
void ggfit__sched_keep_free(ggfit_sched_keep *keep);
/* How many splits resumed from the kept state, and how many node positions
 * they redid in all (for tests and measurements). */
void ggfit__sched_keep_stats(const ggfit_sched_keep *keep, uint64_t *n_resumed, uint64_t *n_redone);

/* ggfit__sched_split, resuming keep's last split when it can. The caller
 * promises that equal (owner, gen) mean the same graph (t, lists, sources,
 * views, ops, shapes, flags) but for the tensors' buft and backend, and
 * that moving (NULL: any tensor; else n_moving of them) lists every tensor
 * whose buft or backend may differ between splits with equal owner and
 * gen. A resume needs in->prep, the lists, one copy and a graph (not
 * backends_only); otherwise, and whenever the kept split is for another
 * graph, the split is made from scratch and kept. The output borrows the
 * keep's memory (in->work is not used): it stays valid until the next
 * split with the same keep. keep NULL: a plain split. */
ggfit_status ggfit__sched_split_cached(const ggfit_sched_in *in, ggfit_sched_keep *keep,
                                      const void *owner, uint32_t gen, const int32_t *moving,
                                      size_t n_moving, ggfit_sched_out *out, char **err);

#endif
