/*
 * reorder.h - the order ggfit reorder writes, for the verdict's "what if
 * the file were reordered" (not installed).
 */
#ifndef GGFIT_REORDER_H
#define GGFIT_REORDER_H

#include "ggfit.h"

/* The tensors of shard (indices into the model's), in the order ggfit
 * reorder writes them, into order (room for the shard's tensors); returns
 * how many. */
uint64_t ggfit__reorder_shard(const ggfit_model *m, uint32_t shard, uint64_t *order);

/* The offsets (from the data start) the n tensors of order get when written
 * in that order with this alignment: offset[order[k]] for each k. */
void ggfit__reorder_offsets(const ggfit_model *m, const uint64_t *order, uint64_t n,
                            uint32_t alignment, uint64_t *offset);

#endif
