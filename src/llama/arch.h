/*
 * arch.h - what llama.cpp does differently per architecture, as one
 * registry row each (src/models/<arch>.c, listed in src/models/registry.c):
 * its memory (KV cache, iSWA, recurrent state), its graph and its quirks.
 */
#ifndef GGFIT_ARCH_H
#define GGFIT_ARCH_H

#include "ggfit.h"
#include "llama/model.h"   /* weight_op */
#include "versions/version.h"

typedef enum ggfit_mem_kind {
    GGFIT_MEM_KV,          /* a KV cache (iSWA when the model has a window) */
    GGFIT_MEM_RECURRENT,   /* recurrent state only */
    GGFIT_MEM_HYBRID,      /* KV for attention layers, state for the rest */
    GGFIT_MEM_NONE,        /* no memory module (create_memory gives nullptr):
                              encoders such as BERT attend within the ubatch */
} ggfit_mem_kind;

typedef enum ggfit_rec_rule {
    GGFIT_REC_NONE,        /* no recurrent layers */
    GGFIT_REC_ALL,         /* every layer */
    GGFIT_REC_NO_KV_HEADS, /* layers with head_count_kv 0 */
    GGFIT_REC_NEMOTRON_H,  /* kv heads 0 and ffn 0; attention: kv heads > 0 */
    GGFIT_REC_INTERVAL,    /* all but every full_attention_interval-th */
    GGFIT_REC_BOTH,        /* every layer has attention and state */
} ggfit_rec_rule;

/* How load_arch_hparams reads attention.sliding_window_pattern: one of
 * the two forms of llama_model_loader::get_key_or_arr. */
typedef enum ggfit_swa_key {
    /* The uint32 form, asked as not required: a scalar is the period, and
     * an array is passed over (the period stays swa_period), as the
     * per-layer array EXAONE's converter writes (num_hidden_layers bools,
     * NextN blocks not counted). Only an architecture with a swa_period
     * reads it at all. */
    GGFIT_SWA_KEY_PERIOD,
    /* The per-layer form (hparams.is_swa_impl), required: an array of
     * exactly n values (swa_key_main), or one value for all n layers;
     * the layers past n are not sliding-window ones. */
    GGFIT_SWA_KEY_LAYERS,
    /* A scalar as the period, else the per-layer form (Cohere2 MoE,
     * Mellum: the uint32 form first, the array form when it fails). */
    GGFIT_SWA_KEY_EITHER,
    /* get_arr's form (Granite SWA): an array only (its arr_keys entry
     * refuses a scalar), of any length up to 512: the layers past its end
     * are not sliding-window ones, the entries past n are not read. */
    GGFIT_SWA_KEY_ARRAY,
} ggfit_swa_key;

/* How many values a fixed-size array key holds (ggfit_arr_key.n). */
typedef enum ggfit_arr_n {
    GGFIT_ARR_ANY,       /* as many as the file gives (get_arr) */
    GGFIT_ARR_BLOCKS,    /* block_count (n_layer_all; n_layer() read before
                            nextn_predict_layers is) */
    GGFIT_ARR_MAIN,      /* block_count less nextn_predict_layers (n_layer()
                            once it is read) */
    GGFIT_ARR_FOUR,      /* 4: rope.dimension_sections */
} ggfit_arr_n;

/* A key load_arch_hparams reads into one of llama_hparams' fixed arrays,
 * checked as llama_model_loader checks it (project/arch_keys.c): with
 * get_key_or_arr (key_or_arr) an array of exactly n values or one scalar
 * for all; with get_arr an array of at most 512 (LLAMA_MAX_LAYERS) and
 * at least n, the entries past its end keeping their defaults. */
typedef struct ggfit_arr_key {
    const char *suffix;        /* after "<arch>." (the whole name past a
                                  leading '!'); NULL ends the list */
    bool key_or_arr;           /* get_key_or_arr; else get_arr */
    uint8_t type;              /* the array's C type, as a GGUF scalar type:
                                  GGFIT_GGUF_UINT32 (uint32_t), _INT32 (int)
                                  or _FLOAT32 (float) */
    uint8_t n;                 /* ggfit_arr_n */
    bool required;             /* absent: "key not found in model" */
} ggfit_arr_key;

/* rope.dimension_sections, which the M-RoPE architectures read with
 * get_key_or_arr into std::array<int, 4>. */
#define GGFIT_ARR_ROPE_SECTIONS(required) \
    { "rope.dimension_sections", true, GGFIT_GGUF_INT32, GGFIT_ARR_FOUR, (required) }

struct bctx;   /* a graph under construction (llama/graph.h) */
struct hp_check; /* a file's hyperparameters being checked (llama/check.h) */

/* One architecture: a row of named fields, in the architecture's own file
 * (src/models/<arch>.c), listed once in src/models/registry.c. Fields left
 * out are the plain transformer's; hooks left NULL take the default rule
 * named beside them. */
typedef struct ggfit_arch {
    const char *name;          /* general.architecture */
    int added;                 /* the change (versions/changes.def,
                                  LLAMA_CHANGE_*) that added it: older
                                  llama.cpp refuses the file; 0 (NONE):
                                  every supported version loads it */
    ggfit_mem_kind mem;        /* llama_model::create_memory */
    ggfit_rec_rule rec;        /* which layers hold recurrent state */
    /* GGFIT_REC_INTERVAL: full_attention_interval when the file gives none;
     * 0: then every layer holds state. */
    uint32_t rec_interval_default;
    uint32_t swa_period;       /* default sliding_window_pattern; 0: no SWA */
    ggfit_swa_key swa_key;     /* how the file's pattern is read */
    /* The per-layer pattern holds block_count less nextn_predict_layers
     * values (read after it: Cohere2 MoE); else block_count. */
    bool swa_key_main;
    bool swa_dense_first;      /* layer il%p == 0 is the dense one */
    uint32_t swa_default;      /* n_swa when the file gives none */
    bool swa_needs_window;     /* SWA only when sliding_window > 0 */
    /* An iSWA cache even when the window is 0 (load_arch_hparams sets
     * swa_type whatever sliding_window says: the SWA cache then holds
     * n_ubatch cells, padded). */
    bool swa_always;
    bool nextn_kv;             /* NextN blocks still get KV cells */
    /* NextN blocks follow the sliding-window pattern like the others (the
     * pattern is set before nextn_predict_layers is read); else they are
     * never sliding-window layers. */
    bool swa_nextn_pattern;
    /* Whether a tensor of a NextN block is loaded all the same (load_tensors
     * creates it without TENSOR_SKIP: Step-3.5's optional MTP tensors), on
     * the block's own device; NULL: none is. */
    bool (*nextn_loaded)(const ggfit_model *m, const ggfit_tensor *t);
    /* An MTP head (the architecture's load_tensors reads ml.load_mtp, its
     * graph has a DECODER_MTP type): with load_mtp (--spec-type draft-mtp)
     * the NextN blocks' tensors are loaded, on their blocks' devices; an
     * MTP context (ctx_mtp) runs build_mtp (NULL: its compute is
     * estimated) on a plain KV cache of the NextN blocks alone when
     * mtp_kv_nextn, else on the architecture's own memory. */
    bool mtp;
    bool mtp_kv_nextn;
    void (*build_mtp)(struct bctx *b);
    /* The recurrent state keeps n_rs_seq snapshots a sequence for rollback
     * (llm_arch_supports_rs_rollback): 1 + n_rs_seq rows a sequence, and
     * the graph writes each; else n_rs_seq is 0. */
    bool rs_rollback;
    /* The change that made rs_rollback so (LLAMA_CHANGE_*): the builds
     * before it keep no snapshots; 0: every supported build has it. */
    int rs_rollback_since;
    /* NextN blocks create their copy of rope_freqs too (Step-3.5: the
     * copy is optional, so not skipped); else only the other blocks do. */
    bool rope_freqs_nextn;
    /* Only the first kv_from_start layers hold KV cells; each later layer
     * reads the cache of layer kv_from_start - 2 when it is a sliding-window
     * layer, else of layer kv_from_start - 1 (KV sharing). 0: every layer. */
    uint32_t kv_from_start;
    /* kv_from_start as the file gives it (llama_hparams::
     * n_layer_kv_from_start, Gemma 4); NULL: the kv_from_start field. */
    uint32_t (*kv_from)(const ggfit_model *m);
    /* Whether block il creates a copy of rope_freqs (load_tensors: Gemma 4's
     * full-attention layers only); NULL: every block. */
    bool (*rope_freqs_layer)(const ggfit_model *m, uint32_t il);
    /* The tied output's copy of token_embd is made before token_embd
     * itself, so it is never found in place: both are always loaded. */
    bool tied_output_copied;
    /* No output matrix at all (encoders: the graph ends at the token
     * embeddings), so token_embd is never copied to the output layer. */
    bool no_output;
    /* Attention is never causal, whatever attention.causal says
     * (load_arch_hparams sets causal_attn false). */
    bool non_causal;
    /* The model has an encoder (llama_model_has_encoder: T5, T5ENCODER,
     * and the draft models EAGLE3 and DFLASH, which read the target's
     * hidden states): sched_reserve then reserves an output for every
     * token, whatever n_outputs_max says. */
    bool has_encoder;
    /* load_arch_hparams reads "<arch>.num_loops" (Nanbeige): the file's
     * blocks run that many times, each pass a layer of its own (model.c's
     * expand_loops, which load/open.c hands this row). */
    bool num_loops;
    /* load_arch_hparams appends one layer past the file's blocks
     * (Granite Switch's router: n_layer_all = blocks + 1, the new layer
     * counted as the one NextN block, 1 head, 1 KV head, no FFN, no
     * tensors), which holds KV cells when nextn_kv says so (model.c's
     * expand_router). */
    bool router_layer;
    /* Flash attention is always off, whatever -fa says
     * (llama_init_from_model: Grok); else as asked. */
    bool no_flash_attn;
    /* The blocks' tensors are not named "blk.N." (WavTokenizer's "posnet.N."
     * and "convnext.N."), so ggfit sees no tensors in the blocks; the graph
     * is built all the same (its tensor_layer hook places them). */
    bool blocks_unnamed;
    /* llama_init_from_model refuses K and V caches of different types
     * (DeepSeek V4); else any pair is taken. */
    bool same_kv_types;
    /* The same refusal for an MLA model (hparams.is_mla(): both
     * key_length_mla and value_length_mla set), for the architectures whose
     * load_arch_hparams reads those keys (DeepSeek V2/V3, Mistral 4,
     * DeepSeek V3.2, GLM-DSA, Kimi Linear). */
    bool mla_same_kv_types;
    /* Keys load_arch_hparams requires (after "<arch>.", NULL-terminated):
     * llama.cpp refuses a file without one ("key not found in model"), and
     * so does the projection; NULL: none checked. */
    const char *const *required_keys;
    /* Keys load_arch_hparams requires from change required_since on
     * (LLAMA_CHANGE_*; the builds before it do not read them), in
     * required_keys' form; NULL: none. */
    const char *const *required_keys_since;
    int required_since;
    /* Keys load_arch_hparams reads into fixed arrays (one value per layer,
     * the rope sections), checked as it checks them; NULL: none. */
    const ggfit_arr_key *arr_keys;
    /* load_hparams takes an expert_count of 1 for none (HunYuan's dense
     * models): then no expert is used either. */
    bool one_expert_dense;
    /* What load_arch_hparams refuses (its asserts and throws) and what the
     * builder and the hooks below need of the file's numbers: a divisor
     * that is not 0, a key they convert to an integer that fits it, a count
     * that fits the arrays it indexes; run before anything is sized, after
     * the rules every architecture shares (llama/check.c). The rules are
     * calls of check.h's helpers on c, whose first failure is the answer.
     * NULL: the shared rules alone. */
    void (*check)(struct hp_check *c);
    /* --pooling rank (llm_graph_context::build_pooling) pools the mean of
     * the tokens and runs GELU in the classification head (ModernBERT);
     * else it takes one token's row and runs tanh. */
    bool rank_mean;
    /* --pooling rank ends with a softmax over the labels (Qwen3's
     * rerankers). */
    bool rank_softmax;

    /* llama.cpp's graph for a prompt ubatch (src/models/<arch>.cpp); NULL:
     * no graph yet, the compute buffers are estimated. It builds the whole
     * graph into b or sets b->missing. */
    void (*build)(struct bctx *b);
    /* The sliding window in force, 0 for none (load_arch_hparams); NULL:
     * the file's sliding_window, else swa_default. */
    uint32_t (*window)(const struct ggfit_arch *a, const ggfit_model *m);
    /* The same, where the rule differs between llama.cpp builds (build: the
     * one whose rules answer); used instead of window when set. */
    uint32_t (*window_at)(const struct ggfit_arch *a, const ggfit_model *m, uint32_t build);
    /* The layer a tensor outside the blocks is placed with (n_layer: the
     * output layer), or -1 for the input layer; NULL, or a return of -2:
     * the tensor's own layer (llama_model::load_tensors). */
    int64_t (*tensor_layer)(const ggfit_model *m, const ggfit_tensor *t);
    /* Elements of one sequence's recurrent state per layer: r (conv) and s
     * (ssm), as llama_hparams::n_embd_r and n_embd_s; NULL: Mamba's. */
    void (*state_size)(const ggfit_hparams *hp, uint64_t *r, uint64_t *s);
    /* A second K-only cache beside the main one, as many cells
     * (llama_kv_cache_dsa: the lightning indexer's keys, one head): the
     * values of layer il's rows, 0 where it has none; NULL: no such cache. */
    uint32_t (*index_k)(const ggfit_model *m, uint32_t il);
    /* The values of that second cache when it is a whole KV cache
     * (llama_kv_cache_msa's indexer cache: one head of n_embd_head_v), 0
     * where layer il has none; NULL: keys only. */
    uint32_t (*index_v)(const ggfit_model *m, uint32_t il);
    /* DeepSeek V4's memory (llama_kv_cache_dsv4) instead of the KV cache
     * above: layer il's compression ratio (0: none, 4: CSA, 128: HCA),
     * index_k giving the lightning indexer's key length of the CSA layers;
     * NULL: no such memory. */
    uint32_t (*compress_ratio)(const ggfit_model *m, uint32_t il);
    /* Why the row is not exact (no build; or, in REASONS(X) of registry.c,
     * no rules at all), in a user's words, for `ggfit archs`; NULL: none
     * recorded. */
    const char *why;
    /* Weight t as load_tensors creates it, where that is not what its name
     * and the file's shape say: the op its tensor info gives (llm_tensor_
     * info_for: DeepSeek V4's compressor_ape are GET_ROWS), returned (op:
     * the name's), and the shape create_tensor asks for when it reshapes
     * the file's (TENSOR_ALLOW_RESHAPE: attn_output_a, 3-D), written into
     * created (a copy of t's info). select_weight_buft probes the CPU list
     * (CPU_REPACK or CPU) with both; placement is the name's. NULL: the
     * name's op, the file's shape. */
    weight_op (*weight_probe)(const ggfit_model *m, const ggfit_tensor *t, weight_op op,
                              ggfit_tensor_info *created);
    /* llama.cpp aborts with --embedding (the graph sets no res->t_embd, so
     * build_pooling's assert fires: EAGLE-3): the reason, in the refusal's
     * words; NULL: --embedding pools the graph's hidden states. */
    const char *embeddings_abort;
} ggfit_arch;

/* Whether architecture a keeps rollback snapshots at llama_build (0: the
 * newest): rs_rollback, from the change that gave it. */
static inline bool ggfit__rs_rollback(const ggfit_arch *a, uint32_t llama_build)
{
    return a->rs_rollback &&
           ggfit__llama_has(llama_build, (ggfit__llama_change)a->rs_rollback_since);
}

/* Rules for an architecture (src/models/registry.c); *known is false for
 * the generic fallback, the plain transformer's rules. */
const ggfit_arch *ggfit__arch(const char *name, bool *known);

#endif
