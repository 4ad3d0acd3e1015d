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

#include <jansson.h>

#include "base/base.h"
#include "speed/speed.h"

#define GGFIT__MEASURE_MS 50.0
#define GGFIT__MEASURE_MAX_THREADS 256

/* Four independent sums, so that the loads, not the adds, set the pace. */
static uint64_t read_words(const uint64_t *p, size_t n)
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
    size_t per = words / n_threads / 4 * 4;
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

/* Passes of one reader that take about GGFIT__MEASURE_MS, from one pass. */
static uint32_t passes_for(const uint64_t *buf, size_t words, uint64_t *sink)
{
    double t0 = ggfit__now_s() * 1e3;
    *sink += read_words(buf, words);
    double ms = ggfit__now_s() * 1e3 - t0;
    double k = ms > 0 ? GGFIT__MEASURE_MS / ms : 8;
    return k < 1 ? 1 : k > 64 ? 64 : (uint32_t)k;
}

/* The measurement; single_after_ms bounds it: the one-thread phase runs
 * only while less time than that has passed (else single_gbs is 0). */
static ggfit_status measure(uint64_t buffer_bytes, double single_after_ms, ggfit_host_bw *out,
                            char **err)
{
    memset(out, 0, sizeof *out);
    if (!buffer_bytes)
        buffer_bytes = (uint64_t)128 << 20;
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
    out->all_gbs = nt > 1 ? run(buf, words, nt, passes, &sink) : out->single_gbs;
    out->n_threads = nt;
    out->buffer_bytes = (uint64_t)words * 8;
    out->passes = passes;
    out->ms = ggfit__now_s() * 1e3 - t0;
    out->checksum = sink;
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
    ggfit__sb_printf(&sb, "  GPU memory is not measured (ggfit runs no GPU code): the catalog's "
                          "or NVML's bandwidth is used, --bandwidth overrides it\n");
    return ggfit__sb_take(&sb);
}

char *ggfit_devices_json_measured(const ggfit_host_info *host, const ggfit_device *devs,
                                  size_t n, const ggfit_host_bw *b)
{
    char *base = ggfit_devices_json(host, devs, n), *out = NULL;
    json_t *root = base ? json_loads(base, 0, NULL) : NULL;
    ggfit_free(base);
    if (root && !json_object_set_new(root, "host_bandwidth",
                                      json_pack("{s:f, s:f, s:f, s:i, s:I, s:i, s:f, s:f, "
                                                "s:f}",
                                                "single_thread_gbs", b->single_gbs,
                                                "all_threads_gbs", b->all_gbs, "kept_gbs",
                                                ggfit__host_bw_best(b), "threads",
                                                (int)b->n_threads, "buffer_bytes",
                                                (json_int_t)b->buffer_bytes, "passes",
                                                (int)b->passes, "ms", b->ms,
                                                "assumed_gbs", GGFIT__SPEED_HOST_BW,
                                                "assumed_efficiency", GGFIT__SPEED_HOST_EFF)))
        out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return out;
}
