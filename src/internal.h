/*
 * internal.h - declarations shared by libggfit's sources, not installed.
 */
#ifndef GGFIT_INTERNAL_H
#define GGFIT_INTERNAL_H

#include <stdarg.h>
#include "ggfit.h"

#if defined(__GNUC__)
#define GGFIT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GGFIT_PRINTF(f, a)
#endif

/* Sets *err (when err is not NULL) to a new message built from fmt and
 * returns status, so that error paths read `return ggfit__fail(...)`. */
int ggfit__fail(char **err, int status, const char *fmt, ...) GGFIT_PRINTF(3, 4);

/* malloc-backed string builder, used by the renderers. A failed append
 * marks the builder as out of memory; sb_take() then returns NULL. */
typedef struct ggfit_sb {
    char *buf;
    size_t len, cap;
    bool oom;
} ggfit_sb;

void ggfit__sb_printf(ggfit_sb *sb, const char *fmt, ...) GGFIT_PRINTF(2, 3);
char *ggfit__sb_take(ggfit_sb *sb);

/* Appends "--rpc host:port,... " for the RPC devices that came from
 * ggfit_rpc_query (an endpoint set), each server once, in device order;
 * nothing when there are none (rpc.c). */
void ggfit__rpc_args(ggfit_sb *sb, const ggfit_device *devs, size_t n);

/* Allocation wrappers: tests make the Nth call fail to prove that every
 * failure path is handled. */
void *ggfit__malloc(size_t n);
void *ggfit__calloc(size_t n, size_t size);
void *ggfit__realloc(void *p, size_t n);
char *ggfit__strndup(const char *s, size_t n);

/* Memory kept between calls: scratch that a projection needs every time is
 * reused rather than freed, because fresh blocks of this size come from the
 * kernel and cost page faults on every touch (ten times the work itself). */
typedef struct ggfit__buf {
    void *p;
    size_t cap;
} ggfit__buf;

/* At least n bytes from b (contents not kept when it grows); NULL when out of
 * memory, with b left as it was. */
void *ggfit__buf_get(ggfit__buf *b, size_t n);
void ggfit__buf_free(ggfit__buf *b);

/* Test hook: the n-th allocation from now on (1 = the next) fails; 0 turns
 * failure injection off. Returns the number of allocations since the last
 * call. Not thread-safe; for tests only. */
uint64_t ggfit__fail_alloc_after(uint64_t n);

/* ---- per-architecture rules (arch.c) ------------------------------------ */

typedef enum ggfit_mem_kind {
    GGFIT_MEM_KV,          /* a KV cache (iSWA when the model has a window) */
    GGFIT_MEM_RECURRENT,   /* recurrent state only */
    GGFIT_MEM_HYBRID,      /* KV for attention layers, state for the rest */
} ggfit_mem_kind;

typedef enum ggfit_rec_rule {
    GGFIT_REC_NONE,        /* no recurrent layers */
    GGFIT_REC_ALL,         /* every layer */
    GGFIT_REC_NO_KV_HEADS, /* layers with head_count_kv 0 */
    GGFIT_REC_NEMOTRON_H,  /* kv heads 0 and ffn 0; attention: kv heads > 0 */
    GGFIT_REC_INTERVAL,    /* all but every full_attention_interval-th */
    GGFIT_REC_BOTH,        /* every layer has attention and state */
} ggfit_rec_rule;

typedef struct ggfit_arch {
    const char *name;
    ggfit_mem_kind mem;
    uint32_t swa_period;       /* default sliding_window_pattern; 0: no SWA */
    bool swa_dense_first;      /* layer il%p == 0 is the dense one */
    uint32_t swa_default;      /* n_swa when the file gives none */
    bool swa_needs_window;     /* SWA only when sliding_window > 0 */
    bool nextn_kv;             /* NextN blocks still get KV cells */
    ggfit_rec_rule rec;
    /* Only the first kv_from_start layers hold KV cells; each later layer
     * reads the cache of layer kv_from_start - 2 when it is a sliding-window
     * layer, else of layer kv_from_start - 1 (gemma3n). 0: every layer. */
    uint32_t kv_from_start;
} ggfit_arch;

/* Rules for an architecture; *known is false for the generic fallback. */
const ggfit_arch *ggfit__arch(const char *name, bool *known);

/* Index of the tensor "blk.<il>.<rest>" of model m, or -1 (model.c). */
int64_t ggfit__model_find_block_tensor(const ggfit_model *m, uint32_t il, const char *rest);

/* Per-tensor facts that weight placement tests on every projection, worked
 * out once from the name when the model is described: the weight op
 * (project.c's weight_op) in the low bits, then flags. */
enum {
    GGFIT_TFACT_OP = 7,              /* mask: the weight op */
    GGFIT_TFACT_FFN_SHIFT = 3,       /* bit 3 + k: "blk.N.<rest>" is FFN kind k */
    GGFIT_TFACT_TOKEN_EMBD = 1 << 8, /* named "token_embd.weight" */
    GGFIT_TFACT_OUTPUT = 1 << 9,     /* named "output.weight" */
    GGFIT_TFACT_EMBD_NORM = 1 << 10, /* named "token_embd_norm..." */
};
uint16_t ggfit__tensor_facts(const ggfit_tensor *t);             /* project.c */
const uint16_t *ggfit__model_facts(const ggfit_model *m);        /* model.c */

/* A fit's projections share one graph structure; the cache keeps the last
 * two built graphs so that the next projection only re-targets buffers. */
struct ggfit__gcache;
struct ggfit__gcache *ggfit__gcache_new(void);
void ggfit__gcache_free(struct ggfit__gcache *c);
int ggfit__project_cached(const ggfit_model *m, const ggfit_params *p, const ggfit_device *devs,
                          size_t n, ggfit_projection *out, int32_t *placement,
                          struct ggfit__gcache *cache, char **err);
/* The model keeps the last cache given back, across calls (model.c): take
 * returns it, or a new one when it is absent or taken by another thread
 * (NULL when out of memory: project without one); give keeps c (NULL: no-op)
 * and frees the one it replaces. */
struct ggfit__gcache *ggfit__model_cache_take(const ggfit_model *m);
void ggfit__model_cache_give(const ggfit_model *m, struct ggfit__gcache *c);

/* ---- the catalog and the Metal working set (catalog.c) ------------------- */

#define GGFIT__GIB(n) ((uint64_t)(n) << 30)

/* The Metal working-set limit (MTLDevice.recommendedMaxWorkingSetSize) that
 * llama.cpp budgets a Mac's GPU from, in bytes: iogpu.wired_limit_mb MiB when
 * that sysctl is set (non-zero; capped at memsize), else macOS's share of
 * hw.memsize (memsize, bytes) rounded up to a 16 KiB page. macos_major picks
 * the rule: below 26 the older 2/3-or-3/4 one; 0 means the newest. The
 * catalog sizes its Macs with it (as macOS 26); the live probe (devices.c)
 * uses it where Metal cannot be asked. The bands are in catalog.c. */
uint64_t ggfit__metal_working_set(uint64_t memsize, uint64_t wired_limit_mb,
                                  unsigned macos_major);

/* Writes up to three catalog ids close to id ("rtx-390" -> "rtx-3090, ...")
 * into out (cap bytes, NUL-terminated), best first; returns how many. */
size_t ggfit__catalog_suggest(const char *id, char *out, size_t cap);

#define GGFIT_PAD(x, n) (((x) + (n) - 1) / (n) * (n))
#define GGFIT_MiB (1024.0 * 1024.0)

#endif
