/*
 * proj.h - one projection in progress: the state its stages fill in, in
 * the order they run (project.c, the driver, runs them; each stage's entry
 * point is in its own header, which only the driver includes), and the
 * services every stage may call on that state:
 *   buft.c              the result's buffer types, added as first used, as
 *                       llama.cpp makes them: the CPU list, each device's
 *                       type, the CPU's extra types (make_cpu_buft_list,
 *                       select_weight_buft; ggml-cpu's AMX and REPACK), the
 *                       bytes a tensor takes in each, a cache's bytes added
 *   state.c             the state set up and released
 *   graph_reserve.c     the compute graph built, split by the scheduler and
 *                       allocated (graph_reserve), for the -fa auto probe
 *                       and the compute buffers
 *   graph_cache.c       graphs kept between projections
 *   debug.c             graph dumps for tools/graphdiff.py and scheddiff.py
 * A stage reads what the stages before it wrote and calls no other stage.
 */
#ifndef GGFIT_PROJECT_PROJ_H
#define GGFIT_PROJECT_PROJ_H

#include "base/base.h"
#include "ggfit.h"
#include "llama/arch.h"
#include "llama/model.h"
#include "llama/patterns.h"
#include "project/regex.h"

struct ggfit__gcache;

/* The CPU's extra buffer types ggfit models, in the order ggml-cpu lists
 * them (buft.c has each one's rules). */
enum { GGFIT__CPU_EXTRA_AMX, GGFIT__CPU_EXTRA_REPACK, GGFIT__CPU_EXTRA_COUNT };

/* How a buffer type sizes a tensor (its get_alloc_size). */
enum {
    GGFIT__ALLOC_NBYTES,      /* the tensor's bytes */
    GGFIT__ALLOC_PAD_ROWS,    /* quantized rows padded to 512 columns */
    GGFIT__ALLOC_AMX,         /* packed for AMX's kernels */
};

/* One projection in progress: what the driver sets, then each stage's
 * results in the order the stages run (a field is written by the stage it
 * is listed under and only read after it). */
typedef struct proj {
    /* the driver (state.c) */
    const ggfit_model *m;
    const ggfit_hparams *hp;
    const ggfit_params *p;
    const ggfit_arch *arch;
    struct ggfit__gcache *cache;                   /* a fit's graph, or NULL */
    ggfit_projection *out;
    char **err;

    /* split.c: the devices (-sm, -mg, -ts, -ngl) */
    const ggfit_device *devs[GGFIT_MAX_DEVICES];   /* the model's devices */
    uint32_t n_dev;
    float cum[GGFIT_MAX_DEVICES];                  /* cumulative split */
    uint32_t i_gpu_start, act;
    /* The device of each offloaded layer, i_gpu_start + k for k < act
     * (ggfit__dev_layer's answer, worked out once per projection): the
     * caller's array of GGFIT_MAX_LAYERS + 1. */
    int8_t *dev_of;

    /* buft.c, as any stage first uses a buffer type */
    int dev_buft[GGFIT_MAX_DEVICES];
    /* Per buffer type, as added: its alignment and how it sizes a tensor
     * (GGFIT__ALLOC_*; read per weight, per cache and for the graph). */
    uint32_t buft_align[GGFIT_MAX_BUFTS];
    uint8_t buft_alloc[GGFIT_MAX_BUFTS];
    int cpu_buft, host_buft;                       /* -1 until used / none */
    int extra_buft[GGFIT__CPU_EXTRA_COUNT];        /* -1 until used */

    /* override.c: the rules of -ot, -cmoe and -ncmoe, in order */
    struct rule {
        ggfit__regex *re;      /* a general pattern, or NULL for a block rule */
        int32_t layer;         /* block rule: its block; -1 any; -2 below -ncmoe */
        uint8_t kind;          /* block rule: which FFN tensors (ggfit_ffn_kind) */
        int target;            /* device, or -1 for the CPU */
    } rules[GGFIT_MAX_OVERRIDES + 2];
    uint32_t n_rules;
    uint32_t n_regex;      /* rules with a regex (the rest are block rules) */
    /* The rules that can match a tensor of block b < n_rule_blocks, in
     * order: rule_list[rule_first[b] .. rule_first[b + 1]) (see
     * index_rules); NULL when the rules are few or none is for one block. */
    uint16_t *rule_list;
    uint32_t *rule_first;
    uint32_t n_rule_blocks;

    /* weights.c */
    int32_t tied_buft;                             /* the tied output copy, -1 */

    /* layers.c: the sliding window in force and what each layer holds,
     * worked out once for the stages after it */
    bool swa;
    uint32_t period;                               /* SWA period in force */
    bool swa_layers;                               /* the pattern is per layer, */
    uint32_t swa_n;                                /* for this many layers */
    uint64_t size_swa;                             /* cells of the SWA cache */
    /* Per layer il <= n_layer (one block, in layers.c): the buffer type of
     * its cache (il < n_layer) and of its unrepacked weights for the graph,
     * the backend that runs it, and its GB_LAYER_* flags (il < n_layer). */
    int32_t *kv_buft, *layer_buft, *layer_backend;
    uint8_t *layer_flags;

    /* flash_attn.c: the -fa auto probe's finding (graph_reserve.c sets it) */
    bool fa_mismatch;                              /* a node left its layer */
} proj;

/* The model's file, for messages. */
static inline const char *ggfit__proj_path(const proj *pr)
{
    return ggfit_gguf_shard_path(ggfit_model_gguf(pr->m), 0);
}

/* The device of layer il (il == n_layer: the output layer), -1 for the
 * CPU, as split.c placed it. */
static inline int ggfit__dev_layer(const proj *pr, uint32_t il)
{
    if (il < pr->i_gpu_start || il - pr->i_gpu_start >= pr->act)
        return -1;
    return pr->dev_of[il - pr->i_gpu_start];
}

/* ---- state.c ---------------------------------------------------------- */

/* A projection of m with flags p into out, its graphs kept in cache (NULL:
 * none) and dev_of the caller's array of GGFIT_MAX_LAYERS + 1; nothing
 * allocated yet. */
void ggfit__proj_init(proj *pr, const ggfit_model *m, const ggfit_params *p,
                      ggfit_projection *out, struct ggfit__gcache *cache, int8_t *dev_of,
                      char **err);
/* Frees what the stages allocated in pr (not pr). */
void ggfit__proj_free(proj *pr);

/* ---- buft.c: buffer types, added to the result as first used --------- */

int ggfit__buft_add(proj *pr, const char *name, int32_t device, bool is_host);
int ggfit__cpu_buft(proj *pr);
int ggfit__device_buft(proj *pr, int d);
/* The bytes the AMX buffer type allocates for t, before alignment. */
uint64_t ggfit__amx_alloc_size(const ggfit_tensor_info *t);
/* Bytes a tensor takes in a buffer type that sizes it by rule
 * (GGFIT__ALLOC_*) and aligns to align: the backend's alloc size (a backend
 * that pads quantized rows adds the bytes of the columns up to the next
 * multiple of 512; AMX packs), padded to the alignment. Inline: the
 * weights ask it once per tensor and projection. */
static inline uint64_t ggfit__alloc_bytes_in(uint32_t align, unsigned rule,
                                             const ggfit_tensor_info *t)
{
    uint64_t n = t->n_bytes;
    if (rule == GGFIT__ALLOC_PAD_ROWS && t->ne[0] % 512 != 0 && ggfit_type_is_quantized(t->type))
        n += ggfit_row_bytes(t->type, 512 - (uint64_t)t->ne[0] % 512);
    else if (rule == GGFIT__ALLOC_AMX)
        n = ggfit__amx_alloc_size(t);
    return GGFIT_PAD(n, align);
}
static inline uint64_t ggfit__alloc_bytes(const proj *pr, int b, const ggfit_tensor_info *t)
{
    return ggfit__alloc_bytes_in(pr->buft_align[b], pr->buft_alloc[b], t);
}
/* The CPU list's choice for weight t used by op: the host buffer type, one
 * of the CPU's extra buffer types (AMX, CPU_REPACK) or CPU. */
int ggfit__select_cpu(proj *pr, const ggfit_tensor_info *t, weight_op op);
/* Where the CPU backend computes: the first device's host buffer type, else CPU. */
int ggfit__cpu_compute_buft(proj *pr);
/* Adds a cache's bytes to buffer type b's context, padded to its alignment. */
static inline void ggfit__add_context(proj *pr, int b, uint64_t bytes)
{
    pr->out->bufts[b].mem.context += GGFIT_PAD(bytes, pr->buft_align[b]);
}

/* ---- graph_reserve.c -------------------------------------------------- */

/* Builds llama.cpp's graph and sizes its compute buffers (probe: the -fa
 * auto probe instead, its finding in pr->fa_mismatch); GGFIT_EUNSUPPORTED
 * when there is no graph. */
ggfit_status ggfit__graph_reserve(proj *pr, const int32_t *placement, bool probe);

#endif
