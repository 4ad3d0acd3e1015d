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
    size_t header_len;           /* bytes of header held (from the magic on) */
} ggfit__gguf_shard_raw;

/* Shard i's raw header; false when i is out of range. */
bool ggfit__gguf_raw(const ggfit_gguf *g, uint32_t i, ggfit__gguf_shard_raw *out);

/* rewrite.c: writes shard i of g to out_path with the same keys and its
 * tensors in the order given (order[k]: an index into the file's tensors,
 * each of the shard's exactly once), each one's data copied as it is and
 * padded to the alignment. The file is written beside out_path under a
 * temporary name and renamed into place only when complete; out_path must
 * pass ggfit__gguf_check_target. A shard whose tensor data is not all
 * there (a header-only file, a partial download) is refused. */
ggfit_status ggfit__gguf_rewrite(const ggfit_gguf *g, uint32_t i, const uint64_t *order,
                                 const char *out_path, bool force, char **err);

/* Whether out_path may be written as a new file (GGFIT_EINVAL with the
 * reason if not): absent, or a regular file (not a link to one) that is
 * none of the n_inputs files being read, and then only with force. A
 * directory, a device, a FIFO, a socket or a symbolic link is refused
 * whatever force says. Looks at the path only; reads nothing. */
ggfit_status ggfit__gguf_check_target(const char *out_path, const char *const *inputs,
                                      size_t n_inputs, bool force, char **err);

/* A header read from somewhere else than a file (remote/: over HTTP), as
 * the file reader reads a file: the shard's size first, then bytes at
 * increasing offsets as the parser needs them, so that nothing past the
 * tensor infos is asked for. */
typedef struct ggfit__gguf_source {
    void *ctx;
    /* The first read's size and the least the reader asks for at a time
     * (it asks for a quarter of what it holds when that is more). */
    uint64_t chunk;
    /* Starts reading the shard `name` (the name given, or a split model's
     * other shard's, NAME-0000k-of-0000N.gguf): its size in bytes
     * (UINT64_MAX when not known). */
    ggfit_status (*open)(void *ctx, const char *name, uint64_t *size, char **err);
    /* Reads up to n bytes at offset of the shard last opened into dst: at
     * least min of them (min <= n), fewer only where the shard ends. The
     * rest is read-ahead, which a source may skip when it would cost a
     * request (a cached header is complete: nothing past it is needed). */
    ggfit_status (*read)(void *ctx, uint64_t offset, void *dst, size_t min, size_t n,
                         size_t *got, char **err);
} ggfit__gguf_source;

/* ggfit_gguf_open on a source: the model `name` (any shard of a split
 * model) and, for a split model, its other shards. */
ggfit_status ggfit__gguf_open_source(const char *name, const ggfit__gguf_source *src,
                                     ggfit_gguf **out, char **err);

/* types.c: each type's row of ggml_get_type_traits(), indexed by id below
 * GGFIT_TYPE_COUNT, for the graph code, which reads it for every tensor it
 * makes (ggfit_row_bytes and the like check the id first). */
typedef struct ggfit__type_traits {
    const char *name;
    uint32_t blck;     /* elements per block; 0 for removed ids */
    uint32_t bytes;    /* bytes per block */
} ggfit__type_traits;
extern const ggfit__type_traits ggfit__types[GGFIT_TYPE_COUNT];

#endif
