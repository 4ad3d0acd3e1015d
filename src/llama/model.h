/*
 * model.h - the model description's internal side (llama/model.c): block
 * tensors by layer, per-tensor facts worked out once, and the graph kept
 * between projections.
 */
#ifndef GGFIT_MODEL_H
#define GGFIT_MODEL_H

#include "ggfit.h"

/* llama.cpp's LLAMA_MAX_LAYERS: the size of its per-layer arrays, so the
 * most blocks it loads (a looped model's passes included); more is refused */
#define GGFIT_MAX_LAYERS 512

/* Index of the tensor "blk.<il>.<rest>" of model m, or -1 (model.c). */
int64_t ggfit__model_find_block_tensor(const ggfit_model *m, uint32_t il, const char *rest);
/* The same lookup in two steps, for a caller that looks one rest up in
 * every layer: the rest's number (UINT32_MAX when no block has it), its
 * text (the model's copy, which a caller can compare a rest with instead of
 * looking it up again), and the tensor of layer il with the rest of that
 * number, or -1. */
uint32_t ggfit__model_rest_id(const ggfit_model *m, const char *rest);
const char *ggfit__model_rest_name(const ggfit_model *m, uint32_t id);
int64_t ggfit__model_block_tensor_of(const ggfit_model *m, uint32_t il, uint32_t id);

/* The file's block whose weights layer il runs: il, except in a model that
 * loops its blocks (Nanbeige's num_loops: layers past the file's blocks
 * repeat them, il % blocks); UINT32_MAX for Granite Switch's router layer,
 * which has no block in the file. */
uint32_t ggfit__model_block_of(const ggfit_model *m, uint32_t il);

/* The ops llama.cpp probes a weight with, as far as placement cares. */
typedef enum weight_op {
    OP_MUL_MAT,      /* 2-D matrix product: may be repacked */
    OP_MUL_MAT_ID,   /* 3-D expert product: may be repacked */
    OP_GET_ROWS,     /* embeddings: never repacked */
    OP_ROPE,         /* rope factors: duplicated per buffer type */
    OP_OTHER,        /* norms, biases, convolutions */
} weight_op;

/* Per-tensor facts that weight placement tests on every projection, worked
 * out once from the name when the model is described: the weight op
 * (weight_op) in the low bits, then flags. */
enum {
    GGFIT_TFACT_OP = 7,              /* mask: the weight op */
    GGFIT_TFACT_FFN_SHIFT = 3,       /* bit 3 + k: "blk.N.<rest>" is FFN kind k */
    GGFIT_TFACT_TOKEN_EMBD = 1 << 8, /* named "token_embd.weight" */
    GGFIT_TFACT_OUTPUT = 1 << 9,     /* named "output.weight" */
};
const uint16_t *ggfit__model_facts(const ggfit_model *m);
/* The tensors as one array, ggfit_model_tensor(m, i) for i < n_tensors. */
const ggfit_tensor *ggfit__model_tensors(const ggfit_model *m);

/* Whether the file's attention.recurrent_layers marks layer il recurrent
 * (1) or not (0); -1 when the file has no such key. */
int ggfit__model_recurrent(const ggfit_model *m, uint32_t il);

/* The form a key takes in the file. */
enum {
    GGFIT_KEY_ABSENT,
    GGFIT_KEY_SCALAR,    /* an integer from 0 to UINT32_MAX */
    GGFIT_KEY_ARRAY,
    GGFIT_KEY_BAD,       /* a scalar of another type or value */
};
/* attention.sliding_window_pattern's form (GGFIT_KEY_*), with *n the
 * length of an array. */
int ggfit__model_swa_key(const ggfit_model *m, uint64_t *n);
/* hparams.is_swa_impl[il] as llama_model_loader::get_key_or_arr's
 * per-layer form leaves it when it reads sliding_window_pattern for n
 * layers: the array's entry, or a scalar's value (not 0) for every layer
 * below n; false past them, or without the key. */
bool ggfit__model_swa_layer(const ggfit_model *m, uint32_t il, uint32_t n);

/* ggfit_project and ggfit_fit take a const model but keep the last graph
 * they built with it (project/graph_cache.c), so that the next projection of
 * the same structure only re-targets buffer types. The model holds a few,
 * one per thread projecting it at once, without knowing what they are:
 * take returns one kept object (NULL: none, or all taken by other threads,
 * so that concurrent callers never share one); give keeps p (NULL: no-op),
 * freed with free_fn when the model is freed, or at once when the model
 * keeps as many as it holds already. */
/* The model's number in this program, unique: what the kept graphs and
 * memos name it by. */
uint64_t ggfit__model_serial(const ggfit_model *m);
void *ggfit__model_keep_take(const ggfit_model *m);
void ggfit__model_keep_give(const ggfit_model *m, void *p, void (*free_fn)(void *));

struct ggfit_arch;
/* An architecture's registry row by name (models/registry.c's ggfit__arch:
 * *known false and the generic row for a name it does not know). */
typedef const struct ggfit_arch *(*ggfit__arch_lookup)(const char *name, bool *known);

/* ggfit_model_from_gguf, the architecture's row looked up once, by
 * row_of (not NULL), as soon as the header names it: the load-time facts
 * (num_loops) come from it, and the model keeps it for the stages above
 * (ggfit__model_arch). The model description is below the architectures'
 * rows, so the caller above them (load/open.c) passes the lookup down. */
ggfit_status ggfit__model_load(ggfit_gguf *g, ggfit__arch_lookup row_of, ggfit_model **out,
                               char **err);
/* The row found when the model was loaded, with *known (not NULL) whether
 * the registry knows the architecture (false: the generic row). */
const struct ggfit_arch *ggfit__model_arch(const ggfit_model *m, bool *known);

#endif
