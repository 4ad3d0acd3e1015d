/*
 * build.h - llama.cpp's prompt-processing graph per architecture, built
 * with graph.h (src/llama-graph.cpp and src/models/<arch>.cpp).
 */
#ifndef GGFIT_BUILD_H
#define GGFIT_BUILD_H

#include "ggml/ggml.h"
#include "llama/arch.h"
#include "llama/model.h"

/* What each layer holds (llama.cpp's hparams and memory filters). */
enum {
    GB_LAYER_SWA = 1,           /* attends over the sliding window */
    GB_LAYER_ATTN = 2,          /* has KV cache cells */
    GB_LAYER_STATE = 4,         /* has recurrent state */
};

typedef struct gb_params {
    const ggfit_model *m;
    const ggfit_arch *arch;
    uint32_t n_tokens;          /* ubatch tokens (a multiple of n_seqs) */
    uint32_t n_outputs;
    uint32_t n_seqs;
    uint32_t n_stream;          /* KV streams: 1 when unified */
    uint32_t n_kv;              /* cells per stream (kv_size) */
    uint32_t n_kv_swa;          /* cells of the SWA cache */
    bool swa;                   /* the model has SWA layers */
    uint32_t swa_period;
    bool flash_attn;            /* attention runs as FLASH_ATTN_EXT */
    bool v_trans;               /* the V cache is transposed: flash attention
                                   was off when llama.cpp made the cache (-fa
                                   auto makes it for flash attention, then
                                   may turn flash attention off) */
    uint32_t type_k, type_v;
    const int32_t *placement;   /* buffer type of each model tensor, -1 */
    int32_t tied_output_buft;   /* buffer type of the tied output copy */
    const int32_t *kv_buft;     /* per layer: buffer type of its cache */
    const int32_t *layer_buft;  /* per layer: where its unrepacked weights go */
    const int32_t *layer_backend; /* per layer (n_layer + 1): pinned backend */
    const uint8_t *layer_flags; /* per layer: GB_LAYER_* */
    bool pin_norms;             /* full offload: "norm" nodes go to their layer */
    bool no_kv_offload;         /* -nkvo: attention is pinned to the CPU */
    int32_t cpu_backend;        /* index of the CPU backend (the last) */
    int32_t pooling;            /* --embedding: the pooling layer after the
                                   graph (GGFIT_POOLING_*); -1 without */
    bool mtp;                   /* an MTP context: the arch's build_mtp */
    uint32_t n_rs_seq;          /* recurrent snapshots a sequence (rs_rollback) */
    uint32_t llama_build;       /* whose graph (ggfit_params.llama_build): the
                                   builders ask ggfit__llama_has */
} gb_params;

/* Where layer il's copy of a weight llama.cpp duplicates per layer (model
 * tensor i: rope factors) lives: the layer's buffer type, else the weight's
 * own. The graph builders and the re-targeting of kept graphs agree on it. */
static inline int32_t gb_copy_buft(const int32_t *layer_buft, const int32_t *placement,
                                   int64_t i, int il)
{
    int32_t buft = layer_buft[il];
    return buft < 0 || buft >= GGFIT_MAX_BUFTS ? placement[i] : buft;
}

/* Builds the graph of p->m's architecture into g. Returns GGFIT_OK,
 * GGFIT_EUNSUPPORTED when ggfit has no graph for the architecture (the
 * caller falls back to an estimate), or GGFIT_ENOMEM. */
ggfit_status ggfit__build_graph(gg_graph *g, const gb_params *p);

#endif
