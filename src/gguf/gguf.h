/*
 * gguf.h - the reader's raw header bytes, for the rewriter (not installed).
 */
#ifndef GGFIT_GGUF_INTERNAL_H
#define GGFIT_GGUF_INTERNAL_H

#include "ggfit.h"

typedef struct ggfit__gguf_shard_raw {
    const char *path;
    const unsigned char *header; /* the bytes read, from the magic on */
    size_t kv_end;               /* the key/values end here (tensor infos next) */
    uint32_t version, alignment;
    uint64_t n_kv, n_tensors;
    uint64_t first_tensor;       /* index of its first tensor in the file */
    uint64_t data_offset;
    uint64_t file_size;
} ggfit__gguf_shard_raw;

/* Shard i's raw header; false when i is out of range. */
bool ggfit__gguf_raw(const ggfit_gguf *g, uint32_t i, ggfit__gguf_shard_raw *out);

/* rewrite.c: writes shard i of g to out_path with the same keys and its
 * tensors in the order given (order[k]: an index into the file's tensors,
 * each of the shard's exactly once), each one's data copied as it is and
 * padded to the alignment. The file is written beside out_path under a
 * temporary name and renamed into place only when complete; out_path must
 * not exist unless force. A shard whose tensor data is not all there (a
 * header-only file, a partial download) is refused. */
ggfit_status ggfit__gguf_rewrite(const ggfit_gguf *g, uint32_t i, const uint64_t *order,
                                 const char *out_path, bool force, char **err);

#endif
