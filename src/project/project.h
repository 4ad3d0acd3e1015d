/*
 * project.h - the projection's internal side: the state one projection
 * carries through its stages, and each stage's entry point. The stages and
 * the llama.cpp code each follows:
 *   split.c             the layers' devices (llama_model::load_tensors)
 *   buft.c              buffer type lists, alignment, the CPU's extra
 *                       buffer types (make_cpu_buft_list,
 *                       select_weight_buft; ggml-cpu's AMX and REPACK)
 *   override.c          -ot, -cmoe, -ncmoe (tensor_buft_overrides)
 *   weights.c           each weight's buffer type and bytes
 *   arch_keys.c         what load_arch_hparams refuses; how the
 *                       sliding-window pattern is read
 *   kv_cache.c          KV cells, sliding windows, MLA (llama_kv_cache,
 *                       llama_kv_cache_iswa)
 *   memory_recurrent.c  recurrent state (llama_memory_recurrent)
 *   context.c           sizes, the compute graph's reserve and the -fa auto
 *                       probe (llama_context)
 *   graph_cache.c       graphs kept between projections
 *   compute_estimate.c  compute buffers without a graph
 *   debug.c             graph dumps for tools/graphdiff.py and scheddiff.py
 *   check.c             the file's hyperparameters, before any of them
 *                       (load_hparams' asserts and throws)
 *   project.c           the order they run in, and the rows of the result
 */
#ifndef GGFIT_PROJECT_H
#define GGFIT_PROJECT_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/base.h"
#include "ggfit.h"
#include "llama/arch.h"
#include "llama/model.h"
#include "llama/patterns.h"

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

/* One projection in progress. */
typedef struct proj {
    const ggfit_model *m;
    const ggfit_hparams *hp;
    const ggfit_params *p;
    const ggfit_arch *arch;
    const ggfit_device *devs[GGFIT_MAX_DEVICES];   /* the model's devices */
    uint32_t n_dev;
    float cum[GGFIT_MAX_DEVICES];                  /* cumulative split */
    uint32_t i_gpu_start, act;
    /* The device of each offloaded layer, i_gpu_start + k for k < act
     * (ggfit__dev_layer's answer, worked out once per projection): the
     * caller's array of GGFIT_MAX_LAYERS + 1. */
    int8_t *dev_of;
    int dev_buft[GGFIT_MAX_DEVICES];
    /* Per buffer type, as added: its alignment and how it sizes a tensor
     * (GGFIT__ALLOC_*; read per weight, per cache and for the graph). */
    uint32_t buft_align[GGFIT_MAX_BUFTS];
    uint8_t buft_alloc[GGFIT_MAX_BUFTS];
    int cpu_buft, host_buft;                       /* -1 until used / none */
    int extra_buft[GGFIT__CPU_EXTRA_COUNT];        /* -1 until used */
    struct rule {
        pcre2_code *re;        /* a general pattern, or NULL for a block rule */
        int32_t layer;         /* block rule: its block; -1 any; -2 below -ncmoe */
        uint8_t kind;          /* block rule: which FFN tensors (ggfit_ffn_kind) */
        int target;            /* device, or -1 for the CPU */
    } rules[GGFIT_MAX_OVERRIDES + 2];
    uint32_t n_rules;
    uint32_t n_regex;      /* rules with a regex (the rest are block rules) */
    pcre2_match_data *md;
    /* The rules that can match a tensor of block b < n_rule_blocks, in
     * order: rule_list[rule_first[b] .. rule_first[b + 1]) (see
     * index_rules); NULL when the rules are few or none is for one block. */
    uint16_t *rule_list;
    uint32_t *rule_first;
    uint32_t n_rule_blocks;
    int32_t tied_buft;                             /* the tied output copy, -1 */
    bool fa_mismatch;                              /* FA probe: a node left its layer */
    struct ggfit__gcache *cache;                   /* a fit's graph, or NULL */
    uint32_t period;                               /* SWA period in force */
    bool swa_layers;                               /* the pattern is per layer, */
    uint32_t swa_n;                                /* for this many layers */
    bool swa;
    uint64_t size_swa;
    ggfit_projection *out;
    char **err;
} proj;

/* The model's file, for messages. */
static inline const char *ggfit__proj_path(const proj *pr)
{
    return ggfit_gguf_shard_path(ggfit_model_gguf(pr->m), 0);
}

/* project.c */
/* Projects as ggfit_project does, with the graphs kept in cache (NULL:
 * none kept); a fit's projections share one. */
ggfit_status ggfit__project_cached(const ggfit_model *m, const ggfit_params *p,
                                   const ggfit_device *devs, size_t n, ggfit_projection *out,
                                   int32_t *placement, struct ggfit__gcache *cache, char **err);

/* split.c: the devices (-sm, -mg, -ts, -ngl) and the device of layer il
 * (il == n_layer: the output layer), -1 for the CPU. */
ggfit_status ggfit__setup_devices(proj *pr, const ggfit_device *devs, size_t n);
int ggfit__dev_layer(const proj *pr, uint32_t il);

/* buft.c: buffer types, added to the result as first used. */
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

/* override.c: the rules of -ot, -cmoe and -ncmoe, and the target of the
 * first one matching a tensor: a device, -1 for the CPU, -2 for none. */
ggfit_status ggfit__setup_overrides(proj *pr);
int ggfit__override_target(const proj *pr, const char *name, int32_t layer, uint16_t facts);
void ggfit__overrides_free(proj *pr);
/* With block rules only (n_regex == 0) the rule a tensor of block il
 * matches depends on il and the tensor's FFN kinds alone. Per block: the
 * first rule matching a tensor of each kind, and the kinds that have one
 * (bit k: kind k). */
typedef struct ggfit__block_rules {
    uint16_t first[GGFIT_FFN_KIND_COUNT];
    uint8_t kinds;
} ggfit__block_rules;
/* Fills the table for blocks il < n, so that ggfit__override_block_target
 * gives ggfit__override_target's answer without a scan. */
void ggfit__override_table(const proj *pr, ggfit__block_rules *tab, uint32_t n);
static inline int ggfit__override_block_target(const proj *pr, const ggfit__block_rules *br,
                                               uint16_t facts)
{
    unsigned kinds = (facts >> GGFIT_TFACT_FFN_SHIFT) & br->kinds;
    if (!kinds)
        return -2;
    unsigned best = UINT16_MAX;
    for (unsigned k = 0; kinds; k++, kinds >>= 1)
        if ((kinds & 1) && br->first[k] < best)
            best = br->first[k];
    return pr->rules[best].target;
}

/* Whether a rule can match a tensor with these facts at all: block rules
 * (the fit's, -cmoe's, -ncmoe's) only match FFN tensors, so with no regex
 * a tensor of no FFN kind (attention, norms, the embeddings) has no
 * target, and placing it need not ask ggfit__override_target. */
static inline bool ggfit__override_may_match(const proj *pr, uint16_t facts)
{
    const unsigned ffn = ((1u << GGFIT_FFN_KIND_COUNT) - 1) << GGFIT_TFACT_FFN_SHIFT;
    return pr->n_regex || (pr->n_rules && (facts & ffn));
}

/* arch_keys.c: what load_arch_hparams refuses (the required keys, the fixed
 * arrays of arr_keys, the sliding-window pattern in the architecture's
 * form); whether the architecture takes the pattern per layer
 * (is_swa_impl), and the period it takes otherwise (the file's scalar
 * where it reads one, else its swa_period). */
ggfit_status ggfit__check_arch_keys(proj *pr);
bool ggfit__swa_per_layer(const proj *pr);
uint32_t ggfit__swa_period(const proj *pr);

/* weights.c: every weight's buffer type (placement, per model tensor) and bytes. */
ggfit_status ggfit__project_weights(proj *pr, int32_t *placement);

/* kv_cache.c */
void ggfit__resolve_swa(proj *pr);
bool ggfit__layer_is_swa(const proj *pr, uint32_t il, uint32_t period);
bool ggfit__layer_has_attn(const proj *pr, uint32_t il);
int ggfit__context_buft(proj *pr, uint32_t il);
void ggfit__add_context(proj *pr, int b, uint64_t bytes);
ggfit_status ggfit__check_cache_blocks(proj *pr);
ggfit_status ggfit__project_kv(proj *pr);

/* memory_recurrent.c */
bool ggfit__layer_has_state(const proj *pr, uint32_t il);
void ggfit__project_state(proj *pr);

/* context.c */
ggfit_status ggfit__resolve_sizes(proj *pr);
ggfit_status ggfit__resolve_flash_attn(proj *pr, const int32_t *placement);
/* Builds llama.cpp's graph and sizes its compute buffers (probe: the -fa
 * auto probe instead); GGFIT_EUNSUPPORTED when there is no graph. */
ggfit_status ggfit__graph_compute(proj *pr, const int32_t *placement, bool probe);

/* compute_estimate.c */
void ggfit__project_compute_estimate(proj *pr);

#endif
