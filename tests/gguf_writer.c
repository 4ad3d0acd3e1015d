/*
 * gguf_writer.c - see gguf_writer.h. Aborts on out of memory: it is test
 * code and a failed allocation there is a broken test machine.
 */
#include "gguf_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggfit.h"

void gw_free(gw *w)
{
    free(w->data);
    w->data = NULL;
    w->len = w->cap = 0;
}

void gw_bytes(gw *w, const void *p, size_t n)
{
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 1024;
        while (cap < w->len + n)
            cap *= 2;
        w->data = realloc(w->data, cap);
        if (!w->data)
            abort();
        w->cap = cap;
    }
    if (n)
        memcpy(w->data + w->len, p, n);
    w->len += n;
}

static void le(gw *w, uint64_t v, int n)
{
    unsigned char b[8];
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    gw_bytes(w, b, (size_t)n);
}

void gw_u8(gw *w, uint8_t v) { le(w, v, 1); }
void gw_u16(gw *w, uint16_t v) { le(w, v, 2); }
void gw_u32(gw *w, uint32_t v) { le(w, v, 4); }
void gw_u64(gw *w, uint64_t v) { le(w, v, 8); }

void gw_f32(gw *w, float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    gw_u32(w, b);
}

void gw_f64(gw *w, double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    gw_u64(w, b);
}

void gw_str(gw *w, const char *s)
{
    gw_u64(w, strlen(s));
    gw_bytes(w, s, strlen(s));
}

void gw_pad(gw *w, size_t align)
{
    while (w->len % align)
        gw_u8(w, 0);
}

void gw_header(gw *w, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    gw_bytes(w, "GGUF", 4);
    gw_u32(w, version);
    gw_u64(w, n_tensors);
    gw_u64(w, n_kv);
}

void gw_key(gw *w, const char *key, uint32_t type)
{
    gw_str(w, key);
    gw_u32(w, type);
}

void gw_kv_u32(gw *w, const char *key, uint32_t v)
{
    gw_key(w, key, GGFIT_GGUF_UINT32);
    gw_u32(w, v);
}

void gw_kv_str(gw *w, const char *key, const char *v)
{
    gw_key(w, key, GGFIT_GGUF_STRING);
    gw_str(w, v);
}

void gw_kv_f32(gw *w, const char *key, float v)
{
    gw_key(w, key, GGFIT_GGUF_FLOAT32);
    gw_f32(w, v);
}

void gw_kv_arr_u32(gw *w, const char *key, const uint32_t *v, uint64_t n)
{
    gw_key(w, key, GGFIT_GGUF_ARRAY);
    gw_u32(w, GGFIT_GGUF_UINT32);
    gw_u64(w, n);
    for (uint64_t i = 0; i < n; i++)
        gw_u32(w, v[i]);
}

void gw_tensor(gw *w, const char *name, uint32_t n_dims, const int64_t *ne,
               uint32_t type, uint64_t offset)
{
    gw_str(w, name);
    gw_u32(w, n_dims);
    for (uint32_t d = 0; d < n_dims; d++)
        gw_u64(w, (uint64_t)ne[d]);
    gw_u32(w, type);
    gw_u64(w, offset);
}

void gw_tiny_model(gw *w, const char *arch, uint32_t n_layer, uint32_t n_embd,
                   uint32_t n_ff, uint32_t n_vocab, uint32_t type)
{
    gw_tiny_model_order(w, arch, n_layer, n_embd, n_ff, n_vocab, type, false);
}

void gw_tiny_model_order(gw *w, const char *arch, uint32_t n_layer, uint32_t n_embd,
                         uint32_t n_ff, uint32_t n_vocab, uint32_t type, bool output_first)
{
    char key[128], name[64];
    uint64_t n_tensors = 3 + (uint64_t)n_layer * 9;
    gw_header(w, 3, n_tensors, 9);
    gw_kv_str(w, "general.architecture", arch);
    gw_kv_str(w, "general.name", "tiny");
    gw_kv_u32(w, "general.alignment", 32);
#define KEY(s) (snprintf(key, sizeof key, "%s." s, arch), key)
    gw_kv_u32(w, KEY("block_count"), n_layer);
    gw_kv_u32(w, KEY("context_length"), 4096);
    gw_kv_u32(w, KEY("embedding_length"), n_embd);
    gw_kv_u32(w, KEY("feed_forward_length"), n_ff);
    gw_kv_u32(w, KEY("attention.head_count"), n_embd / 64);
    gw_kv_f32(w, KEY("attention.layer_norm_rms_epsilon"), 1e-6f);   /* llama.cpp requires it */
#undef KEY
    uint64_t off = 0;
    struct { const char *fmt; uint32_t type; int64_t ne0, ne1; } per[] = {
        { "blk.%u.attn_norm.weight", GGFIT_TYPE_F32, n_embd, 1 },
        { "blk.%u.attn_q.weight", type, n_embd, n_embd },
        { "blk.%u.attn_k.weight", type, n_embd, n_embd },
        { "blk.%u.attn_v.weight", type, n_embd, n_embd },
        { "blk.%u.attn_output.weight", type, n_embd, n_embd },
        { "blk.%u.ffn_norm.weight", GGFIT_TYPE_F32, n_embd, 1 },
        { "blk.%u.ffn_gate.weight", type, n_embd, n_ff },
        { "blk.%u.ffn_up.weight", type, n_embd, n_ff },
        { "blk.%u.ffn_down.weight", type, n_ff, n_embd },
    };
#define TENSOR(nm, t, a, b) do { \
        int64_t ne[2] = { (a), (b) }; \
        gw_tensor(w, (nm), (b) == 1 ? 1 : 2, ne, (t), off); \
        off += (ggfit_row_bytes((t), (uint64_t)(a)) * (uint64_t)(b) + 31) / 32 * 32; \
    } while (0)
    if (output_first) {
        TENSOR("output_norm.weight", GGFIT_TYPE_F32, n_embd, 1);
        TENSOR("output.weight", type, n_embd, n_vocab);
    }
    TENSOR("token_embd.weight", type, n_embd, n_vocab);
    for (uint32_t il = 0; il < n_layer; il++)
        for (size_t k = 0; k < sizeof per / sizeof per[0]; k++) {
            snprintf(name, sizeof name, per[k].fmt, il);
            TENSOR(name, per[k].type, per[k].ne0, per[k].ne1);
        }
    if (!output_first) {
        TENSOR("output_norm.weight", GGFIT_TYPE_F32, n_embd, 1);
        TENSOR("output.weight", type, n_embd, n_vocab);
    }
#undef TENSOR
    gw_pad(w, 32);
}

int gw_write_file(const gw *w, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(w->data, 1, w->len, f);
    return fclose(f) != 0 || n != w->len ? -1 : 0;
}

int gw_dump(const gw *w, const char *dir_env, const char *file, const char *where)
{
    const char *dir = getenv(dir_env);
    if (!dir || !*dir)
        return 0;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (gw_write_file(w, path))
        return -1;
    snprintf(path, sizeof path, "%s/SPECS", dir);
    FILE *f = fopen(path, "a");
    if (!f)
        return -1;
    fprintf(f, "%s\t%s\n", file, where);
    return fclose(f) != 0 ? -1 : 0;
}
