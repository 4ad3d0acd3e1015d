/*
 * fuzz_gguf.c - libFuzzer target for the GGUF reader and the model
 * description built on it (`make fuzz`).
 *
 * Each input is read as a GGUF header from memory. A refused input must
 * come with a message. An accepted one is used the way a client would:
 * every value decoded (arrays walked element by element, nested ones too),
 * every tensor looked at, then the model described and rendered, so that
 * the sanitizers see every byte the accessors and renderers touch; a
 * projector file (clip.*) is measured as well.
 * Invariants the reader promises are checked with abort(), which libFuzzer
 * reports as a crash with the input that broke them. The same bytes are
 * also read as a file (mapped, its string arrays read with pread through a
 * buffer made small here) and as a remote source would give them, and must
 * read alike.
 */
#define _GNU_SOURCE   /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ggfit_app.h"
#include "base/base.h"
#include "gguf/gguf.h"
#include "mtmd/clip.h"

#define MAX_DEPTH 8   /* gguf.c refuses arrays nested deeper than this */

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

/* Folds bytes into a value the optimizer cannot drop, so every byte of a
 * string is really read (and bounds-checked by ASan). */
static volatile uint64_t sink;

static void touch(const void *p, uint64_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0;
    for (uint64_t i = 0; i < n; i++)
        h = h * 31 + b[i];
    sink ^= h;
}

static void walk_value(const ggfit_value *v, int depth)
{
    CHECK(v->type < GGFIT_GGUF_TYPE_COUNT);
    if (v->type == GGFIT_GGUF_STRING) {
        touch(v->str, v->n);
        return;
    }
    if (v->type != GGFIT_GGUF_ARRAY) {
        sink ^= v->u ^ (uint64_t)v->i;
        return;
    }
    CHECK(depth < MAX_DEPTH);
    CHECK(v->elem_type < GGFIT_GGUF_TYPE_COUNT);
    ggfit_value_iter it = {0};
    ggfit_value e;
    uint64_t n = 0;
    while (ggfit_value_next(v, &it, &e)) {
        CHECK(e.type == v->elem_type);
        walk_value(&e, depth + 1);
        n++;
    }
    CHECK(n == v->n);
}

static void walk_gguf(const ggfit_gguf *g)
{
    uint32_t align = ggfit_gguf_alignment(g);
    CHECK(align != 0 && (align & (align - 1)) == 0);
    CHECK(ggfit_gguf_data_offset(g, 0) % align == 0);
    for (uint64_t i = 0; i < ggfit_gguf_n_kv(g); i++) {
        const char *key = ggfit_gguf_key(g, i);
        ggfit_value v;
        CHECK(key && *key);
        CHECK(ggfit_gguf_find_key(g, key) == (int64_t)i);   /* keys are unique */
        CHECK(ggfit_gguf_value(g, i, &v));
        walk_value(&v, 0);
    }
    uint64_t total = 0;
    for (uint64_t i = 0; i < ggfit_gguf_n_tensors(g); i++) {
        const ggfit_tensor_info *t = ggfit_gguf_tensor(g, i);
        CHECK(t && t->name);
        size_t len = strlen(t->name);
        CHECK(len > 0 && len < 64);
        CHECK(ggfit_gguf_find_tensor(g, t->name) == (int64_t)i);
        CHECK(ggfit_type_valid(t->type) && t->n_dims <= 4);
        for (int d = 0; d < 4; d++)
            CHECK(t->ne[d] >= 0 && (d < (int)t->n_dims || t->ne[d] == 1));
        CHECK(t->offset % align == 0);
        total += t->n_bytes;
    }
    CHECK(total == ggfit_gguf_tensor_bytes(g));
    CHECK(ggfit_gguf_tensor(g, ggfit_gguf_n_tensors(g)) == NULL);
}

/* Projection and fit of whatever the header describes, on one small GPU: a
 * hostile model may be refused with a message, never crash. A fixed context
 * keeps a huge context_length from making each input slow. */
static void walk_projection(const ggfit_model *m)
{
    ggfit_params p;
    ggfit_device dev;
    size_t n;
    char *err = NULL;
    ggfit_params_init(&p);
    p.n_ctx = 512;
    p.set_n_ctx = true;
    p.n_ubatch = 64;
    CHECK(ggfit_devices_parse("rpc:64MiB", &dev, 1, &n, NULL) == GGFIT_OK);
    ggfit_projection pr;
    if (ggfit_project(m, &p, &dev, n, &pr, NULL, &err) != GGFIT_OK) {
        CHECK(err != NULL);
        ggfit_free(err);
        return;
    }
    /* A fit is tens of projections: on the large real layouts among the
     * seeds it would slow every mutation of them to seconds under the
     * sanitizers, and the reference tests cover those layouts. */
    if (ggfit_model_n_tensors(m) > 256 || ggfit_model_hparams(m)->n_layer > 256)
        return;   /* a fit's search over thousands of empty blocks takes seconds too */
    ggfit_fit_result r;
    if (ggfit_fit(m, &p, &dev, n, NULL, &r, &err) != GGFIT_OK) {
        CHECK(err != NULL);
        ggfit_free(err);
        return;
    }
    char *args = ggfit_fit_args(&r, &dev, n);
    CHECK(args != NULL);
    ggfit_free(args);
    ggfit_free(r.log);
}

/* The model takes g, also when it fails. */
static void walk_model(ggfit_gguf *g)
{
    ggfit_model *m = NULL;
    char *err = NULL;
    if (ggfit_model_from_gguf(g, &m, &err) != GGFIT_OK) {
        CHECK(err != NULL && m == NULL);
        ggfit_free(err);
        return;
    }
    CHECK(err == NULL);
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    CHECK(hp->n_nextn <= hp->n_layer);
    for (uint64_t i = 0; i < ggfit_model_n_tensors(m); i++) {
        const ggfit_tensor *t = ggfit_model_tensor(m, i);
        CHECK(t->layer >= -1 && t->layer < (int64_t)hp->n_layer);
        CHECK((unsigned)t->role < GGFIT_ROLE_COUNT);
    }
    char *text = ggfit_inspect_text(m);
    CHECK(text != NULL);   /* NULL only when out of memory */
    touch(text, strlen(text));
    ggfit_free(text);
    /* JSON strings are made valid UTF-8, so only out of memory gives NULL. */
    char *json = ggfit_inspect_json(m, true);
    CHECK(json != NULL);
    touch(json, strlen(json));
    ggfit_free(json);
    walk_projection(m);
    ggfit_model_free(m);
}

/* A projector file (clip.* keys) measured as llama-server's mtmd measures
 * it, on one small GPU: refused with a message or measured, never a crash.
 * Read again from memory: the projector takes its header. */
static void walk_mmproj(const uint8_t *data, size_t size, const ggfit_gguf *mem)
{
    if (ggfit_gguf_find_key(mem, "clip.has_vision_encoder") < 0 &&
        ggfit_gguf_find_key(mem, "clip.has_audio_encoder") < 0)
        return;
    ggfit_gguf *g = NULL;
    ggfit_mmproj *mm = NULL;
    char *err = NULL;
    CHECK(ggfit_gguf_open_memory(data, size, "fuzz.gguf", &g, &err) == GGFIT_OK);
    if (ggfit__mmproj_from_gguf(g, "fuzz.gguf", &mm, &err) != GGFIT_OK) {
        CHECK(err != NULL && mm == NULL);
        ggfit_free(err);
        return;
    }
    ggfit_device dev;
    size_t n;
    CHECK(ggfit_devices_parse("rpc:64MiB", &dev, 1, &n, NULL) == GGFIT_OK);
    ggfit_mmproj_params p;
    ggfit_mmproj_params_init(&p);
    ggfit_mmproj_usage u;
    if (ggfit_mmproj_measure(mm, &p, &dev, n, &u, &err) != GGFIT_OK) {
        CHECK(err != NULL);
        ggfit_free(err);
    }
    ggfit_mmproj_free(mm);
}

/* The remote path's reader (src/remote/ feeds it over HTTP): the same
 * bytes given in small pieces, as range requests bring them. */
typedef struct mem_src { const uint8_t *data; size_t size; } mem_src;

static ggfit_status src_open(void *ctx, const char *name, uint64_t *size, char **err)
{
    mem_src *m = ctx;
    if (strcmp(name, "fuzz.gguf") != 0)   /* a split model's other shard */
        return ggfit__fail(err, GGFIT_EIO, "%s: no such shard", name);
    *size = m->size;
    return GGFIT_OK;
}

/* Gives what is asked for, sometimes no more than the least asked for, as
 * a source that skips read-ahead (a cached header) does. */
static ggfit_status src_read(void *ctx, uint64_t offset, void *dst, size_t min, size_t n,
                             size_t *got, char **err)
{
    mem_src *m = ctx;
    (void)err;
    CHECK(offset <= m->size && min <= n);
    if ((offset + m->size) % 3 == 0)
        n = min;
    *got = n < m->size - offset ? n : (size_t)(m->size - offset);
    memcpy(dst, m->data + offset, *got);
    return GGFIT_OK;
}

static void walk_source(const uint8_t *data, size_t size, const ggfit_gguf *mem)
{
    mem_src m = { data, size };
    ggfit__gguf_source src = { &m, 16 + size % 256, src_open, src_read };
    ggfit_gguf *g = NULL;
    char *err = NULL;
    if (ggfit__gguf_open_source("fuzz.gguf", &src, &g, &err) != GGFIT_OK) {
        CHECK(err != NULL && g == NULL);
        /* refused only where the file is: a split model's other shards */
        CHECK(mem == NULL || ggfit_gguf_find_key(mem, "split.count") >= 0 ||
              ggfit_gguf_find_key(mem, "split.no") >= 0);
        ggfit_free(err);
        return;
    }
    CHECK(mem != NULL);
    CHECK(ggfit_gguf_n_tensors(g) == ggfit_gguf_n_tensors(mem));
    CHECK(ggfit_gguf_n_kv(g) == ggfit_gguf_n_kv(mem));
    CHECK(ggfit_gguf_tensor_bytes(g) == ggfit_gguf_tensor_bytes(mem));
    CHECK(ggfit_gguf_data_offset(g, 0) == ggfit_gguf_data_offset(mem, 0));
    ggfit_gguf_close(g);
}

/* The bytes as a local file (an in-memory one): accepted or refused as
 * from memory, with the same message after the name; split models aside,
 * whose other shards a file's name makes the reader look for. */
static void walk_file(const uint8_t *data, size_t size, const ggfit_gguf *mem,
                      const char *mem_err)
{
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("fuzz.gguf", 0)) < 0)
        return;
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        return;
    if (mem && (ggfit_gguf_find_key(mem, "split.count") >= 0 ||
                ggfit_gguf_find_key(mem, "split.no") >= 0))
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ggfit_gguf *g = NULL;
    char *err = NULL;
    if (ggfit_gguf_open(path, &g, &err) != GGFIT_OK) {
        CHECK(err != NULL && g == NULL && mem_err != NULL);
        size_t n = strlen(path);
        CHECK(strncmp(err, path, n) == 0);
        if (!strstr(mem_err, "split"))
            CHECK(strcmp(err + n, mem_err + strlen("fuzz.gguf")) == 0);
        ggfit_free(err);
        return;
    }
    CHECK(mem != NULL);
    CHECK(ggfit_gguf_n_tensors(g) == ggfit_gguf_n_tensors(mem));
    CHECK(ggfit_gguf_n_kv(g) == ggfit_gguf_n_kv(mem));
    CHECK(ggfit_gguf_tensor_bytes(g) == ggfit_gguf_tensor_bytes(mem));
    CHECK(ggfit_gguf_data_offset(g, 0) == ggfit_gguf_data_offset(mem, 0));
    ggfit_gguf_close(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ggfit_gguf *g = NULL;
    char *err = NULL;
    if (ggfit_gguf_open_memory(data, size, "fuzz.gguf", &g, &err) != GGFIT_OK) {
        CHECK(err != NULL && g == NULL);
        CHECK(strncmp(err, "fuzz.gguf: ", 11) == 0);
        walk_file(data, size, NULL, err);
        ggfit_free(err);
        walk_source(data, size, NULL);
        return 0;
    }
    CHECK(err == NULL);
    walk_file(data, size, g, NULL);
    walk_source(data, size, g);
    walk_gguf(g);
    walk_mmproj(data, size, g);
    walk_model(g);
    return 0;
}
