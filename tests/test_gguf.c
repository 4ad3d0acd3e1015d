/*
 * test_gguf.c - the GGUF reader: random write/read round trips with a fixed
 * seed, split models, the shipped layouts, and the API's edge cases.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "test_util.h"

/* ---- a fixed-seed generator ------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;   /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 2685821657736338717ull;
}

static uint64_t rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

/* ---- expected values, written and then compared with what is read ---------- */

typedef struct rv {
    uint32_t type, elem;
    uint64_t n;            /* array elements or string bytes */
    uint64_t bits;         /* scalars: the raw value */
    char str[24];
    struct rv *items;
} rv;

static void rv_free(rv *v)
{
    if (v->type == GGFIT_GGUF_ARRAY) {
        for (uint64_t i = 0; i < v->n; i++)
            rv_free(&v->items[i]);
        free(v->items);
    }
}

static uint32_t scalar_bytes(uint32_t t)
{
    static const uint32_t size[] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
    return size[t];
}

static void rv_make(rv *v, uint32_t type, int depth)
{
    memset(v, 0, sizeof *v);
    v->type = type;
    if (type == GGFIT_GGUF_STRING) {
        v->n = rnd_below(sizeof v->str);
        for (uint64_t i = 0; i < v->n; i++)
            v->str[i] = (char)(1 + rnd_below(255));   /* any byte but NUL */
    } else if (type == GGFIT_GGUF_ARRAY) {
        v->elem = (uint32_t)rnd_below(GGFIT_GGUF_TYPE_COUNT);
        if (v->elem == GGFIT_GGUF_ARRAY && depth >= 3)
            v->elem = GGFIT_GGUF_STRING;
        v->n = rnd_below(6);
        v->items = calloc(v->n ? v->n : 1, sizeof *v->items);
        for (uint64_t i = 0; i < v->n; i++)
            rv_make(&v->items[i], v->elem, depth + 1);
    } else if (type == GGFIT_GGUF_BOOL) {
        v->bits = rnd_below(2);
    } else if (type == GGFIT_GGUF_FLOAT32) {
        float f = (float)((double)(int64_t)rnd() / 1e9);
        uint32_t b;
        memcpy(&b, &f, 4);
        v->bits = b;
    } else if (type == GGFIT_GGUF_FLOAT64) {
        double d = (double)(int64_t)rnd() / 1e6;
        memcpy(&v->bits, &d, 8);
    } else {
        uint32_t nb = scalar_bytes(type);
        v->bits = nb == 8 ? rnd() : rnd() & ((1ull << (8 * nb)) - 1);
    }
}

static void rv_write(gw *w, const rv *v)
{
    switch (v->type) {
    case GGFIT_GGUF_STRING:
        gw_u64(w, v->n);
        gw_bytes(w, v->str, (size_t)v->n);
        break;
    case GGFIT_GGUF_ARRAY:
        gw_u32(w, v->elem);
        gw_u64(w, v->n);
        for (uint64_t i = 0; i < v->n; i++)
            rv_write(w, &v->items[i]);
        break;
    default:
        for (uint32_t b = 0; b < scalar_bytes(v->type); b++)
            gw_u8(w, (uint8_t)(v->bits >> (8 * b)));
    }
}

static void rv_check(const rv *want, const ggfit_value *got)
{
    assert_int_equal(got->type, want->type);
    switch (want->type) {
    case GGFIT_GGUF_UINT8: case GGFIT_GGUF_UINT16: case GGFIT_GGUF_UINT32:
    case GGFIT_GGUF_UINT64: case GGFIT_GGUF_BOOL:
        assert_true(got->u == want->bits);
        break;
    case GGFIT_GGUF_INT8:
        assert_int_equal(got->i, (int8_t)want->bits);
        break;
    case GGFIT_GGUF_INT16:
        assert_int_equal(got->i, (int16_t)want->bits);
        break;
    case GGFIT_GGUF_INT32:
        assert_int_equal(got->i, (int32_t)want->bits);
        break;
    case GGFIT_GGUF_INT64:
        assert_true(got->i == (int64_t)want->bits);
        break;
    case GGFIT_GGUF_FLOAT32: {
        float f;
        uint32_t b = (uint32_t)want->bits;
        memcpy(&f, &b, 4);
        assert_true(got->f == (double)f);
        break;
    }
    case GGFIT_GGUF_FLOAT64: {
        double d;
        memcpy(&d, &want->bits, 8);
        assert_true(got->f == d);
        break;
    }
    case GGFIT_GGUF_STRING:
        assert_int_equal(got->n, want->n);
        assert_memory_equal(got->str, want->str, (size_t)want->n);
        break;
    case GGFIT_GGUF_ARRAY: {
        ggfit_value e;
        ggfit_value_iter it = {0};
        uint64_t k = 0;
        assert_int_equal(got->elem_type, want->elem);
        assert_int_equal(got->n, want->n);
        while (ggfit_value_next(got, &it, &e))
            rv_check(&want->items[k++], &e);
        assert_int_equal(k, want->n);
        break;
    }
    }
}

/* ---- random files ---------------------------------------------------------- */

typedef struct rfile {
    uint32_t version, alignment;
    uint64_t n_kv, n_tensors;
    char keys[40][32];
    rv vals[40];
    ggfit_tensor_info tensors[24];
    char names[24][24];
} rfile;

static void rfile_make(rfile *f, gw *w)
{
    static const uint32_t aligns[] = { 8, 16, 32, 64, 256 };
    memset(f, 0, sizeof *f);
    f->version = 2 + (uint32_t)rnd_below(2);
    f->alignment = aligns[rnd_below(5)];
    f->n_kv = 1 + rnd_below(39);
    f->n_tensors = rnd_below(24);
    gw_header(w, f->version, f->n_tensors, f->n_kv);
    snprintf(f->keys[0], sizeof f->keys[0], "general.alignment");
    f->vals[0].type = GGFIT_GGUF_UINT32;
    f->vals[0].bits = f->alignment;
    for (uint64_t i = 1; i < f->n_kv; i++) {
        snprintf(f->keys[i], sizeof f->keys[i], "test.key%llu", (unsigned long long)i);
        rv_make(&f->vals[i], (uint32_t)rnd_below(GGFIT_GGUF_TYPE_COUNT), 0);
    }
    for (uint64_t i = 0; i < f->n_kv; i++) {
        gw_key(w, f->keys[i], f->vals[i].type);
        rv_write(w, &f->vals[i]);
    }
    uint64_t off = 0;
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        ggfit_tensor_info *t = &f->tensors[i];
        uint32_t type;
        do
            type = (uint32_t)rnd_below(GGFIT_TYPE_COUNT);
        while (!ggfit_type_valid(type));
        snprintf(f->names[i], sizeof f->names[i], "blk.%llu.t.weight", (unsigned long long)i);
        t->name = f->names[i];
        t->type = type;
        t->n_dims = 1 + (uint32_t)rnd_below(4);
        uint64_t n_elem = 1;
        for (uint32_t d = 0; d < 4; d++) {
            t->ne[d] = d >= t->n_dims ? 1 : d == 0 ? (int64_t)(ggfit_type_block_size(type) *
                                                               (1 + rnd_below(4)))
                                                   : (int64_t)(1 + rnd_below(5));
            n_elem *= (uint64_t)t->ne[d];
        }
        t->n_bytes = n_elem / ggfit_type_block_size(type) * ggfit_type_block_bytes(type);
        t->offset = off;
        off += (t->n_bytes + f->alignment - 1) / f->alignment * f->alignment;
        gw_tensor(w, t->name, t->n_dims, t->ne, t->type, t->offset);
    }
    gw_pad(w, f->alignment);
    for (uint64_t b = 0; b < off && b < 4096; b++)   /* some of the data */
        gw_u8(w, (uint8_t)b);
}

static void rfile_check(const rfile *f, const ggfit_gguf *g)
{
    assert_int_equal(ggfit_gguf_version(g), f->version);
    assert_int_equal(ggfit_gguf_alignment(g), f->alignment);
    assert_int_equal(ggfit_gguf_n_kv(g), f->n_kv);
    for (uint64_t i = 0; i < f->n_kv; i++) {
        ggfit_value v;
        assert_string_equal(ggfit_gguf_key(g, i), f->keys[i]);
        assert_int_equal(ggfit_gguf_find_key(g, f->keys[i]), (int64_t)i);
        assert_true(ggfit_gguf_value(g, i, &v));
        rv_check(&f->vals[i], &v);
    }
    uint64_t total = 0;
    assert_int_equal(ggfit_gguf_n_tensors(g), f->n_tensors);
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const ggfit_tensor_info *want = &f->tensors[i], *got = ggfit_gguf_tensor(g, i);
        assert_string_equal(got->name, want->name);
        assert_int_equal(got->type, want->type);
        assert_int_equal(got->n_dims, want->n_dims);
        for (int d = 0; d < 4; d++)
            assert_int_equal(got->ne[d], want->ne[d]);
        assert_int_equal(got->offset, want->offset);
        assert_int_equal(got->n_bytes, want->n_bytes);
        assert_int_equal(ggfit_gguf_find_tensor(g, want->name), (int64_t)i);
        total += want->n_bytes;
    }
    assert_int_equal(ggfit_gguf_tensor_bytes(g), total);
    assert_int_equal(ggfit_gguf_data_offset(g, 0) % f->alignment, 0);
    assert_int_equal(ggfit_gguf_find_key(g, "no.such.key"), -1);
    assert_int_equal(ggfit_gguf_find_tensor(g, "no.such.tensor"), -1);
}

static void test_round_trips(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/roundtrip.gguf", tmp_dir());
    rng_state = 0x9e3779b97f4a7c15ull;   /* fixed seed: failures reproduce */
    for (int iter = 0; iter < 300; iter++) {
        rfile *f = calloc(1, sizeof *f);
        gw w = {0};
        ggfit_gguf *g = NULL;
        char *err = NULL;
        rfile_make(f, &w);
        /* From memory and from a file: the same answer. */
        int rc = ggfit_gguf_open_memory(w.data, w.len, "mem.gguf", &g, &err);
        if (rc)
            fail_msg("iteration %d: %s", iter, err);
        rfile_check(f, g);
        ggfit_gguf_close(g);
        assert_int_equal(gw_write_file(&w, path), 0);
        rc = ggfit_gguf_open(path, &g, &err);
        if (rc)
            fail_msg("iteration %d: %s", iter, err);
        rfile_check(f, g);
        assert_int_equal(ggfit_gguf_n_shards(g), 1);
        assert_string_equal(ggfit_gguf_shard_path(g, 0), path);
        ggfit_gguf_close(g);
        for (uint64_t i = 0; i < f->n_kv; i++)
            rv_free(&f->vals[i]);
        free(f);
        gw_free(&w);
    }
    unlink(path);
}

/* A tokenizer-sized array of strings is counted and walked, not copied. */
static void test_large_string_array(void **state)
{
    (void)state;
    gw w = {0};
    enum { N = 200000 };
    gw_header(&w, 3, 0, 2);
    gw_kv_str(&w, "general.architecture", "llama");
    gw_key(&w, "tokenizer.ggml.tokens", GGFIT_GGUF_ARRAY);
    gw_u32(&w, GGFIT_GGUF_STRING);
    gw_u64(&w, N);
    for (int i = 0; i < N; i++) {
        char tok[16];
        snprintf(tok, sizeof tok, "t%d", i);
        gw_str(&w, tok);
    }
    ggfit_gguf *g;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tok.gguf", &g, &err), GGFIT_OK);
    ggfit_value v, e;
    ggfit_value_iter it = {0};
    assert_true(ggfit_gguf_value(g, 1, &v));
    assert_int_equal(v.n, N);
    int k = 0;
    while (ggfit_value_next(&v, &it, &e)) {
        if (k == N - 1)
            assert_memory_equal(e.str, "t199999", 7);
        k++;
    }
    assert_int_equal(k, N);
    assert_false(ggfit_value_next(&e, &it, &v));   /* not an array */
    ggfit_gguf_close(g);
    gw_free(&w);
}

/* A string array long enough to be walked by several walkers side by side,
 * with strings made to mislead their guesses: contents that read as chains
 * of short lengths, zero bytes, strings longer than a guess accepts. The
 * reader must land where one walker would: on the key after the array, and
 * on the first string that does not fit when the file is cut short. */
static size_t tricky_strings(gw *w, uint64_t n, size_t *starts)
{
    size_t first = w->len;
    for (uint64_t i = 0; i < n; i++) {
        unsigned char buf[4096];
        size_t len;
        starts[i] = w->len;
        switch (rnd_below(8)) {
        case 0: {   /* a fake chain: lengths of 0 to 7 and their bytes */
            len = 0;
            for (int h = 0; h < 20; h++) {
                uint64_t l = rnd_below(8);
                for (int b = 0; b < 8; b++)
                    buf[len++] = (unsigned char)(l >> (8 * b));
                for (uint64_t b = 0; b < l; b++)
                    buf[len++] = (unsigned char)('a' + rnd_below(26));
            }
            break;
        }
        case 1:     /* zeros */
            len = 8 + rnd_below(40);
            memset(buf, 0, len);
            break;
        case 2:     /* long */
            len = 1100 + rnd_below(2900);
            for (size_t b = 0; b < len; b++)
                buf[b] = (unsigned char)rnd();
            break;
        default:    /* token-like */
            len = rnd_below(13);
            for (size_t b = 0; b < len; b++)
                buf[b] = (unsigned char)(' ' + rnd_below(90));
            break;
        }
        gw_u64(w, len);
        gw_bytes(w, buf, len);
    }
    return w->len - first;
}

static void test_strings_side_by_side(void **state)
{
    (void)state;
    enum { N = 60000 };
    size_t *starts = malloc((N + 1) * sizeof *starts);
    assert_non_null(starts);
    for (uint64_t seed = 1; seed <= 6; seed++) {
        rng_state = 0x9e3779b97f4a7c15ull * seed;
        gw w = {0};
        gw_header(&w, 3, 0, 3);
        gw_kv_str(&w, "general.architecture", "llama");
        gw_key(&w, "tokenizer.ggml.merges", GGFIT_GGUF_ARRAY);
        gw_u32(&w, GGFIT_GGUF_STRING);
        gw_u64(&w, N);
        tricky_strings(&w, N, starts);
        starts[N] = w.len;
        gw_kv_u32(&w, "after", 0xC0FFEEu);

        ggfit_gguf *g;
        char *err = NULL;
        assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "t.gguf", &g, &err), GGFIT_OK);
        ggfit_value v;
        int64_t k = ggfit_gguf_find_key(g, "after");
        assert_true(k == 2 && ggfit_gguf_value(g, (uint64_t)k, &v));
        assert_int_equal(v.u, 0xC0FFEEu);
        ggfit_gguf_close(g);

        /* Cut inside the array: the error names the first string that
         * does not fit, as a single walk finds it. */
        for (int cut = 1; cut < 24; cut++) {
            size_t at = starts[0] + (starts[N] - starts[0]) * (size_t)cut / 24 +
                        (size_t)rnd_below(64);
            size_t i = 0;
            while (i < N && starts[i + 1] <= at)
                i++;
            char want[64];
            snprintf(want, sizeof want, "(at offset %zu)", starts[i]);
            assert_int_not_equal(ggfit_gguf_open_memory(w.data, at, "t.gguf", &g, &err),
                                 GGFIT_OK);
            if (!strstr(err, want))
                fail_msg("cut at %zu: '%s', expected %s", at, err, want);
            ggfit_free(err);
        }
        gw_free(&w);
    }
    free(starts);
}

/* A file's big string arrays are walked in a buffer read with pread, not
 * in the mapping (gguf.c stream_strings): the file read from disk must give
 * what the same bytes give in memory, whole and cut anywhere (the same
 * message, at the same offset), with strings longer than the buffer among
 * them and one of them cut. */
static void test_strings_streamed(void **state)
{
    (void)state;
    enum { N = 40000, HUGE = 300 << 10 };
    size_t *starts = malloc((N + 1) * sizeof *starts);
    unsigned char *huge = malloc(HUGE);
    assert_true(starts && huge);
    for (size_t b = 0; b < HUGE; b++)
        huge[b] = (unsigned char)(b * 7);
    char path[512];
    snprintf(path, sizeof path, "%s/streamed.gguf", tmp_dir());
    for (uint64_t seed = 1; seed <= 3; seed++) {
        rng_state = 0x2545f4914f6cdd1dull * seed;
        gw w = {0};
        gw_header(&w, 3, 0, 3);
        gw_kv_str(&w, "general.architecture", "llama");
        gw_key(&w, "tokenizer.ggml.tokens", GGFIT_GGUF_ARRAY);
        gw_u32(&w, GGFIT_GGUF_STRING);
        gw_u64(&w, N);
        /* tricky strings, with three longer than the buffer among them */
        size_t k = 0;
        for (int part = 0; part < 4; part++) {
            size_t n = part < 3 ? (N - 3) / 4 : N - k;
            tricky_strings(&w, n, starts + k);
            k += n;
            if (part < 3) {
                starts[k++] = w.len;
                gw_u64(&w, HUGE - (size_t)part);
                gw_bytes(&w, huge, HUGE - (size_t)part);
            }
        }
        assert_int_equal(k, N);
        starts[N] = w.len;
        gw_kv_u32(&w, "after", 0xC0FFEEu);
        assert_int_equal(gw_write_file(&w, path), 0);

        ggfit_gguf *g;
        char *err = NULL;
        if (ggfit_gguf_open(path, &g, &err) != GGFIT_OK)
            fail_msg("%s", err);
        ggfit_value v, e;
        ggfit_value_iter it = {0};
        int64_t at = ggfit_gguf_find_key(g, "after");
        assert_true(at == 2 && ggfit_gguf_value(g, (uint64_t)at, &v));
        assert_int_equal(v.u, 0xC0FFEEu);
        assert_true(ggfit_gguf_value(g, 1, &v));
        assert_int_equal(v.n, N);
        uint64_t count = 0, huge_seen = 0;
        while (ggfit_value_next(&v, &it, &e)) {
            count++;
            huge_seen += e.n > (100 << 10);
        }
        assert_int_equal(count, N);
        assert_int_equal(huge_seen, 3);
        ggfit_gguf_close(g);

        /* Cut anywhere in the array, a long string's middle too: the file's
         * message is the memory's. */
        for (int cut = 0; cut < 28; cut++) {
            size_t len = cut < 24 ? starts[0] + (starts[N] - starts[0]) * (size_t)cut / 24 +
                                        (size_t)rnd_below(4096)
                                  : starts[(N - 3) / 4] + 8 + (size_t)rnd_below(HUGE);
            gw c = { .data = w.data, .len = len };
            assert_int_equal(gw_write_file(&c, path), 0);
            char *from_file = NULL, *from_memory = NULL;
            int rf = ggfit_gguf_open(path, &g, &from_file);
            int rm = ggfit_gguf_open_memory(w.data, len, path, &g, &from_memory);
            assert_int_not_equal(rf, GGFIT_OK);
            assert_int_equal(rf, rm);
            if (strcmp(from_file, from_memory))
                fail_msg("cut at %zu: '%s' from the file, '%s' from memory", len, from_file,
                         from_memory);
            ggfit_free(from_file);
            ggfit_free(from_memory);
        }
        gw_free(&w);
    }
    unlink(path);
    free(huge);
    free(starts);
}

/* ---- split models ---------------------------------------------------------- */

static void write_shard(const char *dir, const char *base, uint16_t no, uint16_t count,
                        int32_t total, const char *const *names, int n_names)
{
    gw w = {0};
    char path[512];
    bool first = no == 0;
    gw_header(&w, 3, (uint64_t)n_names, first ? 4 : 2);
    if (first)
        gw_kv_str(&w, "general.architecture", "llama");
    gw_key(&w, "split.no", GGFIT_GGUF_UINT16);
    gw_u16(&w, no);
    gw_key(&w, "split.count", GGFIT_GGUF_UINT16);
    gw_u16(&w, count);
    if (first) {
        gw_key(&w, "split.tensors.count", GGFIT_GGUF_INT32);
        gw_u32(&w, (uint32_t)total);
    }
    for (int i = 0; i < n_names; i++) {
        int64_t ne[2] = { 64, 4 };
        gw_tensor(&w, names[i], 2, ne, GGFIT_TYPE_F32, (uint64_t)i * 1024);
    }
    gw_pad(&w, 32);
    snprintf(path, sizeof path, "%s/%s-%05u-of-%05u.gguf", dir, base, no + 1u, count);
    assert_int_equal(gw_write_file(&w, path), 0);
    gw_free(&w);
}

static void test_split_model(void **state)
{
    (void)state;
    const char *dir = tmp_dir();
    const char *a[] = { "token_embd.weight", "blk.0.attn_q.weight" };
    const char *b[] = { "blk.0.attn_k.weight", "blk.1.attn_q.weight" };
    const char *c[] = { "blk.1.attn_k.weight", "output.weight" };
    write_shard(dir, "m", 0, 3, 6, a, 2);
    write_shard(dir, "m", 1, 3, 6, b, 2);
    write_shard(dir, "m", 2, 3, 6, c, 2);
    /* Whichever shard is named, the model is the same. */
    for (int named = 1; named <= 3; named++) {
        char path[512], *err = NULL;
        ggfit_gguf *g;
        snprintf(path, sizeof path, "%s/m-%05d-of-00003.gguf", dir, named);
        int rc = ggfit_gguf_open(path, &g, &err);
        if (rc)
            fail_msg("%s", err);
        assert_int_equal(ggfit_gguf_n_shards(g), 3);
        assert_int_equal(ggfit_gguf_n_tensors(g), 6);
        assert_string_equal(ggfit_gguf_tensor(g, 0)->name, "token_embd.weight");
        assert_string_equal(ggfit_gguf_tensor(g, 5)->name, "output.weight");
        assert_int_equal(ggfit_gguf_tensor(g, 3)->shard, 1);
        assert_int_equal(ggfit_gguf_tensor(g, 4)->shard, 2);
        assert_int_equal(ggfit_gguf_tensor(g, 4)->offset, 0);
        assert_int_equal(ggfit_gguf_find_tensor(g, "blk.1.attn_q.weight"), 3);
        assert_non_null(strstr(ggfit_gguf_shard_path(g, 2), "m-00003-of-00003.gguf"));
        assert_true(ggfit_gguf_find_key(g, "general.architecture") >= 0);
        assert_int_equal(ggfit_gguf_tensor_bytes(g), 6 * 64 * 4 * 4);
        ggfit_gguf_close(g);
    }
}

static void expect_split_error(const char *dir, const char *base, int status,
                               const char *needle)
{
    char path[512], *err = NULL;
    ggfit_gguf *g = (ggfit_gguf *)1;
    snprintf(path, sizeof path, "%s/%s-00001-of-00002.gguf", dir, base);
    assert_int_equal(ggfit_gguf_open(path, &g, &err), status);
    assert_null(g);
    assert_non_null(err);
    if (!strstr(err, needle))
        fail_msg("'%s' lacks '%s'", err, needle);
    ggfit_free(err);
}

static void test_split_errors(void **state)
{
    (void)state;
    const char *dir = tmp_dir();
    const char *a[] = { "x.weight" }, *b[] = { "y.weight" };
    /* The second shard is missing. */
    write_shard(dir, "missing", 0, 2, 2, a, 1);
    expect_split_error(dir, "missing", GGFIT_EIO, "missing-00002-of-00002.gguf: cannot open");
    /* The same tensor in two shards. */
    write_shard(dir, "dup", 0, 2, 2, a, 1);
    write_shard(dir, "dup", 1, 2, 2, a, 1);
    expect_split_error(dir, "dup", GGFIT_EFORMAT, "duplicate tensor name 'x.weight' (across shards)");
    /* split.tensors.count disagrees with the shards. */
    write_shard(dir, "count", 0, 2, 5, a, 1);
    write_shard(dir, "count", 1, 2, 5, b, 1);
    expect_split_error(dir, "count", GGFIT_EFORMAT, "split.tensors.count is 5");
}

/* ---- the shipped layouts --------------------------------------------------- */

static void test_shipped_layouts(void **state)
{
    (void)state;
    static const struct { const char *file; uint64_t n_tensors, bytes; } want[] = {
        { "gpt-oss-120b-mxfp4.gguf", 687, 63374323968ull },
        { "llama-3.3-70b-Q4_K_M.gguf", 724, 42512531712ull },
        { "qwen3-14b-f16.gguf", 443, 29537464320ull },
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        char path[512], *err = NULL;
        ggfit_gguf *g;
        struct stat st;
        model_path(path, sizeof path, want[k].file);
        assert_int_equal(ggfit_gguf_open(path, &g, &err), GGFIT_OK);
        assert_int_equal(ggfit_gguf_n_tensors(g), want[k].n_tensors);
        assert_int_equal(ggfit_gguf_tensor_bytes(g), want[k].bytes);
        assert_int_equal(ggfit_gguf_version(g), 3);
        /* Header-only: the file ends where the tensor data would begin. */
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(ggfit_gguf_data_offset(g, 0), (uint64_t)st.st_size);
        ggfit_gguf_close(g);
    }
}

/* ---- API edges ---------------------------------------------------------------- */

static void test_api_errors(void **state)
{
    (void)state;
    ggfit_gguf *g = (ggfit_gguf *)1;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open("/nonexistent/model.gguf", &g, &err), GGFIT_EIO);
    assert_null(g);
    assert_non_null(strstr(err, "/nonexistent/model.gguf: cannot open"));
    ggfit_free(err);
    assert_int_equal(ggfit_gguf_open(tmp_dir(), &g, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "not a regular file"));
    ggfit_free(err);
    assert_int_equal(ggfit_gguf_open(NULL, &g, &err), GGFIT_EINVAL);
    ggfit_free(err);
    assert_int_equal(ggfit_gguf_open_memory(NULL, 4, "x", &g, &err), GGFIT_EINVAL);
    ggfit_free(err);
    /* A NULL err is allowed: the status alone comes back. */
    assert_int_equal(ggfit_gguf_open_memory("GGUX", 4, "x", &g, NULL), GGFIT_EFORMAT);
    ggfit_gguf_close(NULL);
}

static void test_accessors_out_of_range(void **state)
{
    (void)state;
    gw w = {0};
    ggfit_gguf *g;
    ggfit_value v;
    gw_header(&w, 2, 0, 1);
    gw_kv_u32(&w, "a", 7);
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "m", &g, NULL), GGFIT_OK);
    assert_int_equal(ggfit_gguf_alignment(g), 32);
    assert_int_equal(ggfit_gguf_data_offset(g, 0), 64);   /* 37 bytes, padded */
    assert_true(ggfit_gguf_value(g, 0, &v));
    assert_int_equal(v.u, 7);
    assert_false(ggfit_gguf_value(g, 1, &v));
    assert_null(ggfit_gguf_key(g, 1));
    assert_null(ggfit_gguf_tensor(g, 0));
    assert_null(ggfit_gguf_shard_path(g, 1));
    assert_int_equal(ggfit_gguf_data_offset(g, 1), 0);
    ggfit_gguf_close(g);
    gw_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_large_string_array),
        cmocka_unit_test(test_strings_side_by_side),
        cmocka_unit_test(test_strings_streamed),
        cmocka_unit_test(test_split_model),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_shipped_layouts),
        cmocka_unit_test(test_api_errors),
        cmocka_unit_test(test_accessors_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
