/*
 * graph_cache.h - the graphs kept between projections. A fit projects the
 * same model dozens of times with one graph structure; a kept graph is only
 * re-targeted (where weights and caches live, which device each layer is
 * on), which gives the bytes a fresh build would (tests/test_cache.c).
 */
#ifndef GGFIT_GRAPH_CACHE_H
#define GGFIT_GRAPH_CACHE_H

#include "base/base.h"
#include "ggml/galloc.h"
#include "ggml/ggml.h"
#include "ggml/sched.h"
#include "ggml/sched_keep.h"
#include "llama/build.h"

/* What a graph's structure depends on, apart from the model: equal keys
 * build equal graphs up to the buffer types of weights and caches. */
typedef struct gkey {
    uint64_t model;        /* ggfit__model_serial */
    uint32_t n_tokens, n_outputs, n_seqs, n_stream, n_kv, n_kv_swa, swa_period;
    uint32_t type_k, type_v;
    int32_t cpu_backend, pooling;
    bool swa, flash_attn, v_trans, no_kv_offload, pin_norms;
    bool tied_copy;        /* the tied output has its own copy of token_embd */
    bool mtp;              /* an MTP context's graph */
    uint32_t n_rs_seq;     /* the recurrent state's rollback snapshots */
    uint32_t llama_build;  /* whose graph */
} gkey;

/* The tensors of a kept graph that a retarget may change, in tensor
 * order: weights (the per-buffer-type copies of one included, which the
 * rope retarget looks for), the tied output's copy, caches and pinned
 * nodes; about a third of the graph, which a retarget then walks instead of
 * all of it. Made by the first retarget of a graph; valid goes false when
 * the graph is rebuilt or gains a copy of the rope factors. */
typedef struct gmoving {
    ggfit__buf idx;        /* int32_t per tensor listed */
    uint32_t n;
    bool valid;
} gmoving;

/* One kept graph, or the memory of one (a graph whose build failed). */
typedef struct gentry {
    gg_graph g;
    gkey key;
    bool valid;            /* g is key's graph */
    uint32_t used;         /* the cache's clock when last used */
    ggfit_sched_prep prep; /* the scheduler's structural work on g, or empty */
    gmoving moving;        /* what a retarget of g may change */
    uint32_t gen;          /* counts the changes of g's structure: the
                              scheduler's kept split from an earlier
                              projection holds only for the same entry and
                              gen */
} gentry;

/* Two graphs: a fit projects its start, then its reduced context with the
 * -fa auto probe before each projection that leaves layers on the CPU; the
 * probe and the projection then take turns. The least recently used graph
 * makes way for a new one, in its memory: fresh pages cost more than the
 * build (each is a page fault), so memory is reused rather than kept. */
#define GCACHE_SLOTS 2

/* One projection kept with its inputs (see ggfit__pmemo_find). Four are
 * kept, the least recently used making way: the fit's last projection, and
 * the nearest changes' checks of the value they settle on, repeat one of
 * the last few. */
typedef struct pmemo {
    ggfit__buf key;        /* the inputs, as pmemo_key writes them */
    size_t n_key;          /* bytes of key; 0: the slot is empty */
    uint32_t used;         /* the cache's clock when last used */
    ggfit_projection out;
    ggfit__buf placement;  /* int32_t per tensor of the model */
} pmemo;

#define PMEMO_SLOTS 4

/* One -fa auto probe's finding kept with its inputs (ggfit__famemo_find):
 * a fit projects each placement at several contexts, and the probe splits
 * a graph whose structure and devices do not depend on the context. Eight
 * are kept, the least recently used making way. */
typedef struct famemo {
    ggfit__buf key;        /* the probe's inputs, as graph_reserve.c writes them */
    size_t n_key;          /* bytes of key; 0: the slot is empty */
    uint32_t used;
    bool mismatch;         /* an FA node left its layer's device */
} famemo;

#define FAMEMO_SLOTS 8
struct ggfit__gcache {
    gentry e[GCACHE_SLOTS];
    uint32_t clock;
    ggfit__buf work[GGFIT_SCHED_WORK + 1]; /* the scheduler's, then ggml-alloc's
                                              scratch, kept between projections */
    struct ggfit_sched_keep *keep; /* the scheduler's last split of a
                                      kept graph, to resume from; NULL until
                                      one is made */
    bool cached_split;     /* the run-time option: splits of a kept graph
                              resume the last one (ggfit__gcache_split).
                              False for a new model's cache; ggfit_fit sets
                              it, and the model's later projections (the
                              verdict's, the speed search's), which split
                              the same kept graphs, keep it */
    pmemo memo[PMEMO_SLOTS];
    ggfit__buf memo_key;   /* the key of the projection under way */
    size_t n_memo_key;     /* 0: none (not kept) */
    famemo fa[FAMEMO_SLOTS];
    ggfit__buf fa_key;     /* the key of the probe under way */
    size_t n_fa_key;       /* 0: none (not kept) */
};

void ggfit__gkey_make(gkey *k, const gb_params *p);
/* The entry holding key's graph, or NULL. */
gentry *ggfit__gcache_find(struct ggfit__gcache *c, const gkey *key);
/* The entry a new graph for key is built in (its memory reused). */
gentry *ggfit__gcache_victim(struct ggfit__gcache *c, const gkey *key);
/* Lists in mv the tensors of g a retarget may change; false when out of
 * memory. */
bool ggfit__gcache_moving_make(const gg_graph *g, gmoving *mv);
/* Points a kept graph's weights, caches and pinned nodes at the buffer
 * types and backends of this projection; mv (made valid here) lists the
 * tensors to visit. */
void ggfit__gcache_retarget(gg_graph *g, gmoving *mv, const ggfit_model *m,
                            const int32_t *placement, const int32_t *kv_buft,
                            const int32_t *layer_backend, int32_t tied_buft);
/* Points each rope node at its layer's copy of the rope factors (mv, as
 * the retarget left it, lists the copies there are); 1 when a source
 * changed (the lists must be expanded again, and mv made again), 0 when
 * none did, -1 when out of memory. */
int ggfit__gcache_retarget_dups(gg_graph *g, const gmoving *mv, const ggfit_model *m,
                                const int32_t *placement, const int32_t *layer_buft);

/* Projections already made, by their inputs. A projection is a function
 * of the model, the flags and the devices alone (the kept graphs change
 * what it costs, not its bytes), so the same inputs can take the kept
 * result: a fit's last projection repeats the step it chose, and the
 * verdict projects again the flags it judges, to learn where each tensor
 * lands. The key is those inputs byte for byte (ggfit_params and
 * ggfit_device hold no pointers; a flag added to them is in the key by
 * itself). Nothing kept goes stale: the model, which owns the cache, does
 * not change after it is opened. find returns true and fills out (and
 * placement, when not NULL) on a hit; on a miss it remembers the inputs,
 * and put then keeps the result under them. With GGFIT_DEBUG_GRAPH set,
 * nothing is kept (each projection dumps its graph). */
bool ggfit__pmemo_find(struct ggfit__gcache *c, const ggfit_model *m, const ggfit_params *p,
                       const ggfit_device *devs, size_t n, ggfit_projection *out,
                       int32_t *placement);
void ggfit__pmemo_put(struct ggfit__gcache *c, const ggfit_projection *out,
                      const int32_t *placement, uint64_t n_tensors);

/* -fa auto probes already made, by their inputs: the caller writes the
 * key's n bytes into c->fa_key. find returns true and sets *mismatch on a
 * hit; on a miss it remembers the key, and put keeps the finding under it. */
bool ggfit__famemo_find(struct ggfit__gcache *c, size_t n, bool *mismatch);
void ggfit__famemo_put(struct ggfit__gcache *c, bool mismatch);

/* Notes that e's graph changed its structure (see gentry.gen). */
void ggfit__gentry_changed(gentry *e);

/* The pieces of the incremental machinery, each kept because a command
 * gains from it (make bench times each one):
 *   graphs       a kept graph is re-targeted rather than built again, and
 *                the scheduler's structural work on it (ggfit_sched_prep)
 *                is done once;
 *   projections  a projection with the inputs of a recent one takes its
 *                result (ggfit__pmemo_find);
 *   resume       the scheduler's split of a kept graph resumes the last
 *                one (ggfit__sched_split_cached) rather than starting from
 *                scratch; needs graphs;
 *   probes       a -fa auto probe with the inputs of a recent one, but for
 *                the context, takes its finding (ggfit__famemo_find).
 * graphs, projections and probes are on by default; resume where the cache's
 * cached_split is set (by ggfit_fit, for the model's projections from then
 * on). The
 * environment's GGFIT_CACHE forces a set instead, for tests and timing:
 * "none", "all", or a comma list of the names above. */
enum {
    GGFIT_CACHE_GRAPHS = 1,
    GGFIT_CACHE_PROJECTIONS = 2,
    GGFIT_CACHE_RESUME = 4,
    GGFIT_CACHE_PROBES = 8,
};
uint32_t ggfit__cache_pieces(const struct ggfit__gcache *c);

/* Splits in's graph, the kept graph of entry e (NULL: a graph not kept),
 * and fills *out: the cached-split entry point. Resumes the scheduler's
 * last split of e's graph when c's pieces include resume, else (the
 * default) splits from scratch; the output is the same either way. */
ggfit_status ggfit__gcache_split(struct ggfit__gcache *c, gentry *e, const ggfit_sched_in *in,
                                 ggfit_sched_out *out, char **err);

struct ggfit__gcache *ggfit__gcache_new(void);
void ggfit__gcache_free(struct ggfit__gcache *c);
/* The model's kept cache, or a new one (NULL when out of memory: project
 * without one); give hands it back to the model for the next call. */
struct ggfit__gcache *ggfit__gcache_take(const ggfit_model *m);
void ggfit__gcache_give(const ggfit_model *m, struct ggfit__gcache *c);

#endif
