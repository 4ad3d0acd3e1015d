/*
 * gguf.c - the GGUF header reader.
 *
 * Every byte comes through one bounds-checked reader (struct reader). Each
 * count and length the file declares is checked against the bytes left in
 * the file before anything is allocated or read, so a hostile header cannot
 * make the reader allocate more than the file's own size justifies, loop
 * past its end or overflow a size. Values stay in the header buffer and are
 * decoded on demand (a tokenizer's 150,000 strings are never copied).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/base.h"
#include "gguf/gguf.h"

#define GGUF_MAGIC "GGUF"
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_NAME 64          /* ggml's GGML_MAX_NAME, NUL included */
#define GGUF_MAX_DIMS 4
#define GGUF_MAX_DEPTH 8          /* nesting of arrays of arrays */
#define GGUF_MAX_KEY 65535        /* longest key accepted, in bytes */
#define GGUF_READ_CHUNK ((size_t)1 << 20)

/* Smallest encodings, used to bound declared counts by the bytes left. */
#define MIN_KV_BYTES 14           /* key length, 1-byte key, type, 1-byte value */
#define MIN_TENSOR_BYTES 24       /* name length, n_dims, type, offset */

static const uint32_t value_size[GGFIT_GGUF_TYPE_COUNT] = {
    [GGFIT_GGUF_UINT8] = 1, [GGFIT_GGUF_INT8] = 1,
    [GGFIT_GGUF_UINT16] = 2, [GGFIT_GGUF_INT16] = 2,
    [GGFIT_GGUF_UINT32] = 4, [GGFIT_GGUF_INT32] = 4,
    [GGFIT_GGUF_FLOAT32] = 4, [GGFIT_GGUF_BOOL] = 1,
    [GGFIT_GGUF_STRING] = 0, [GGFIT_GGUF_ARRAY] = 0,
    [GGFIT_GGUF_UINT64] = 8, [GGFIT_GGUF_INT64] = 8,
    [GGFIT_GGUF_FLOAT64] = 8,
};

static const char *const value_type_names[GGFIT_GGUF_TYPE_COUNT] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool", "string", "array", "uint64", "int64", "float64",
};
_Static_assert(sizeof value_type_names / sizeof value_type_names[0] ==
               GGFIT_GGUF_TYPE_COUNT, "one name per GGUF value type");

const char *ggfit_gguf_type_name(uint32_t type)
{
    return type < GGFIT_GGUF_TYPE_COUNT ? value_type_names[type] : NULL;
}

/* ---- little-endian decoding ---------------------------------------------- */

/* On a little-endian machine a load (the tokenizer's 650,000 string
 * lengths are read here); elsewhere assembled from bytes. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint16_t le16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint32_t le32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint64_t le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#else
static inline uint16_t le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}
#endif

/* ---- data structures ------------------------------------------------------ */

typedef struct kv {
    char *key;           /* NUL-terminated copy (in the file's name blocks) */
    uint32_t type;
    size_t val;          /* offset of the encoded value in the shard buffer */
} kv;

typedef struct shard {
    char *path;
    unsigned char *buf;  /* the header bytes (and maybe some data after) */
    size_t len;
    bool mapped;         /* buf is the file mapped (len bytes), not malloc'd */
    uint64_t file_size;
    uint64_t data_offset;
    size_t kv_end;       /* where the key/values end, the tensor infos start */
    uint32_t version;
    uint32_t alignment;
    kv *kvs;
    uint64_t n_kv;
    uint64_t n_tensors;
    uint64_t first_tensor;  /* index of its first tensor in ggfit_gguf */
} shard;

/* The keys' and tensor names' copies, NUL-terminated, packed in blocks
 * freed together with the file: one malloc and one free per name was a
 * third of reading a header of 700 tensors. */
typedef struct name_block {
    struct name_block *next;
    size_t used, cap;
    char bytes[];
} name_block;

#define NAME_BLOCK_BYTES ((size_t)16 << 10)

/* Open-addressing hash set of indices, keyed by a string the caller owns. */
typedef struct index_set {
    int64_t *slot;       /* -1 empty */
    uint64_t mask;
} index_set;

struct ggfit_gguf {
    shard *shards;
    uint32_t n_shards;
    ggfit_tensor_info *tensors;
    uint64_t n_tensors;
    uint64_t tensor_bytes;
    index_set key_index;     /* over shards[0].kvs */
    index_set tensor_index;  /* over tensors */
    name_block *names;       /* every shard's keys and tensor names */
    const ggfit__gguf_source *src; /* while opening from a source, else NULL */
};

/* A NUL-terminated copy of the n bytes at p, kept until the file closes;
 * NULL when out of memory. */
static char *copy_name(ggfit_gguf *g, const unsigned char *p, size_t n)
{
    name_block *b = g->names;
    if (!b || b->cap - b->used < n + 1) {
        size_t cap = n + 1 > NAME_BLOCK_BYTES ? n + 1 : NAME_BLOCK_BYTES;
        if (!(b = ggfit__malloc(sizeof *b + cap)))
            return NULL;
        b->next = g->names;
        b->used = 0;
        b->cap = cap;
        g->names = b;
    }
    char *d = b->bytes + b->used;
    memcpy(d, p, n);
    d[n] = '\0';
    b->used += n + 1;
    return d;
}


static bool index_init(index_set *ix, uint64_t n)
{
    uint64_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    ix->slot = ggfit__malloc(cap * sizeof *ix->slot);
    if (!ix->slot)
        return false;
    memset(ix->slot, 0xff, cap * sizeof *ix->slot);
    ix->mask = cap - 1;
    return true;
}

/* Slot of s: the slot holding it, or the empty slot where it belongs. */
static uint64_t index_slot(const index_set *ix, const char *s,
                           const char *(*name)(const void *, int64_t),
                           const void *ctx)
{
    uint64_t h = ggfit__hash(s, strlen(s)) & ix->mask;
    while (ix->slot[h] >= 0 && strcmp(name(ctx, ix->slot[h]), s) != 0)
        h = (h + 1) & ix->mask;
    return h;
}

/* Index stored for s, or -1. */
static int64_t index_find(const index_set *ix, const char *s,
                          const char *(*name)(const void *, int64_t),
                          const void *ctx)
{
    return ix->slot ? ix->slot[index_slot(ix, s, name, ctx)] : -1;
}

/* Stores i for s unless s is there already; returns the index already
 * stored, or -1 when i was stored. */
static int64_t index_insert(index_set *ix, const char *s, int64_t i,
                            const char *(*name)(const void *, int64_t),
                            const void *ctx)
{
    uint64_t h = index_slot(ix, s, name, ctx);
    if (ix->slot[h] >= 0)
        return ix->slot[h];
    ix->slot[h] = i;
    return -1;
}

static const char *kv_name(const void *ctx, int64_t i)
{
    return ((const shard *)ctx)->kvs[i].key;
}

static const char *tensor_name(const void *ctx, int64_t i)
{
    return ((const ggfit_gguf *)ctx)->tensors[i].name;
}

/* ---- the bounded reader --------------------------------------------------- */

typedef struct reader {
    FILE *f;             /* NULL when reading from memory or a source */
    const ggfit__gguf_source *src; /* bytes asked of a source (remote/) */
    const char *name;    /* for messages */
    uint64_t size;       /* bytes in the file */
    unsigned char *buf;
    size_t len, cap;     /* bytes read into buf, bytes allocated */
    size_t pos;          /* parse position */
    uint64_t expect;     /* bytes past pos the parser expects to need (an
                            array's estimate), so that a source is asked for
                            them in one request; 0: unknown */
    bool has_fd;         /* buf is the file fd mapped: big string arrays are
                            read with pread (stream_strings) */
    int fd;
    char **err;
} reader;

/* The one place format errors are reported: adds the file and offset. */
static ggfit_status rfail(reader *r, ggfit_status status, uint64_t at, const char *fmt, ...)
    GGFIT_PRINTF(4, 5);

static ggfit_status rfail(reader *r, ggfit_status status, uint64_t at, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ggfit__fail(r->err, status, "%s: %s (at offset %llu)", r->name,
                       what, (unsigned long long)at);
}

static uint64_t left(const reader *r)
{
    return r->size - r->pos;
}

/* need() when the bytes are not all held yet, or are past the limit. */
static ggfit_status need_more(reader *r, uint64_t n, const char *what)
{
    if (n > left(r))
        return rfail(r, GGFIT_EFORMAT, r->pos,
                     "%s needs %llu bytes but the file ends %llu bytes later",
                     what, (unsigned long long)n,
                     (unsigned long long)left(r));
    uint64_t end = r->pos + n;
    if (end > GGFIT_MAX_HEADER_BYTES)
        return rfail(r, GGFIT_ELIMIT, r->pos,
                     "%s would take the header past ggfit's limit of %llu MiB",
                     what, (unsigned long long)(GGFIT_MAX_HEADER_BYTES >> 20));
    if (end <= r->len)
        return GGFIT_OK;
    /* Grow geometrically, never past the file or the header limit. */
    uint64_t want = end;
    uint64_t grow = r->cap * 2 > GGUF_READ_CHUNK ? r->cap * 2 : GGUF_READ_CHUNK;
    if (want < grow)
        want = grow;
    if (want > r->size)
        want = r->size;
    if (want > GGFIT_MAX_HEADER_BYTES)
        want = GGFIT_MAX_HEADER_BYTES;
    if (r->src) {
        /* A source (a remote file): each read is a request. It asks for
         * what the parser expects to need (and a sixteenth and a KiB more,
         * so that an estimate a little short costs no extra request), else
         * for the source's chunk: a header then costs its size plus about
         * one chunk, where growing by a fraction of what is held would
         * overshoot a 13 MB tokenizer by megabytes. */
        uint64_t expect = r->expect + r->expect / 16 + 1024;
        want = r->expect ? r->pos + expect : r->len + r->src->chunk;
        if (want < end)
            want = end;
        if (want > r->size)
            want = r->size;
        if (want > GGFIT_MAX_HEADER_BYTES)
            want = GGFIT_MAX_HEADER_BYTES;
    }
    if (want > r->cap) {
        unsigned char *p = ggfit__realloc(r->buf, (size_t)want);
        if (!p)
            return ggfit__fail(r->err, GGFIT_ENOMEM,
                               "%s: out of memory reading the header", r->name);
        r->buf = p;
        r->cap = (size_t)want;
    }
    size_t got = 0;
    if (r->src) {
        int rc = r->src->read(r->src->ctx, r->len, r->buf + r->len, (size_t)(end - r->len),
                              (size_t)want - r->len, &got, r->err);
        if (rc)
            return rc;
        r->len += got;
        if (r->len < end)
            return ggfit__fail(r->err, GGFIT_EIO, "%s: the server sent %llu bytes, the "
                               "header needs %llu", r->name, (unsigned long long)r->len,
                               (unsigned long long)end);
        return GGFIT_OK;
    }
    got = fread(r->buf + r->len, 1, (size_t)want - r->len, r->f);
    r->len += got;
    if (r->len < end)
        return ggfit__fail(r->err, GGFIT_EIO, "%s: read failed at offset %llu: %s",
                           r->name, (unsigned long long)r->len,
                           ferror(r->f) ? strerror(errno) : "file shrank");
    return GGFIT_OK;
}

/* Makes n bytes at the parse position available in buf, or fails naming
 * what was being read. Bytes already held inside the header limit are
 * the common case (a mapped file holds them all), taken without a call:
 * the buffer never holds more than the file, so nothing else can fail. */
static inline ggfit_status need(reader *r, uint64_t n, const char *what)
{
    if (r->pos <= r->len && n <= r->len - r->pos && r->pos + n <= GGFIT_MAX_HEADER_BYTES)
        return GGFIT_OK;
    return need_more(r, n, what);
}

static inline ggfit_status rd_u32(reader *r, uint32_t *v, const char *what)
{
    int rc = need(r, 4, what);
    if (rc)
        return rc;
    *v = le32(r->buf + r->pos);
    r->pos += 4;
    return GGFIT_OK;
}

static inline ggfit_status rd_u64(reader *r, uint64_t *v, const char *what)
{
    int rc = need(r, 8, what);
    if (rc)
        return rc;
    *v = le64(r->buf + r->pos);
    r->pos += 8;
    return GGFIT_OK;
}

/* Reads a string's length and makes its bytes available; *s is the offset
 * of the bytes in buf. */
static ggfit_status rd_str(reader *r, size_t *s, uint64_t *n, const char *what)
{
    uint64_t at = r->pos;
    int rc = rd_u64(r, n, what);
    if (rc)
        return rc;
    if (*n > left(r))
        return rfail(r, GGFIT_EFORMAT, at,
                     "%s of %llu bytes is longer than the %llu bytes left in the file",
                     what, (unsigned long long)*n, (unsigned long long)left(r));
    if ((rc = need(r, *n, what)))
        return rc;
    *s = r->pos;
    r->pos += (size_t)*n;
    return GGFIT_OK;
}

/* ---- values ------------------------------------------------------------- */

static ggfit_status check_value_type(reader *r, uint32_t type, uint64_t at,
                                     const char *key, const char *what)
{
    if (type >= GGFIT_GGUF_TYPE_COUNT)
        return rfail(r, GGFIT_EFORMAT, at, "key '%s' has unknown %s %u", key, what, type);
    return GGFIT_OK;
}

/* ---- string arrays ------------------------------------------------------ */

/* Walking a string array is a chain: each length says where the next one
 * is, so one walker waits on every load in turn (a tokenizer's 650,000
 * strings took over a millisecond). Several walkers, started at guessed
 * boundaries further on, run side by side; a guess counts only when the
 * walker before it lands on it exactly, which only a true boundary can be,
 * so the result is the single walker's, string for string. */

/* The fuzzer's inputs are at most 64 KiB: there the walkers start on
 * arrays that small, and each walk is checked against one walker's. */
#ifdef GGFIT_FUZZ
enum { LANE_MIN = 32, LANE_FIRST = 8, BLOCK = 2, BLOCK_LEN = 16 };
#else
enum { LANE_MIN = 1 << 14,  /* strings below which one walker is as quick */
       LANE_FIRST = 256,    /* strings walked first, for their mean length */
       BLOCK = 16,          /* steps taken with one test of the stops */
       BLOCK_LEN = 255 };   /* the longest string such a block takes */
#endif
enum { LANES = 4,           /* walkers side by side */
       SYNC_HOPS = 16,      /* plausible lengths in a row for a guess */
       SYNC_SCAN = 4096,    /* bytes searched for a guess */
       SYNC_LEN = 1024 };   /* a plausible string length */

/* Why a walk stopped. */
enum { AT_MARK, AT_COUNT, AT_EDGE };

/* One walker from *pos over the strings held in buf[0, held): stops when
 * *pos reaches mark, when *cnt reaches n, or at a string that does not end
 * within held (AT_EDGE: where the single walk stops too). */
static int walk1(const unsigned char *buf, size_t held, size_t *pos, uint64_t *cnt, uint64_t n,
                 size_t mark)
{
    size_t p = *pos;
    uint64_t c = *cnt;
    int why = AT_COUNT;
    for (; c < n; c++) {
        if (p >= mark) {
            why = AT_MARK;
            break;
        }
        if (held - p < 8 || le64(buf + p) > held - p - 8) {
            why = AT_EDGE;
            break;
        }
        p += 8 + (size_t)le64(buf + p);
    }
    *pos = p;
    *cnt = c;
    return why;
}

/* A position at or after q that looks like the start of a string (short
 * lengths SYNC_HOPS times in a row), or SIZE_MAX. Only a guess. */
static size_t sync_guess(const unsigned char *buf, size_t held, size_t q)
{
    for (size_t end = q + SYNC_SCAN; q < end && q < held; q++) {
        size_t p = q;
        int h = 0;
        for (; h < SYNC_HOPS && held - p >= 8; h++) {
            uint64_t len = le64(buf + p);
            if (len > SYNC_LEN || len > held - p - 8)
                break;
            p += 8 + (size_t)len;
        }
        if (h == SYNC_HOPS)
            return q;
    }
    return SIZE_MAX;
}

/* One round of walkers side by side from (*pos, *cnt), which it moves on
 * to a true boundary: AT_COUNT or AT_EDGE when the walk is over (as
 * walk1's), AT_MARK when another round should go on from there. */
static int walk_round(const unsigned char *buf, size_t held, size_t *pos, uint64_t *cnt,
                      uint64_t n)
{
    /* The first strings' mean length places the other walkers' starts at
     * about equal shares of the bytes left. */
    size_t start = *pos;
    int why = walk1(buf, held, pos, cnt, *cnt + LANE_FIRST, SIZE_MAX);
    if (why != AT_COUNT || *cnt == n)
        return why;
    uint64_t m = n - *cnt;
    double span = (double)(*pos - start) / LANE_FIRST * (double)m;
    if (span > (double)(held - *pos))
        span = (double)(held - *pos);
    size_t s[LANES], p[LANES], stop[LANES];
    uint64_t c[LANES] = { 0 };
    bool run[LANES], edge[LANES] = { false };
    s[0] = *pos;
    for (int j = 1, last = 0; j < LANES; j++) {
        s[j] = sync_guess(buf, held, *pos + (size_t)(span * j / LANES));
        if (s[j] != SIZE_MAX && s[j] > s[last])
            last = j;
        else
            s[j] = SIZE_MAX;
    }
    /* stop[j]: the next walker's start (SIZE_MAX: none) */
    stop[LANES - 1] = SIZE_MAX;
    for (int j = LANES - 2; j >= 0; j--)
        stop[j] = s[j + 1] != SIZE_MAX ? s[j + 1] : stop[j + 1];
    for (int j = 0; j < LANES; j++) {
        p[j] = s[j];
        run[j] = s[j] != SIZE_MAX;
    }

    /* Side by side, first in registers while no walker is near a stop:
     * none at its next start or within 8 bytes of the edge, no string past
     * the edge, and the counts (equal here) short of the chain's. */
    _Static_assert(LANES == 4, "the walkers in registers are four");
    if (run[1] && run[2] && run[3] && held >= 8) {
        size_t p0 = p[0], p1 = p[1], p2 = p[2], p3 = p[3], lim = held - 7;
        size_t e0 = stop[0] < lim ? stop[0] : lim, e1 = stop[1] < lim ? stop[1] : lim,
               e2 = stop[2] < lim ? stop[2] : lim;
        uint64_t k = 0, k_max = m / LANES;
        /* In blocks while every walker is far from its stop: BLOCK strings
         * of at most BLOCK_LEN bytes each cannot reach it (nor the edge),
         * so one test of the lengths per step is all the tests below make.
         * A longer string ends the block where it is, and is taken by a
         * step with every test. */
        const size_t reach = BLOCK * (8 + (size_t)BLOCK_LEN);
        for (;;) {
            if (k_max - k >= BLOCK && p0 < e0 && p1 < e1 && p2 < e2 && p3 < lim &&
                e0 - p0 > reach && e1 - p1 > reach && e2 - p2 > reach && lim - p3 > reach) {
                int b = 0;
                for (; b < BLOCK; b++) {
                    uint64_t l0 = le64(buf + p0), l1 = le64(buf + p1), l2 = le64(buf + p2),
                             l3 = le64(buf + p3);
                    if ((l0 | l1 | l2 | l3) > BLOCK_LEN)
                        break;
                    p0 += 8 + (size_t)l0;
                    p1 += 8 + (size_t)l1;
                    p2 += 8 + (size_t)l2;
                    p3 += 8 + (size_t)l3;
                }
                k += (uint64_t)b;
                if (b == BLOCK)
                    continue;
            }
            if (k >= k_max || p0 >= e0 || p1 >= e1 || p2 >= e2 || p3 >= lim)
                break;
            uint64_t l0 = le64(buf + p0), l1 = le64(buf + p1), l2 = le64(buf + p2),
                     l3 = le64(buf + p3);
            if (l0 > held - 8 - p0 || l1 > held - 8 - p1 || l2 > held - 8 - p2 ||
                l3 > held - 8 - p3)
                break;
            p0 += 8 + (size_t)l0;
            p1 += 8 + (size_t)l1;
            p2 += 8 + (size_t)l2;
            p3 += 8 + (size_t)l3;
            k++;
        }
        p[0] = p0, p[1] = p1, p[2] = p2, p[3] = p3;
        for (int j = 0; j < LANES; j++)
            c[j] = k;
    }
    /* Then a step at a time: walker j stops at the next start, at the most
     * strings the chain could have left for it, or at the edge; the last
     * one also when all others have stopped (the next round goes on). */
    for (bool any = true; any;) {
        any = false;
        uint64_t before = 0;
        for (int j = 0; j < LANES; before += c[j], j++) {
            if (!run[j])
                continue;
            if (j == LANES - 1 && !any) {
                run[j] = false;
                break;
            }
            size_t q = p[j];
            bool capped = before >= m || c[j] >= m - before;
            if (q >= stop[j] || capped || held - q < 8 || le64(buf + q) > held - q - 8) {
                run[j] = false;
                edge[j] = q < stop[j] && !capped;
                continue;
            }
            p[j] = q + 8 + (size_t)le64(buf + q);
            c[j]++;
            any = true;
        }
    }

    /* Joined in order: the chain takes walker j's walk only when it stands
     * exactly on its start; between starts it walks alone. */
    size_t at = *pos;
    uint64_t done = *cnt;
    why = AT_MARK;
    for (int j = 0; j < LANES && why == AT_MARK; j++) {
        if (j > 0 && at != s[j]) {
            if (stop[j] != SIZE_MAX)
                why = walk1(buf, held, &at, &done, n, stop[j]);
            else
                break;   /* the next round goes on from here */
            continue;
        }
        if (c[j] > n - done) {
            /* more than the chain had left (the earlier counts it was
             * capped by were a wrong guess's): walk it again */
            why = walk1(buf, held, &at, &done, n, SIZE_MAX);
            break;
        }
        at = p[j];
        done += c[j];
        if (edge[j])
            why = AT_EDGE;
        else if (done == n)
            why = AT_COUNT;
        else if (at < stop[j] && stop[j] != SIZE_MAX)
            /* stopped at its cap short of the next start: on alone */
            why = walk1(buf, held, &at, &done, n, stop[j]);
    }
    *pos = at;
    *cnt = done;
    return why;
}

/* Walks up to n strings from *pos held in buf[0, held): *pos and *cnt end
 * where one walker's would (walk1 with no mark). */
static void walk_strings(const unsigned char *buf, size_t held, size_t *pos, uint64_t *cnt,
                         uint64_t n)
{
#ifdef GGFIT_FUZZ
    size_t pos1 = *pos;
    uint64_t cnt1 = *cnt;
    walk1(buf, held, &pos1, &cnt1, n, SIZE_MAX);
#endif
    while (n - *cnt >= LANE_MIN)
        if (walk_round(buf, held, pos, cnt, n) != AT_MARK)
            goto done;
    walk1(buf, held, pos, cnt, n, SIZE_MAX);
done:
#ifdef GGFIT_FUZZ
    if (*pos != pos1 || *cnt != cnt1)
        abort();   /* the walkers disagree with one walker */
#endif
    return;
}

/* A mapped file's big string arrays (a tokenizer's tokens and merges, 13 MB
 * in all) are walked in a small buffer filled with pread, not in the
 * mapping. Where the page cache holds the file in small pages (a file read
 * back from disk, which is how a model's file usually is) each 64 KiB of
 * the mapping walked costs a page fault and the walk a TLB miss per page:
 * 4 to 5 ms for the 13 MB on the reference VM, against 1.5 ms through the
 * buffer, which stays in the L2 cache. The mapping still holds every value
 * for whoever reads one later (ggfit_value_next). */
#ifdef GGFIT_FUZZ
enum { STREAM_MIN = 2, STREAM_BUF = 64 };   /* inputs of at most 64 KiB */
#else
enum { STREAM_MIN = 1 << 14,      /* strings below which the mapping is walked */
       STREAM_BUF = 256 << 10 };  /* bytes read at a time */
#endif

/* Walks the strings of a big array from r->pos through the buffer, as far
 * as it can: *done strings, r->pos after them. It stops short (the walk in
 * the mapping goes on from there and gives the message) at anything but a
 * string wholly inside the mapping: the mapping's end, a read that fails
 * or comes short. A string longer than the buffer is stepped over. */
static void stream_strings(reader *r, uint64_t n, uint64_t *done)
{
    unsigned char *buf = ggfit__malloc(STREAM_BUF);
    uint64_t i = 0;
    size_t off = r->pos;   /* the file offset of buf[0] */
    while (buf && i < n) {
        size_t want = r->len - off < STREAM_BUF ? r->len - off : STREAM_BUF;
        ssize_t got = want ? pread(r->fd, buf, want, (off_t)off) : 0;
        if (got <= 0)
            break;
        size_t p = 0;
        walk_strings(buf, (size_t)got, &p, &i, n);
        if (i < n && (size_t)got - p >= 8 && le64(buf + p) > STREAM_BUF - 8 &&
            le64(buf + p) <= r->len - off - p - 8) {
            off += p + 8 + (size_t)le64(buf + p);
            i++;
            continue;
        }
        off += p;
        if (i < n && ((size_t)got < STREAM_BUF || p == 0))
            break;
    }
    free(buf);
    r->pos = off;
    *done = i;
}

/* Walks over n strings, a tokenizer's hundreds of thousands of them: in
 * the bytes already held each length is read in place; a string that
 * crosses their end goes through rd_str, which asks for more (or fails with
 * its message). */
static ggfit_status skip_strings(reader *r, uint64_t n)
{
    size_t start = r->pos;
    uint64_t i = 0;
    if (r->has_fd && n >= STREAM_MIN)
        stream_strings(r, n, &i);
    for (; i < n; i++) {
        size_t pos = r->pos;
        walk_strings(r->buf, r->len, &pos, &i, n);
        r->pos = pos;
        if (i == n)
            break;
        /* At the edge: the rest of the array is expected to be as long,
         * per string, as what was walked of it. */
        size_t at;
        uint64_t len;
        if (i > 0)
            r->expect = (uint64_t)((double)(r->pos - start) / (double)i * (double)(n - i));
        int rc = rd_str(r, &at, &len, "string value");
        r->expect = 0;
        if (rc)
            return rc;
    }
    return GGFIT_OK;
}

/* Walks over one value of the given type, checking it. */
static ggfit_status skip_value(reader *r, uint32_t type, int depth, const char *key)
{
    int rc;
    if (type == GGFIT_GGUF_STRING) {
        size_t s;
        uint64_t n;
        return rd_str(r, &s, &n, "string value");
    }
    if (type != GGFIT_GGUF_ARRAY) {
        if ((rc = need(r, value_size[type], "value")))
            return rc;
        r->pos += value_size[type];
        return GGFIT_OK;
    }
    uint64_t at = r->pos;
    uint32_t et;
    uint64_t n;
    if ((rc = rd_u32(r, &et, "array element type")) ||
        (rc = check_value_type(r, et, at, key, "array element type")) ||
        (rc = rd_u64(r, &n, "array length")))
        return rc;
    if (depth >= GGUF_MAX_DEPTH)
        return rfail(r, GGFIT_ELIMIT, at,
                     "key '%s' nests arrays deeper than %d levels", key,
                     GGUF_MAX_DEPTH);
    uint64_t min = et == GGFIT_GGUF_STRING ? 8 : et == GGFIT_GGUF_ARRAY ? 12
                                                : value_size[et];
    if (n > left(r) / min)
        return rfail(r, GGFIT_EFORMAT, at,
                     "key '%s' declares an array of %llu %s elements, more than "
                     "the %llu bytes left in the file can hold",
                     key, (unsigned long long)n, ggfit_gguf_type_name(et),
                     (unsigned long long)left(r));
    if (value_size[et]) {
        if ((rc = need(r, n * min, "array elements")))
            return rc;
        r->pos += (size_t)(n * min);
        return GGFIT_OK;
    }
    if (et == GGFIT_GGUF_STRING)
        return skip_strings(r, n);
    for (uint64_t i = 0; i < n; i++)
        if ((rc = skip_value(r, et, depth + 1, key)))
            return rc;
    return GGFIT_OK;
}

/* Size of an already validated encoded value. */
static size_t encoded_size(uint32_t type, const unsigned char *p)
{
    if (type == GGFIT_GGUF_STRING)
        return 8 + (size_t)le64(p);
    if (type != GGFIT_GGUF_ARRAY)
        return value_size[type];
    uint32_t et = le32(p);
    uint64_t n = le64(p + 4);
    if (value_size[et])
        return 12 + (size_t)(n * value_size[et]);
    size_t off = 12;
    for (uint64_t i = 0; i < n; i++)
        off += encoded_size(et, p + off);
    return off;
}

static void decode_value(uint32_t type, const unsigned char *p, ggfit_value *v)
{
    memset(v, 0, sizeof *v);
    v->type = type;
    switch (type) {
    case GGFIT_GGUF_UINT8:  v->u = p[0]; v->i = (int64_t)v->u; v->f = (double)v->u; break;
    case GGFIT_GGUF_BOOL:   v->u = p[0] != 0; v->i = (int64_t)v->u; break;
    case GGFIT_GGUF_INT8:   v->i = (int8_t)p[0]; break;
    case GGFIT_GGUF_UINT16: v->u = le16(p); v->i = (int64_t)v->u; v->f = (double)v->u; break;
    case GGFIT_GGUF_INT16:  v->i = (int16_t)le16(p); break;
    case GGFIT_GGUF_UINT32: v->u = le32(p); v->i = (int64_t)v->u; v->f = (double)v->u; break;
    case GGFIT_GGUF_INT32:  v->i = (int32_t)le32(p); break;
    case GGFIT_GGUF_UINT64: v->u = le64(p); v->i = (int64_t)v->u; v->f = (double)v->u; break;
    case GGFIT_GGUF_INT64:  v->i = (int64_t)le64(p); break;
    case GGFIT_GGUF_FLOAT32: {
        uint32_t b = le32(p);
        float f;
        memcpy(&f, &b, sizeof f);
        v->f = f;
        break;
    }
    case GGFIT_GGUF_FLOAT64: {
        uint64_t b = le64(p);
        memcpy(&v->f, &b, sizeof v->f);
        break;
    }
    case GGFIT_GGUF_STRING:
        v->n = le64(p);
        v->str = (const char *)p + 8;
        break;
    case GGFIT_GGUF_ARRAY:
        v->elem_type = le32(p);
        v->n = le64(p + 4);
        v->raw_ = p + 12;
        break;
    }
    /* Signed types also give their value as unsigned when not negative. */
    if ((type == GGFIT_GGUF_INT8 || type == GGFIT_GGUF_INT16 ||
         type == GGFIT_GGUF_INT32 || type == GGFIT_GGUF_INT64)) {
        v->f = (double)v->i;
        if (v->i >= 0)
            v->u = (uint64_t)v->i;
    }
}

bool ggfit_value_next(const ggfit_value *arr, ggfit_value_iter *it,
                      ggfit_value *out)
{
    if (arr->type != GGFIT_GGUF_ARRAY || it->index >= arr->n)
        return false;
    if (!it->pos_)
        it->pos_ = arr->raw_;
    decode_value(arr->elem_type, it->pos_, out);
    it->pos_ += encoded_size(arr->elem_type, it->pos_);
    it->index++;
    return true;
}

/* ---- one shard ------------------------------------------------------------ */

static void shard_free(shard *s)
{
    if (!s)
        return;
    free(s->kvs);   /* the keys are in the file's name blocks */
    if (s->mapped)
        munmap(s->buf, s->len);
    else
        free(s->buf);
    free(s->path);
}

static bool has_nul(const unsigned char *p, uint64_t n)
{
    return memchr(p, 0, (size_t)n) != NULL;
}

static ggfit_status parse_kvs(reader *r, ggfit_gguf *g, shard *s, uint64_t n_kv)
{
    int rc;
    index_set ix = {0};
    s->kvs = ggfit__calloc((size_t)n_kv, sizeof *s->kvs);
    if (!s->kvs || !index_init(&ix, n_kv)) {
        rc = ggfit__fail(r->err, GGFIT_ENOMEM, "%s: out of memory", r->name);
        goto out;
    }
    for (uint64_t i = 0; i < n_kv; i++) {
        uint64_t at = r->pos, n;
        size_t k;
        if ((rc = rd_str(r, &k, &n, "key")))
            goto out;
        if (n == 0 || n > GGUF_MAX_KEY || has_nul(r->buf + k, n)) {
            rc = rfail(r, GGFIT_EFORMAT, at,
                       "key %llu is empty, longer than %d bytes or holds a NUL byte",
                       (unsigned long long)i, GGUF_MAX_KEY);
            goto out;
        }
        kv *e = &s->kvs[i];
        if (!(e->key = copy_name(g, r->buf + k, (size_t)n))) {
            rc = ggfit__fail(r->err, GGFIT_ENOMEM, "%s: out of memory", r->name);
            goto out;
        }
        s->n_kv = i + 1;
        if (index_insert(&ix, e->key, (int64_t)i, kv_name, s) >= 0) {
            rc = rfail(r, GGFIT_EFORMAT, at, "duplicate key '%s'", e->key);
            goto out;
        }
        uint64_t tat = r->pos;
        if ((rc = rd_u32(r, &e->type, "value type")) ||
            (rc = check_value_type(r, e->type, tat, e->key, "value type")))
            goto out;
        e->val = r->pos;
        if ((rc = skip_value(r, e->type, 0, e->key)))
            goto out;
    }
    rc = GGFIT_OK;
out:
    free(ix.slot);
    return rc;
}

static const kv *shard_find(const shard *s, const char *key)
{
    for (uint64_t i = 0; i < s->n_kv; i++)
        if (strcmp(s->kvs[i].key, key) == 0)
            return &s->kvs[i];
    return NULL;
}

static bool is_integer(uint32_t t)
{
    return t <= GGFIT_GGUF_INT32 ? t != GGFIT_GGUF_FLOAT32 && t != GGFIT_GGUF_BOOL
                                 : t == GGFIT_GGUF_UINT64 || t == GGFIT_GGUF_INT64;
}

/* Reads an integer key of a shard; false when absent. Fails on a key of the
 * wrong type or a negative value. */
static ggfit_status shard_uint(reader *r, const shard *s, const char *key, bool *found,
                               uint64_t *v)
{
    const kv *e = shard_find(s, key);
    *found = e != NULL;
    if (!e)
        return GGFIT_OK;
    ggfit_value val;
    decode_value(e->type, s->buf + e->val, &val);
    if (!is_integer(e->type) || val.i < 0)
        return rfail(r, GGFIT_EFORMAT, e->val,
                     "key '%s' must be a non-negative integer, it is a %s", key,
                     ggfit_gguf_type_name(e->type));
    *v = val.u;
    return GGFIT_OK;
}

static ggfit_status parse_alignment(reader *r, shard *s)
{
    const kv *e = shard_find(s, "general.alignment");
    s->alignment = GGUF_DEFAULT_ALIGNMENT;
    if (!e)
        return GGFIT_OK;
    if (e->type != GGFIT_GGUF_UINT32)
        return rfail(r, GGFIT_EFORMAT, e->val,
                     "general.alignment must be a uint32, it is a %s",
                     ggfit_gguf_type_name(e->type));
    uint32_t a = le32(r->buf + e->val);   /* s->buf is set once parsing ends */
    if (a == 0 || (a & (a - 1)) != 0)
        return rfail(r, GGFIT_EFORMAT, e->val,
                     "general.alignment %u is not a power of two", a);
    s->alignment = a;
    return GGFIT_OK;
}

/* Parses the tensor infos of a shard into g->tensors[first..]. */
static ggfit_status parse_tensors(reader *r, ggfit_gguf *g, shard *s, uint64_t first)
{
    int rc;
    size_t start = r->pos;
    for (uint64_t i = 0; i < s->n_tensors; i++) {
        ggfit_tensor_info *t = &g->tensors[first + i];
        memset(t, 0, sizeof *t);   /* each as it is read: the rest are never seen */
        uint64_t at = r->pos, n;
        /* The infos still to come, at the size of those read (a source asks
         * for them in one request). */
        if (i > 0)
            r->expect = (r->pos - start) / i * (s->n_tensors - i);
        size_t name;
        if ((rc = rd_str(r, &name, &n, "tensor name")))
            return rc;
        if (n == 0 || n >= GGUF_MAX_NAME || has_nul(r->buf + name, n))
            return rfail(r, GGFIT_EFORMAT, at,
                         "tensor %llu has a name of %llu bytes; names must be 1 to "
                         "%d bytes without NUL",
                         (unsigned long long)i, (unsigned long long)n,
                         GGUF_MAX_NAME - 1);
        if (!(t->name = copy_name(g, r->buf + name, (size_t)n)))
            return ggfit__fail(r->err, GGFIT_ENOMEM, "%s: out of memory", r->name);
        g->n_tensors = first + i + 1;
        t->shard = (uint32_t)(s - g->shards);
        if (index_insert(&g->tensor_index, t->name, (int64_t)(first + i),
                         tensor_name, g) >= 0)
            return rfail(r, GGFIT_EFORMAT, at, "duplicate tensor name '%s'%s",
                         t->name, g->n_shards > 1 ? " (across shards)" : "");
        if ((rc = rd_u32(r, &t->n_dims, "tensor dimension count")))
            return rc;
        if (t->n_dims > GGUF_MAX_DIMS)
            return rfail(r, GGFIT_EFORMAT, r->pos - 4,
                         "tensor '%s' has %u dimensions, ggml allows %d",
                         t->name, t->n_dims, GGUF_MAX_DIMS);
        uint64_t n_elem = 1;
        for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) {
            uint64_t ne = 1;
            if (d < t->n_dims && (rc = rd_u64(r, &ne, "tensor dimension")))
                return rc;
            if (ne > (uint64_t)INT64_MAX)
                return rfail(r, GGFIT_EFORMAT, r->pos - 8,
                             "tensor '%s' has a negative dimension %u", t->name, d);
            if (ne != 0 && n_elem > (uint64_t)INT64_MAX / ne)
                return rfail(r, GGFIT_EFORMAT, r->pos - 8,
                             "tensor '%s' has more elements than fit in 63 bits",
                             t->name);
            n_elem *= ne;
            t->ne[d] = (int64_t)ne;
        }
        uint64_t tat = r->pos;
        if ((rc = rd_u32(r, &t->type, "tensor type")))
            return rc;
        if (t->type >= GGFIT_TYPE_COUNT || !ggfit_type_name(t->type))
            return rfail(r, GGFIT_EUNSUPPORTED, tat,
                         "tensor '%s' has unknown ggml type %u (newer than this ggfit, or not "
                         "from ggml)", t->name, t->type);
        if (!ggfit_type_valid(t->type))
            return rfail(r, GGFIT_EUNSUPPORTED, tat,
                         "tensor '%s' has type %u (%s), which ggml removed",
                         t->name, t->type, ggfit_type_name(t->type));
        uint32_t blck = ggfit_type_block_size(t->type);
        if ((uint64_t)t->ne[0] % blck != 0)
            return rfail(r, GGFIT_EFORMAT, tat,
                         "tensor '%s' has rows of %lld elements, not a multiple of "
                         "%s's block of %u",
                         t->name, (long long)t->ne[0], ggfit_type_name(t->type), blck);
        /* n_elem fits in 63 bits and bytes per element are at most 8. */
        uint64_t blocks = n_elem / blck, nb;
        if (__builtin_mul_overflow(blocks, (uint64_t)ggfit_type_block_bytes(t->type),
                                   &nb))
            return rfail(r, GGFIT_EFORMAT, tat, "tensor '%s' is too large", t->name);
        t->n_bytes = nb;
        if ((rc = rd_u64(r, &t->offset, "tensor data offset")))
            return rc;
    }
    r->expect = 0;
    return GGFIT_OK;
}

static int cmp_offset(const void *a, const void *b)
{
    const ggfit_tensor_info *x = *(const ggfit_tensor_info *const *)a;
    const ggfit_tensor_info *y = *(const ggfit_tensor_info *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Offsets must be aligned, and tensors must not overlap or wrap around. */
static ggfit_status check_layout(reader *r, ggfit_gguf *g, shard *s)
{
    ggfit_tensor_info *ts = g->tensors + s->first_tensor;
    uint64_t n = s->n_tensors;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t end;
        if (ts[i].offset % s->alignment != 0)
            return rfail(r, GGFIT_EFORMAT, s->data_offset,
                         "tensor '%s' has data offset %llu, not a multiple of the "
                         "alignment %u",
                         ts[i].name, (unsigned long long)ts[i].offset, s->alignment);
        if (__builtin_add_overflow(ts[i].offset, ts[i].n_bytes, &end) ||
            __builtin_add_overflow(end, s->data_offset, &end))
            return rfail(r, GGFIT_EFORMAT, s->data_offset,
                         "tensor '%s' ends past 2^64 bytes", ts[i].name);
    }
    if (n < 2)
        return GGFIT_OK;
    const ggfit_tensor_info **by = ggfit__malloc((size_t)n * sizeof *by);
    if (!by)
        return ggfit__fail(r->err, GGFIT_ENOMEM, "%s: out of memory", r->name);
    bool rising = true;   /* the usual file: its data in the infos' order */
    for (uint64_t i = 0; i < n; i++) {
        by[i] = &ts[i];
        rising &= i == 0 || ts[i - 1].offset < ts[i].offset;
    }
    /* Strictly rising offsets are their one sorted order already; equal
     * ones are left to qsort, whose order among them names the pair. */
    if (!rising)
        qsort(by, (size_t)n, sizeof *by, cmp_offset);
    int rc = GGFIT_OK;
    for (uint64_t i = 1; i < n; i++)
        if (by[i]->offset < by[i - 1]->offset + by[i - 1]->n_bytes) {
            rc = rfail(r, GGFIT_EFORMAT, s->data_offset,
                       "tensor '%s' (data %llu..%llu) overlaps tensor '%s' "
                       "(data from %llu)",
                       by[i - 1]->name, (unsigned long long)by[i - 1]->offset,
                       (unsigned long long)(by[i - 1]->offset + by[i - 1]->n_bytes),
                       by[i]->name, (unsigned long long)by[i]->offset);
            break;
        }
    free(by);
    return rc;
}

/* Reads the header of one shard: fixed fields, key/values, tensor infos.
 * The tensors are appended to g->tensors, which grows to fit. */
static ggfit_status read_shard(reader *r, ggfit_gguf *g, shard *s)
{
    int rc;
    uint32_t version;
    uint64_t n_tensors, n_kv;

    if (r->size < 4)
        return rfail(r, GGFIT_EFORMAT, 0, "not a GGUF file: %llu bytes, too short for the magic",
                     (unsigned long long)r->size);
    if ((rc = need(r, 4, "magic")))
        return rc;
    if (memcmp(r->buf, GGUF_MAGIC, 4) != 0) {
        char shown[20];
        int k = 0;
        for (int i = 0; i < 4; i++) {
            unsigned char c = r->buf[i];
            k += snprintf(shown + k, sizeof shown - (size_t)k,
                          c >= 32 && c < 127 ? "%c" : "\\x%02x", c);
        }
        return rfail(r, GGFIT_EFORMAT, 0, "not a GGUF file: magic is \"%s\", not \"GGUF\"",
                     shown);
    }
    r->pos = 4;
    if ((rc = rd_u32(r, &version, "version")))
        return rc;
    if (version == 0x02000000 || version == 0x03000000)
        return rfail(r, GGFIT_EUNSUPPORTED, 4,
                     "big-endian GGUF files are not supported");
    if (version == 1)
        return rfail(r, GGFIT_EUNSUPPORTED, 4,
                     "GGUF version 1 (32-bit counts) is not supported; "
                     "convert the model again");
    if (version != 2 && version != 3)
        return rfail(r, GGFIT_EUNSUPPORTED, 4, "unknown GGUF version %u", version);
    s->version = version;

    if ((rc = rd_u64(r, &n_tensors, "tensor count")) ||
        (rc = rd_u64(r, &n_kv, "key/value count")))
        return rc;
    if (n_kv > left(r) / MIN_KV_BYTES)
        return rfail(r, GGFIT_EFORMAT, 16,
                     "%llu key/value pairs cannot fit in the %llu bytes left",
                     (unsigned long long)n_kv, (unsigned long long)left(r));
    if (n_tensors > left(r) / MIN_TENSOR_BYTES)
        return rfail(r, GGFIT_EFORMAT, 8,
                     "%llu tensors cannot fit in the %llu bytes left",
                     (unsigned long long)n_tensors, (unsigned long long)left(r));
    if ((rc = parse_kvs(r, g, s, n_kv)) || (rc = parse_alignment(r, s)))
        return rc;
    s->kv_end = r->pos;

    /* Room for this shard's tensors and a bigger name index. */
    uint64_t first = g->n_tensors, total = first + n_tensors;
    ggfit_tensor_info *ts = ggfit__realloc(g->tensors, (size_t)(total ? total : 1) *
                                                           sizeof *ts);
    if (!ts)
        return ggfit__fail(r->err, GGFIT_ENOMEM, "%s: out of memory", r->name);
    g->tensors = ts;
    free(g->tensor_index.slot);
    g->tensor_index.slot = NULL;
    if (!index_init(&g->tensor_index, total))
        return ggfit__fail(r->err, GGFIT_ENOMEM, "%s: out of memory", r->name);
    for (uint64_t i = 0; i < first; i++)
        index_insert(&g->tensor_index, ts[i].name, (int64_t)i, tensor_name, g);
    s->first_tensor = first;
    s->n_tensors = n_tensors;

    if ((rc = parse_tensors(r, g, s, first)))
        return rc;
    s->data_offset = GGFIT_PAD((uint64_t)r->pos, s->alignment);
    return check_layout(r, g, s);
}

/* Reads a shard from an open stream or, when f is NULL, from mem. */
static ggfit_status load_shard(ggfit_gguf *g, shard *s, const char *path, FILE *f,
                               const void *mem, uint64_t size, char **err)
{
    reader r = { .f = f, .name = path, .size = size, .err = err };
    if (!(s->path = ggfit__strndup(path, strlen(path))))
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", path);
    if (!f) {
        if (!(r.buf = ggfit__malloc(size ? (size_t)size : 1)))
            return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", path);
        if (size)
            memcpy(r.buf, mem, (size_t)size);
        r.len = r.cap = (size_t)size;
    }
    int rc = read_shard(&r, g, s);
    s->buf = r.buf;
    s->len = r.len;
    s->file_size = size;
    return rc;
}

/* Reads a shard from its file's mapping, which the shard then owns. */
static ggfit_status map_shard(ggfit_gguf *g, shard *s, const char *path, int fd, void *map,
                              size_t len, uint64_t size, char **err)
{
    reader r = { .name = path, .size = size, .buf = map, .len = len, .cap = len,
                 .has_fd = true, .fd = fd, .err = err };
    s->buf = map;
    s->len = len;
    s->mapped = true;
    s->file_size = size;
    if (!(s->path = ggfit__strndup(path, strlen(path))))
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", path);
    return read_shard(&r, g, s);
}

static ggfit_status open_shard(ggfit_gguf *g, shard *s, const char *path, char **err)
{
    if (g->src) {
        /* A source's shard: its size, then its bytes as the reader needs them. */
        uint64_t size = 0;
        int rc = g->src->open(g->src->ctx, path, &size, err);
        if (rc)
            return rc;
        reader r = { .src = g->src, .name = path, .size = size, .err = err };
        if (!(s->path = ggfit__strndup(path, strlen(path))))
            return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", path);
        rc = read_shard(&r, g, s);
        s->buf = r.buf;
        s->len = r.len;
        s->file_size = size;
        return rc;
    }
    /* Opened without blocking, so that a FIFO or a device is refused rather
     * than waited on; a regular file is then read as usual. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return ggfit__fail(err, GGFIT_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int rc = errno && !S_ISDIR(st.st_mode) && fstat(fd, &st) != 0
                 ? ggfit__fail(err, GGFIT_EIO, "%s: cannot stat: %s", path, strerror(errno))
                 : ggfit__fail(err, GGFIT_EIO, "%s: %s", path,
                               S_ISDIR(st.st_mode) ? "not a regular file (a directory)"
                               : "not a regular file (a pipe, a device or a socket)");
        close(fd);
        return rc;
    }
    /* A local file is mapped: the parser walks the tokenizer's arrays in
     * the page cache instead of a copy of them (a real tokenizer is 13 MB
     * of header), and only what it walks is ever read. The mapping stops at
     * the header limit, past which need() refuses to go. */
    uint64_t map_len = (uint64_t)st.st_size < GGFIT_MAX_HEADER_BYTES
                       ? (uint64_t)st.st_size : GGFIT_MAX_HEADER_BYTES;
#ifdef __EMSCRIPTEN__
    /* WebAssembly's mmap copies the whole span in: read as asked instead */
    void *map = MAP_FAILED;
    (void)map_len;
#else
    void *map = map_len ? mmap(NULL, (size_t)map_len, PROT_READ, MAP_PRIVATE, fd, 0)
                        : MAP_FAILED;
#endif
    if (map != MAP_FAILED) {
        int rc = map_shard(g, s, path, fd, map, (size_t)map_len, (uint64_t)st.st_size, err);
        close(fd);
        return rc;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        int rc = ggfit__fail(err, GGFIT_EIO, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    int rc = load_shard(g, s, path, f, NULL, (uint64_t)st.st_size, err);
    fclose(f);
    return rc;
}

/* ---- split models ------------------------------------------------------- */

/* If path ends in "-NNNNN-of-MMMMM.gguf", the length of the prefix before
 * it and the two numbers; else false. */
static bool split_name(const char *path, size_t *prefix, unsigned *no,
                       unsigned *count)
{
    static const char tail[] = "-00000-of-00000.gguf";
    size_t n = strlen(path), t = sizeof tail - 1;
    if (n < t)
        return false;
    const char *p = path + n - t;
    for (size_t i = 0; i < t; i++) {
        bool digit = tail[i] == '0';
        if (digit ? (p[i] < '0' || p[i] > '9') : p[i] != tail[i])
            return false;
    }
    *prefix = n - t;
    *no = (unsigned)strtoul(p + 1, NULL, 10);
    *count = (unsigned)strtoul(p + 10, NULL, 10);
    return true;
}

static ggfit_status split_keys(const shard *s, char **err, uint64_t *no, uint64_t *count)
{
    reader r = { .name = s->path, .err = err };
    bool found_no, found_count;
    int rc = shard_uint(&r, s, "split.count", &found_count, count);
    if (rc || (rc = shard_uint(&r, s, "split.no", &found_no, no)))
        return rc;
    if (!found_count)
        *count = 1;
    if (!found_no)
        *no = 0;
    if (*count == 0 || *no >= *count)
        return ggfit__fail(err, GGFIT_EFORMAT, "%s: split.no %llu is not below split.count %llu",
                           s->path, (unsigned long long)*no, (unsigned long long)*count);
    return GGFIT_OK;
}

/* Opens every other shard of the split model whose shard `named` is read. */
static ggfit_status open_split(ggfit_gguf *g, uint64_t named, uint64_t count, char **err)
{
    const char *path = g->shards[0].path;
    size_t prefix;
    unsigned no, cnt;
    if (!split_name(path, &prefix, &no, &cnt) || no != named + 1 || cnt != count)
        return ggfit__fail(err, GGFIT_EFORMAT,
                           "%s: split.no %llu of split.count %llu, but the name does "
                           "not end in -%05llu-of-%05llu.gguf",
                           path, (unsigned long long)named, (unsigned long long)count,
                           (unsigned long long)named + 1, (unsigned long long)count);
    shard *ss = ggfit__realloc(g->shards, (size_t)count * sizeof *ss);
    if (!ss)
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", path);
    g->shards = ss;
    memset(ss + 1, 0, (size_t)(count - 1) * sizeof *ss);
    /* Shards are kept in split order: move the named one into place. */
    if (named != 0) {
        ss[named] = ss[0];
        memset(&ss[0], 0, sizeof ss[0]);
    }
    g->n_shards = (uint32_t)count;
    /* The named shard's tensors were read first; the others follow, so
     * tensors are renumbered into split order after reading. */
    size_t plen = prefix + sizeof "-00000-of-00000.gguf";
    char *p = ggfit__malloc(plen);
    if (!p)
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", path);
    int rc = GGFIT_OK;
    for (uint64_t i = 0; i < count && !rc; i++) {
        if (i == named)
            continue;
        snprintf(p, plen, "%.*s-%05llu-of-%05llu.gguf", (int)prefix,
                 ss[named].path, (unsigned long long)i + 1, (unsigned long long)count);
        if ((rc = open_shard(g, &ss[i], p, err))) {
            /* Say which model needed the shard. */
            char *inner = err ? *err : NULL;
            if (inner) {
                *err = NULL;
                ggfit__fail(err, rc, "%s: shard %llu of %llu: %s", ss[named].path,
                            (unsigned long long)i + 1, (unsigned long long)count, inner);
                free(inner);
            }
            break;
        }
        uint64_t sno, scount;
        if ((rc = split_keys(&ss[i], err, &sno, &scount)))
            break;
        if (sno != i || scount != count)
            rc = ggfit__fail(err, GGFIT_EFORMAT,
                             "%s: split.no %llu of split.count %llu, expected %llu of %llu",
                             p, (unsigned long long)sno, (unsigned long long)scount,
                             (unsigned long long)i, (unsigned long long)count);
    }
    free(p);
    return rc;
}

/* Puts tensors in split order (shard 0 first) and rebuilds the name index. */
static ggfit_status order_tensors(ggfit_gguf *g, char **err)
{
    ggfit_tensor_info *ts = ggfit__malloc((size_t)(g->n_tensors ? g->n_tensors : 1) *
                                          sizeof *ts);
    if (!ts)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    uint64_t k = 0;
    for (uint32_t s = 0; s < g->n_shards; s++) {
        shard *sh = &g->shards[s];
        memcpy(ts + k, g->tensors + sh->first_tensor, (size_t)sh->n_tensors * sizeof *ts);
        for (uint64_t i = 0; i < sh->n_tensors; i++)
            ts[k + i].shard = s;
        sh->first_tensor = k;
        k += sh->n_tensors;
    }
    free(g->tensors);
    g->tensors = ts;
    memset(g->tensor_index.slot, 0xff, (size_t)(g->tensor_index.mask + 1) *
                                           sizeof *g->tensor_index.slot);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        index_insert(&g->tensor_index, ts[i].name, (int64_t)i, tensor_name, g);
    return GGFIT_OK;
}

static ggfit_status finish(ggfit_gguf *g, char **err)
{
    const shard *s0 = &g->shards[0];
    if (!index_init(&g->key_index, s0->n_kv))
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", s0->path);
    for (uint64_t i = 0; i < s0->n_kv; i++)
        index_insert(&g->key_index, s0->kvs[i].key, (int64_t)i, kv_name, s0);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        g->tensor_bytes += g->tensors[i].n_bytes;
    return GGFIT_OK;
}

static ggfit_gguf *gguf_new(void)
{
    ggfit_gguf *g = ggfit__calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->shards = ggfit__calloc(1, sizeof *g->shards);
    if (!g->shards) {
        free(g);
        return NULL;
    }
    g->n_shards = 1;
    return g;
}

static ggfit_status gguf_open(const char *path, const ggfit__gguf_source *src,
                              ggfit_gguf **out, char **err)
{
    if (err)
        *err = NULL;
    if (!out || !path)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_gguf_open: NULL argument");
    *out = NULL;
    ggfit_gguf *g = gguf_new();
    if (!g)
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", path);
    g->src = src;
    uint64_t no = 0, count = 1;
    int rc = open_shard(g, &g->shards[0], path, err);
    if (!rc)
        rc = split_keys(&g->shards[0], err, &no, &count);
    if (!rc && count > 1 && !(rc = open_split(g, no, count, err)))
        rc = order_tensors(g, err);
    if (!rc && count > 1) {
        uint64_t want;
        bool found;
        reader r = { .name = g->shards[0].path, .err = err };
        rc = shard_uint(&r, &g->shards[0], "split.tensors.count", &found, &want);
        if (!rc && found && want != g->n_tensors)
            rc = ggfit__fail(err, GGFIT_EFORMAT,
                             "%s: split.tensors.count is %llu but the %llu shards hold "
                             "%llu tensors",
                             g->shards[0].path, (unsigned long long)want,
                             (unsigned long long)count, (unsigned long long)g->n_tensors);
    }
    if (!rc)
        rc = finish(g, err);
    g->src = NULL;
    if (rc) {
        ggfit_gguf_close(g);
        return rc;
    }
    *out = g;
    return GGFIT_OK;
}

ggfit_status ggfit_gguf_open(const char *path, ggfit_gguf **out, char **err)
{
    return gguf_open(path, NULL, out, err);
}

ggfit_status ggfit__gguf_open_source(const char *name, const ggfit__gguf_source *src,
                                     ggfit_gguf **out, char **err)
{
    if (!src) {
        if (err)
            *err = NULL;
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_gguf_open: NULL argument");
    }
    return gguf_open(name, src, out, err);
}

ggfit_status ggfit_gguf_open_memory(const void *data, size_t size, const char *name,
                                    ggfit_gguf **out, char **err)
{
    if (err)
        *err = NULL;
    if (!out || (!data && size) || !name)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_gguf_open_memory: NULL argument");
    *out = NULL;
    ggfit_gguf *g = gguf_new();
    if (!g)
        return ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory", name);
    int rc = load_shard(g, &g->shards[0], name, NULL, data, size, err);
    if (!rc)
        rc = finish(g, err);
    if (rc) {
        ggfit_gguf_close(g);
        return rc;
    }
    *out = g;
    return GGFIT_OK;
}

void ggfit_gguf_close(ggfit_gguf *g)
{
    if (!g)
        return;
    for (uint32_t s = 0; s < g->n_shards; s++)
        shard_free(&g->shards[s]);
    free(g->shards);
    for (name_block *b = g->names, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(g->tensors);
    free(g->key_index.slot);
    free(g->tensor_index.slot);
    free(g);
}

/* ---- accessors ------------------------------------------------------------ */

uint32_t ggfit_gguf_version(const ggfit_gguf *g) { return g->shards[0].version; }
uint32_t ggfit_gguf_alignment(const ggfit_gguf *g) { return g->shards[0].alignment; }
uint32_t ggfit_gguf_n_shards(const ggfit_gguf *g) { return g->n_shards; }
uint64_t ggfit_gguf_n_kv(const ggfit_gguf *g) { return g->shards[0].n_kv; }
uint64_t ggfit_gguf_n_tensors(const ggfit_gguf *g) { return g->n_tensors; }
uint64_t ggfit_gguf_tensor_bytes(const ggfit_gguf *g) { return g->tensor_bytes; }

const char *ggfit_gguf_shard_path(const ggfit_gguf *g, uint32_t i)
{
    return i < g->n_shards ? g->shards[i].path : NULL;
}

uint64_t ggfit_gguf_data_offset(const ggfit_gguf *g, uint32_t i)
{
    return i < g->n_shards ? g->shards[i].data_offset : 0;
}

const char *ggfit_gguf_key(const ggfit_gguf *g, uint64_t i)
{
    return i < g->shards[0].n_kv ? g->shards[0].kvs[i].key : NULL;
}

int64_t ggfit_gguf_find_key(const ggfit_gguf *g, const char *key)
{
    return index_find(&g->key_index, key, kv_name, &g->shards[0]);
}

bool ggfit_gguf_value(const ggfit_gguf *g, uint64_t i, ggfit_value *out)
{
    const shard *s = &g->shards[0];
    if (i >= s->n_kv)
        return false;
    decode_value(s->kvs[i].type, s->buf + s->kvs[i].val, out);
    return true;
}

const ggfit_tensor_info *ggfit_gguf_tensor(const ggfit_gguf *g, uint64_t i)
{
    return i < g->n_tensors ? &g->tensors[i] : NULL;
}

int64_t ggfit_gguf_find_tensor(const ggfit_gguf *g, const char *name)
{
    return index_find(&g->tensor_index, name, tensor_name, g);
}

/* ---- raw access for the rewriter (gguf/gguf.h) --------------------------- */

bool ggfit__gguf_raw(const ggfit_gguf *g, uint32_t i, ggfit__gguf_shard_raw *out)
{
    if (!g || i >= g->n_shards)
        return false;
    const shard *s = &g->shards[i];
    out->header = s->buf;
    out->kv_end = s->kv_end;
    out->version = s->version;
    out->n_kv = s->n_kv;
    out->n_tensors = s->n_tensors;
    out->first_tensor = s->first_tensor;
    out->file_size = s->file_size;
    out->data_offset = s->data_offset;
    out->alignment = s->alignment;
    out->path = s->path;
    out->header_len = s->len;
    return true;
}
