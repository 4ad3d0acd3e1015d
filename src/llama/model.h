/*
 * model.h - the model description's internal side (llama/model.c): block
 * tensors by layer, per-tensor facts worked out once, and the graph kept
 * between projections.
 */
#ifndef GGFIT_MODEL_H
#define GGFIT_MODEL_H

#include "ggfit.h"

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

#endif
