/*
 * measure.c - this machine's host memory bandwidth, read as the weights in
 * system RAM are read during generation: a buffer larger than the caches
 * summed word by word, first by one thread, then by one thread per CPU.
 * Bounded: each phase stops once about GGFIT__MEASURE_MS have passed (the
 * speed model's own measurement, host_bw.c, skips the one-thread phase
 * where the rest took long).
 * GPU memory is not measured (ggfit runs no GPU code): the catalog's and
 * NVML's figures stand for it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"
#include "speed/speed.h"

#define GGFIT__MEASURE_MS 50.0
#define GGFIT__MEASURE_MAX_THREADS 256

/* Four independent sums, so that the loads, not the adds, set the pace. */
static uint64_t read_words_plain(const uint64_t *p, size_t n)
{
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        a += p[i];
        b ^= p[i + 1];
        c += p[i + 2];
        d ^= p[i + 3];
    }
    return a + b + c + d;
}

/* The same at the widest vectors the CPU has, as llama.cpp's kernels read
 * weights: scalar loads reach about 60% of what vector loads do (8.5
 * against 15.1 GB/s a thread on this project's Xeon). */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static uint64_t read_words_avx512(const uint64_t *p,
                                                                      size_t n)
{
    __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
    for (size_t i = 0; i + 32 <= n; i += 32) {
        a = _mm512_add_epi64(a, _mm512_loadu_si512((const void *)(p + i)));
        b = _mm512_xor_si512(b, _mm512_loadu_si512((const void *)(p + i + 8)));
        c = _mm512_add_epi64(c, _mm512_loadu_si512((const void *)(p + i + 16)));
        d = _mm512_xor_si512(d, _mm512_loadu_si512((const void *)(p + i + 24)));
    }
    return (uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_add_epi64(a, b),
                                                               _mm512_add_epi64(c, d)));
}

__attribute__((target("avx2"))) static uint64_t read_words_avx2(const uint64_t *p, size_t n)
{
    __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
    for (size_t i = 0; i + 16 <= n; i += 16) {
        a = _mm256_add_epi64(a, _mm256_loadu_si256((const __m256i *)(p + i)));
        b = _mm256_xor_si256(b, _mm256_loadu_si256((const __m256i *)(p + i + 4)));
        c = _mm256_add_epi64(c, _mm256_loadu_si256((const __m256i *)(p + i + 8)));
        d = _mm256_xor_si256(d, _mm256_loadu_si256((const __m256i *)(p + i + 12)));
    }
    uint64_t out[4];
    _mm256_storeu_si256((__m256i *)out, _mm256_add_epi64(_mm256_add_epi64(a, b),
                                                         _mm256_add_epi64(c, d)));
    return out[0] + out[1] + out[2] + out[3];
}
#endif

static uint64_t read_words(const uint64_t *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f"))
        return read_words_avx512(p, n);
    if (__builtin_cpu_supports("avx2"))
        return read_words_avx2(p, n);
#endif
    return read_words_plain(p, n);
}

typedef struct reader {
    const uint64_t *p;
    size_t n;                 /* words of its slice */
    uint32_t passes;
    uint64_t sum;
} reader;

static void *read_slice(void *arg)
{
    reader *r = arg;
    for (uint32_t i = 0; i < r->passes; i++)
        r->sum += read_words(r->p, r->n);
    return NULL;
}

/* GB/s of n_threads threads reading the buffer passes times over. */
static double run(const uint64_t *buf, size_t words, uint32_t n_threads, uint32_t passes,
                  uint64_t *sink)
{
    pthread_t th[GGFIT__MEASURE_MAX_THREADS];
    reader rd[GGFIT__MEASURE_MAX_THREADS];
    size_t per = words / n_threads / 32 * 32;
    uint32_t started = 0;
    double t0 = ggfit__now_s() * 1e3;
    for (uint32_t t = 0; t < n_threads; t++) {
        rd[t] = (reader){ buf + per * t, per, passes, 0 };
        if (t && pthread_create(&th[t], NULL, read_slice, &rd[t]) == 0)
            started++;
        else if (t)
            read_slice(&rd[t]);   /* no thread: this one reads it too */
    }
    read_slice(&rd[0]);
    for (uint32_t t = 1; t <= started; t++)
        pthread_join(th[t], NULL);
    double ms = ggfit__now_s() * 1e3 - t0;
    for (uint32_t t = 0; t < n_threads; t++)
        *sink += rd[t].sum;
    return ms > 0 ? (double)per * n_threads * 8 * passes / (ms * 1e6) : 0;
}

/* ---- compute: one thread's multiply-adds ----------------------------------
 * What llama.cpp's CPU matrix kernels are measured against: single-precision
 * fused multiply-adds at the widest vectors the CPU has (llama.cpp is built
 * for the machine, GGML_NATIVE), 12 independent chains so that the latency
 * of one does not set the pace. A FLOP is a multiply or an add (an FMA is
 * two), as GPU TFLOPS count them. */

#define FMA_CHAINS 12

/* The chains as twelve variables, written out: an array of them indexed in
 * a loop stays in memory at -O2, and its store-to-load latency, not the
 * FMA units, would set the pace (a third of the peak). */
#define FMA_12(fma, x, a, b)                                                                  \
    do {                                                                                      \
        x##0 = fma(x##0, a, b); x##1 = fma(x##1, a, b); x##2 = fma(x##2, a, b);             \
        x##3 = fma(x##3, a, b); x##4 = fma(x##4, a, b); x##5 = fma(x##5, a, b);             \
        x##6 = fma(x##6, a, b); x##7 = fma(x##7, a, b); x##8 = fma(x##8, a, b);             \
        x##9 = fma(x##9, a, b); x##10 = fma(x##10, a, b); x##11 = fma(x##11, a, b);         \
    } while (0)
#define FMA_SUM(add, x)                                                                       \
    add(add(add(add(x##0, x##1), add(x##2, x##3)), add(add(x##4, x##5), add(x##6, x##7))),    \
        add(add(x##8, x##9), add(x##10, x##11)))

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static double fma_avx512(uint64_t iters, float *sink)
{
    __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-4f);
    __m512 x0 = _mm512_set1_ps(0), x1 = _mm512_set1_ps(1), x2 = _mm512_set1_ps(2),
           x3 = _mm512_set1_ps(3), x4 = _mm512_set1_ps(4), x5 = _mm512_set1_ps(5),
           x6 = _mm512_set1_ps(6), x7 = _mm512_set1_ps(7), x8 = _mm512_set1_ps(8),
           x9 = _mm512_set1_ps(9), x10 = _mm512_set1_ps(10), x11 = _mm512_set1_ps(11);
    for (uint64_t i = 0; i < iters; i++)
        FMA_12(_mm512_fmadd_ps, x, a, b);
    *sink += _mm512_reduce_add_ps(FMA_SUM(_mm512_add_ps, x));
    return (double)iters * FMA_CHAINS * 16 * 2;
}

__attribute__((target("avx2,fma"))) static double fma_avx2(uint64_t iters, float *sink)
{
    __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-4f);
    __m256 x0 = _mm256_set1_ps(0), x1 = _mm256_set1_ps(1), x2 = _mm256_set1_ps(2),
           x3 = _mm256_set1_ps(3), x4 = _mm256_set1_ps(4), x5 = _mm256_set1_ps(5),
           x6 = _mm256_set1_ps(6), x7 = _mm256_set1_ps(7), x8 = _mm256_set1_ps(8),
           x9 = _mm256_set1_ps(9), x10 = _mm256_set1_ps(10), x11 = _mm256_set1_ps(11);
    for (uint64_t i = 0; i < iters; i++)
        FMA_12(_mm256_fmadd_ps, x, a, b);
    float out[8];
    _mm256_storeu_ps(out, FMA_SUM(_mm256_add_ps, x));
    for (int k = 0; k < 8; k++)
        *sink += out[k];
    return (double)iters * FMA_CHAINS * 8 * 2;
}
#endif

/* Plain C: what the compiler makes of it (SSE2 on x86-64, NEON on arm64). */
static double fma_plain(uint64_t iters, float *sink)
{
    typedef float v4 __attribute__((vector_size(16)));
    v4 a = { 0.999f, 0.999f, 0.999f, 0.999f }, b = { 1e-4f, 1e-4f, 1e-4f, 1e-4f };
    v4 x0 = a, x1 = a, x2 = a, x3 = a, x4 = a, x5 = a, x6 = a, x7 = a, x8 = a, x9 = a, x10 = a,
       x11 = a;
#define PLAIN_FMA(x, a, b) ((x) * (a) + (b))
#define PLAIN_ADD(x, y) ((x) + (y))
    for (uint64_t i = 0; i < iters; i++)
        FMA_12(PLAIN_FMA, x, a, b);
    v4 t = FMA_SUM(PLAIN_ADD, x);
    *sink += t[0] + t[1] + t[2] + t[3];
    return (double)iters * FMA_CHAINS * 4 * 2;
}

static double fma_run(uint64_t iters, float *sink)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f"))
        return fma_avx512(iters, sink);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return fma_avx2(iters, sink);
#endif
    return fma_plain(iters, sink);
}

typedef struct fma_job {
    uint64_t iters;
    double flop;
    float sink;
} fma_job;

static void *fma_thread(void *arg)
{
    fma_job *j = arg;
    j->flop = fma_run(j->iters, &j->sink);
    return NULL;
}

/* GFLOPS of n_threads threads each running iters rounds. */
static double fma_threads(uint32_t n_threads, uint64_t iters, float *sink)
{
    pthread_t th[GGFIT__MEASURE_MAX_THREADS];
    fma_job job[GGFIT__MEASURE_MAX_THREADS];
    bool started[GGFIT__MEASURE_MAX_THREADS] = { false };
    double t0 = ggfit__now_s(), flop = 0;
    for (uint32_t t = 0; t < n_threads; t++) {
        job[t] = (fma_job){ iters, 0, 0 };
        started[t] = t && pthread_create(&th[t], NULL, fma_thread, &job[t]) == 0;
    }
    fma_thread(&job[0]);
    for (uint32_t t = 1; t < n_threads; t++)
        if (started[t])
            pthread_join(th[t], NULL);
        else
            fma_thread(&job[t]);   /* no thread: run here, counted in the time */
    double s = ggfit__now_s() - t0;
    for (uint32_t t = 0; t < n_threads; t++) {
        flop += job[t].flop;
        *sink += job[t].sink;
    }
    return s > 0 ? flop / s / 1e9 : 0;
}

/* One thread's GFLOPS and all threads' together, each phase about ms long. */
static void measure_compute(uint32_t nt, double ms, ggfit_host_bw *out)
{
    float sink = 0;
    uint64_t iters = 1 << 14;
    /* rounds that take about ms: grown from a short run */
    for (;;) {
        double t0 = ggfit__now_s();
        fma_run(iters, &sink);
        double took = (ggfit__now_s() - t0) * 1e3;
        if (took >= ms / 4 || iters >= (uint64_t)1 << 32) {
            iters = took > 0 ? (uint64_t)(iters * (ms / took)) + 1 : iters;
            break;
        }
        iters *= 4;
    }
    /* the best of three: a shared machine's neighbours only take away */
    for (int r = 0; r < 3; r++) {
        double one = fma_threads(1, iters, &sink);
        double all = nt > 1 ? fma_threads(nt, iters, &sink) : one;
        out->single_gflops = one > out->single_gflops ? one : out->single_gflops;
        out->all_gflops = all > out->all_gflops ? all : out->all_gflops;
    }
    out->checksum += (uint64_t)(sink != 0);
}

/* Passes of one reader that take about GGFIT__MEASURE_MS, from one pass. */
static uint32_t passes_for(const uint64_t *buf, size_t words, uint64_t *sink)
{
    double t0 = ggfit__now_s() * 1e3;
    *sink += read_words(buf, words);
    double ms = ggfit__now_s() * 1e3 - t0;
    double k = ms > 0 ? GGFIT__MEASURE_MS / ms : 8;
    return k < 1 ? 1 : k > 64 ? 64 : (uint32_t)k;
}

/* The largest cache's bytes (Linux sysfs; 0 when not known). A buffer that
 * fits in it is read from the cache, not from memory: some server CPUs
 * have 256 MiB of L3. */
static uint64_t largest_cache(void)
{
    uint64_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], line[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        char *end = NULL;
        unsigned long long k = fgets(line, sizeof line, f) ? strtoull(line, &end, 10) : 0;
        fclose(f);
        uint64_t b = end && *end == 'M' ? (uint64_t)k << 20 : end && *end == 'K' ? k << 10 : k;
        best = b > best ? b : best;
    }
    return best;
}

/* The measurement; single_after_ms bounds it: the one-thread phase runs
 * only while less time than that has passed (else single_gbs is 0). */
static ggfit_status measure(uint64_t buffer_bytes, double single_after_ms, ggfit_host_bw *out,
                            char **err)
{
    memset(out, 0, sizeof *out);
    if (!buffer_bytes) {
        /* twice the largest cache, 128 MiB to 1 GiB */
        uint64_t c = 2 * largest_cache();
        buffer_bytes = c < ((uint64_t)128 << 20)   ? (uint64_t)128 << 20
                       : c > ((uint64_t)1024 << 20) ? (uint64_t)1024 << 20
                                                    : c;
    }
    size_t words = (size_t)(buffer_bytes / 8);
    uint64_t *buf = ggfit__malloc(words * 8);
    if (!buf)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory for a %llu MiB buffer",
                           (unsigned long long)(buffer_bytes >> 20));
    double t0 = ggfit__now_s() * 1e3;
    memset(buf, 1, words * 8);   /* touched, so that every page is there */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t nt = ncpu < 1 ? 1 : ncpu > GGFIT__MEASURE_MAX_THREADS ? GGFIT__MEASURE_MAX_THREADS
                                                                  : (uint32_t)ncpu;
    uint64_t sink = 0;
    uint32_t passes = passes_for(buf, words, &sink);
    if (ggfit__now_s() * 1e3 - t0 < single_after_ms || nt == 1)
        out->single_gbs = run(buf, words, 1, passes, &sink);
    /* twice, the better kept: on a shared machine a neighbour's burst
     * takes a third off one run, never adds to it */
    if (nt > 1) {
        double a = run(buf, words, nt, passes, &sink), b = 0;
        if (ggfit__now_s() * 1e3 - t0 < 3 * single_after_ms)   /* not where it is slow */
            b = run(buf, words, nt, passes, &sink);
        out->all_gbs = a > b ? a : b;
    } else {
        out->all_gbs = out->single_gbs;
    }
    out->n_threads = nt;
    out->buffer_bytes = (uint64_t)words * 8;
    out->passes = passes;
    out->checksum = sink;
    measure_compute(nt, GGFIT__MEASURE_MS / 5, out);
    out->ms = ggfit__now_s() * 1e3 - t0;
    ggfit_free(buf);
    return GGFIT_OK;
}

ggfit_status ggfit_host_measure(uint64_t buffer_bytes, ggfit_host_bw *out, char **err)
{
    if (!out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_host_measure: NULL argument");
    return measure(buffer_bytes, 1e12, out, err);
}

double ggfit__host_bw_best(const ggfit_host_bw *b)
{
    return b->all_gbs > b->single_gbs ? b->all_gbs : b->single_gbs;
}

ggfit_status ggfit__host_measure_bounded(ggfit_host_bw *out, char **err)
{
    /* the buffer filled and read once take 40 to 80 ms on a desktop; on a
     * machine that slow (or that busy) one phase is enough */
    return measure(0, 100, out, err);
}

char *ggfit_host_bw_text(const ggfit_host_bw *b)
{
    ggfit_sb sb = { 0 };
    ggfit__sb_printf(&sb, "host memory bandwidth, measured (%llu MiB read %u time%s per phase; "
                          "%.0f ms in all): 1 thread %.1f GB/s, %u threads %.1f GB/s\n",
                     (unsigned long long)(b->buffer_bytes >> 20), b->passes,
                     b->passes == 1 ? "" : "s", b->ms, b->single_gbs, b->n_threads, b->all_gbs);
    ggfit__sb_printf(&sb, "  kept for the speed model: plans for this machine's memory take "
                          "%.1f GB/s at 100%% (a measured read is near what llama.cpp's CPU "
                          "threads reach; measured again after %d days, or when the CPU or "
                          "the memory changes); with --host-mem (another machine) it assumes "
                          "%.1f GB/s (dual-channel DDR5-5600) at %.0f%%; --host-bw GBS sets "
                          "the figure (a unified device: its own)\n",
                     ggfit__host_bw_best(b), GGFIT_HOST_BW_MAX_AGE_DAYS, GGFIT__SPEED_HOST_BW,
                     GGFIT__SPEED_HOST_EFF * 100);
    ggfit__sb_printf(&sb, "host compute, measured (single-precision multiply-adds at the widest "
                          "vectors): 1 thread %.1f GFLOPS, %u threads %.1f GFLOPS\n"
                          "  kept for the speed model: prompt processing on the CPU, and "
                          "generation where its threads, not the memory, set the pace (-t "
                          "threads; --host-gflops sets one thread's figure)\n",
                     b->single_gflops, b->n_threads, b->all_gflops);
    ggfit__sb_printf(&sb, "  GPU memory is not measured (ggfit runs no GPU code): the catalog's "
                          "or NVML's bandwidth is used, --bandwidth overrides it\n");
    return ggfit__sb_take(&sb);
}

char *ggfit_devices_json_measured(const ggfit_host_info *host, const ggfit_device *devs,
                                  size_t n, const ggfit_host_bw *b)
{
    char *out = NULL;
    json_t *root = ggfit__json_body(ggfit_devices_json(host, devs, n));
    if (root && !json_object_set_new(root, "host_bandwidth",
                                      json_pack("{s:f, s:f, s:f, s:i, s:I, s:i, s:f, s:f, "
                                                "s:f, s:f, s:f}",
                                                "single_thread_gbs", b->single_gbs,
                                                "all_threads_gbs", b->all_gbs, "kept_gbs",
                                                ggfit__host_bw_best(b), "threads",
                                                (int)b->n_threads, "buffer_bytes",
                                                (json_int_t)b->buffer_bytes, "passes",
                                                (int)b->passes, "ms", b->ms,
                                                "assumed_gbs", GGFIT__SPEED_HOST_BW,
                                                "assumed_efficiency", GGFIT__SPEED_HOST_EFF,
                                                "single_thread_gflops", b->single_gflops,
                                                "all_threads_gflops", b->all_gflops)))
        out = ggfit__json_doc(json_incref(root), "devices", GGFIT__JSON_FLAGS);
    json_decref(root);
    return out;
}
