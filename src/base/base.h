/*
 * base.h - what every part of libggfit uses: caller-owned error messages,
 * allocation (with failure injection for the tests), reused scratch
 * buffers and a string builder. Not installed. One section per source
 * file of src/base/.
 */
#ifndef GGFIT_BASE_H
#define GGFIT_BASE_H

#include <stdarg.h>
#include <string.h>
#include "ggfit_app.h"   /* ggfit.h, and the layers above it */
#include "base/namespace.h"

#if defined(__GNUC__)
#define GGFIT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GGFIT_PRINTF(f, a)
#endif

#define GGFIT_PAD(x, n) (((x) + (n) - 1) / (n) * (n))
#define GGFIT_MiB (1024.0 * 1024.0)
#define GGFIT__GIB(n) ((uint64_t)(n) << 30)

/* ---- status.c: status names, messages, ggfit_free ------------------------ */

/* Sets *err (when err is not NULL) to a new message built from fmt and
 * returns status, so that error paths read `return ggfit__fail(...)`. */
ggfit_status ggfit__fail(char **err, ggfit_status status, const char *fmt, ...)
    GGFIT_PRINTF(3, 4);

/* A value echoed in a message, cut to its first 40 characters and "...":
 * printf("'%.*s%s'", GGFIT__CLIP(v)); a 10 KB -ts is not printed whole. */
#define GGFIT__CLIP(s) 40, (s), (strlen(s) > 40 ? "..." : "")

/* ---- linking.c: whether this program can load shared libraries ------------ */

/* True in a statically linked program (glibc's): there libcurl, NVML and
 * the C library's resolver are refused with GGFIT_ESTATIC (linking.c says
 * why). */
bool ggfit__static_program(void);

/* ---- clock.c: the monotonic clock ------------------------------------------ */

/* CLOCK_MONOTONIC in seconds, and in whole milliseconds: for deadlines
 * and timings, not dates. */
double ggfit__now_s(void);
int64_t ggfit__now_ms(void);

/* ---- cache_dir.c: where the caches live ----------------------------------- */

/* The cache folder into out: GGFIT_CACHE_DIR, else $XDG_CACHE_HOME/ggfit,
 * else ~/.cache/ggfit; "" when there is none (no HOME). */
void ggfit__cache_dir(char *out, size_t n);

/* Makes dir and the folders above it (those that exist are left alone;
 * whether it worked shows when a file is written there). */
void ggfit__mkdirs(const char *dir);

/* ---- alloc.c: allocation with failure injection --------------------------- */

/* Allocation wrappers: tests make the Nth call fail to prove that every
 * failure path is handled. */
void *ggfit__malloc(size_t n);
void *ggfit__calloc(size_t n, size_t size);
void *ggfit__realloc(void *p, size_t n);
char *ggfit__strndup(const char *s, size_t n);

/* Test hook: the n-th allocation from now on (1 = the next) fails; 0 turns
 * failure injection off. Returns the number of allocations since the last
 * call. The counters are atomic, so allocating from several threads is safe;
 * "the n-th" only means something while one thread allocates. For tests. */
uint64_t ggfit__fail_alloc_after(uint64_t n);

/* ---- buf.c: scratch buffers kept between calls ---------------------------- */

/* Memory kept between calls: scratch that a projection needs every time is
 * reused rather than freed, because fresh blocks of this size come from the
 * kernel and cost page faults on every touch (ten times the work itself). */
typedef struct ggfit__buf {
    void *p;
    size_t cap;
} ggfit__buf;

/* At least n bytes from b (contents not kept when it grows); NULL when out of
 * memory, with b left as it was. */
void *ggfit__buf_get(ggfit__buf *b, size_t n);
void ggfit__buf_free(ggfit__buf *b);

/* ---- hash.c: string hash --------------------------------------------------- */

/* A hash of the n bytes at s, for hash tables of names (not for anything an
 * attacker must not be able to collide: a collision only costs a probe). */
uint64_t ggfit__hash(const char *s, size_t n);

/* ---- sb.c: string builder ------------------------------------------------- */

/* malloc-backed string builder, used by the renderers. A failed append
 * marks the builder as out of memory; sb_take() then returns NULL. */
typedef struct ggfit_sb {
    char *buf;
    size_t len, cap;
    bool oom;
} ggfit_sb;

void ggfit__sb_printf(ggfit_sb *sb, const char *fmt, ...) GGFIT_PRINTF(2, 3);
/* The built string, which the caller frees with ggfit_free() (NULL after a
 * failed append); the builder is empty again. */
char *ggfit__sb_take(ggfit_sb *sb);

/* Writes src at dst + at (at < n), cut where dst's n bytes end as snprintf
 * cuts, NUL-terminated; returns where the text ends now. Put one after the
 * other they write what snprintf(dst, n, "%s%s...", ...) writes, without
 * printf's machinery, for names built in every projection or fit step. */
static inline size_t ggfit__str_put(char *dst, size_t n, size_t at, const char *src)
{
    size_t len = strlen(src);
    if (len > n - 1 - at)
        len = n - 1 - at;
    memcpy(dst + at, src, len);
    dst[at + len] = '\0';
    return at + len;
}
/* The same with v in decimal ("%llu"). */
size_t ggfit__str_put_u(char *dst, size_t n, size_t at, uint64_t v);

/* Edit distance between a[0..na) and b[0..nb), case-insensitive (b is cut
 * at 127 characters): how the names a user mistyped find the closest ones. */
size_t ggfit__edit_distance(const char *a, size_t na, const char *b, size_t nb);

#endif
