/*
 * gguf_writer.h - a small GGUF writer for tests: raw little-endian
 * primitives to craft any file, good or bad, and helpers for the common
 * pieces (header, key/values, tensor infos).
 */
#ifndef GGUF_WRITER_H
#define GGUF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gw {
    unsigned char *data;
    size_t len, cap;
} gw;

void gw_free(gw *w);
void gw_bytes(gw *w, const void *p, size_t n);
void gw_u8(gw *w, uint8_t v);
void gw_u16(gw *w, uint16_t v);
void gw_u32(gw *w, uint32_t v);
void gw_u64(gw *w, uint64_t v);
void gw_f32(gw *w, float v);
void gw_f64(gw *w, double v);
void gw_str(gw *w, const char *s);           /* length + bytes */
void gw_pad(gw *w, size_t align);            /* zero bytes up to a multiple */

/* "GGUF", version, counts. */
void gw_header(gw *w, uint32_t version, uint64_t n_tensors, uint64_t n_kv);
/* Key and value type; the caller writes the value. */
void gw_key(gw *w, const char *key, uint32_t type);
void gw_kv_u32(gw *w, const char *key, uint32_t v);
void gw_kv_str(gw *w, const char *key, const char *v);
void gw_kv_f32(gw *w, const char *key, float v);
void gw_kv_arr_u32(gw *w, const char *key, const uint32_t *v, uint64_t n);
/* A tensor info with up to 4 dims. */
void gw_tensor(gw *w, const char *name, uint32_t n_dims, const int64_t *ne,
               uint32_t type, uint64_t offset);

/* A small valid model, described simply: tensors get consecutive aligned
 * offsets; extra_kv lets a test add its own keys after the standard ones. */
typedef struct gw_tensor_spec {
    const char *name;
    uint32_t type;
    uint32_t n_dims;
    int64_t ne[4];
} gw_tensor_spec;

/* Writes a llama-like model with n_layer blocks of the given sizes. */
void gw_tiny_model(gw *w, const char *arch, uint32_t n_layer, uint32_t n_embd,
                   uint32_t n_ff, uint32_t n_vocab, uint32_t type);
/* The same with the output layer stored first in the file, or last. */
void gw_tiny_model_order(gw *w, const char *arch, uint32_t n_layer, uint32_t n_embd,
                         uint32_t n_ff, uint32_t n_vocab, uint32_t type, bool output_first);

/* Writes w to path; returns 0 on success. */
int gw_write_file(const gw *w, const char *path);
/* Where the environment variable dir_env names a folder (GGFIT_ARCHS_DUMP,
 * GGFIT_MTMD_DUMP, ...): writes w there as `file` and appends the line
 * "<file>\t<where>" to the folder's SPECS, which tests/test_tiny.c names
 * the spec that wrote a file by. Returns 0 on success or when dir_env is
 * unset. */
int gw_dump(const gw *w, const char *dir_env, const char *file, const char *where);

#endif
