/*
 * host_bw.c - this machine's host memory bandwidth for the speed model.
 * The default (dual-channel DDR5-5600, 89.6 GB/s) is ten times what a
 * small VM reads; a plan for this machine's own memory predicts with what
 * it measures instead (measure.c), measured once and kept in the cache
 * folder, keyed by the CPU's name and the memory's total so that a copied
 * home folder or a new DIMM measures again, and measured again once it is
 * older than GGFIT_HOST_BW_MAX_AGE_DAYS.
 *
 * The CPU's compute (one thread's multiply-adds, and all threads') is
 * measured with it, for prompt processing on the CPU.
 *
 * The file, cache_dir/host-bw, is text (a version 1 file, without the
 * compute, is measured again):
 *   ggfit-host-bw 2
 *   cpu <name>
 *   memory <total bytes>
 *   measured <seconds since 1970>
 *   gbs <GB/s>
 *   gflops <one thread> <all threads> <CPUs online>
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "speed/speed.h"

#define HOST_BW_FILE "host-bw"

/* "measured on this machine 2025-06-01" */
static void measured_on(int64_t t, char *out, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;
    char day[16] = "?";
    if (gmtime_r(&tt, &tm))
        strftime(day, sizeof day, "%Y-%m-%d", &tm);
    snprintf(out, n, "measured on this machine %s", day);
}

/* GGFIT_HOST_BW: "default", or a figure in GB/s; false when unset. */
static bool from_env(ggfit_host_bw_figure *out, char **err, ggfit_status *rc)
{
    const char *v = getenv("GGFIT_HOST_BW");
    *rc = GGFIT_OK;
    if (!v || !*v)
        return false;
    if (!strcmp(v, "default")) {
        snprintf(out->source, sizeof out->source, "GGFIT_HOST_BW=default");
        return true;
    }
    char *end;
    double g = strtod(v, &end);
    if (*end || end == v || !(g > 0) || g > 1e6)
        *rc = ggfit__fail(err, GGFIT_EINVAL, "GGFIT_HOST_BW=%s: expected GB/s (a number "
                                             "above 0) or default", v);
    else {
        out->gbs = g;
        snprintf(out->source, sizeof out->source, "GGFIT_HOST_BW=%.60s", v);
    }
    return true;
}

static void file_path(char *out, size_t n)
{
    char dir[1024];
    ggfit__cache_dir(dir, sizeof dir);
    if (dir[0])
        snprintf(out, n, "%s/%s", dir, HOST_BW_FILE);
    else
        out[0] = '\0';
}

/* The kept figure, when it is this machine's and young enough. */
static bool load(const char *path, const char *cpu, uint64_t total, int64_t now,
                 ggfit_host_bw_figure *out)
{
    char line[256], name[160];
    unsigned long long mem = 0;
    long long at = 0;
    double g = 0, g1 = 0, gall = 0;
    unsigned ncpu = 0;
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    if (!f)
        return false;
    bool ok = fgets(line, sizeof line, f) && !strcmp(line, "ggfit-host-bw 2\n") &&
              fgets(name, sizeof name, f) && !strncmp(name, "cpu ", 4) &&
              fgets(line, sizeof line, f) && sscanf(line, "memory %llu", &mem) == 1 &&
              fgets(line, sizeof line, f) && sscanf(line, "measured %lld", &at) == 1 &&
              fgets(line, sizeof line, f) && sscanf(line, "gbs %lf", &g) == 1 &&
              fgets(line, sizeof line, f) &&
              sscanf(line, "gflops %lf %lf %u", &g1, &gall, &ncpu) == 3;
    fclose(f);
    name[strcspn(name, "\n")] = '\0';
    /* another machine's (a copied home folder, a changed VM), a stale one, or
     * one from a clock that was wrong: measured again */
    if (!ok || strcmp(name + 4, cpu) || mem != total || !(g > 0) || !(g1 >= 0) || !(gall >= 0) ||
        at > now + 86400 ||
        now - at > (int64_t)GGFIT_HOST_BW_MAX_AGE_DAYS * 86400)
        return false;
    out->gbs = g;
    out->gflops_thread = g1;
    out->gflops_all = gall;
    out->n_cpus = ncpu;
    out->measured_at = at;
    measured_on(at, out->source, sizeof out->source);
    return true;
}

/* Written under a temporary name and renamed, so that a reader never sees
 * half a file and two writers leave one whole. */
static ggfit_status store(const char *path, const char *cpu, uint64_t total, int64_t at,
                          const ggfit_host_bw *b, char **err)
{
    char dir[1024], tmp[1200];
    if (!path[0])
        return ggfit__fail(err, GGFIT_EIO, "no cache folder (set GGFIT_CACHE_DIR or HOME)");
    ggfit__cache_dir(dir, sizeof dir);
    ggfit__mkdirs(dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return ggfit__fail(err, GGFIT_EIO, "%s: cannot write", tmp);
    fprintf(f, "ggfit-host-bw 2\ncpu %.120s\nmemory %llu\nmeasured %lld\ngbs %.3f\n"
               "gflops %.3f %.3f %u\n",
            cpu, (unsigned long long)total, (long long)at, ggfit__host_bw_best(b),
            b->single_gflops, b->all_gflops, b->n_threads);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return ggfit__fail(err, GGFIT_EIO, "%s: cannot write", path);
    }
    return GGFIT_OK;
}

/* A CPU's name with no line break in it (the file is one field a line). */
static void clean_name(const char *cpu, char *out, size_t n)
{
    snprintf(out, n, "%s", cpu && cpu[0] ? cpu : "unknown CPU");
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

/* One figure per process and folder: a search judges dozens of plans and
 * each would read the file again. Keyed by everything that decides it. */
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    bool have;
    char key[1400];
    ggfit_host_bw_figure fig;
} memo;

ggfit_status ggfit_host_bw_cached(const char *cpu_name, uint64_t mem_total,
                                  ggfit_host_bw_figure *out, char **err)
{
    ggfit_status rc;
    char cpu[128], path[1100], key[1400];
    if (err)
        *err = NULL;
    if (!out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_host_bw_cached: NULL argument");
    memset(out, 0, sizeof *out);
    if (from_env(out, err, &rc))
        return rc;
    clean_name(cpu_name, cpu, sizeof cpu);
    file_path(path, sizeof path);
    snprintf(key, sizeof key, "%s\n%s\n%llu", path, cpu, (unsigned long long)mem_total);
    pthread_mutex_lock(&memo_lock);
    bool have = memo.have && !strcmp(memo.key, key);
    if (have)
        *out = memo.fig;
    pthread_mutex_unlock(&memo_lock);
    if (have)
        return GGFIT_OK;
    int64_t now = (int64_t)time(NULL);
    if (!load(path, cpu, mem_total, now, out)) {
        ggfit_host_bw b;
        if ((rc = ggfit__host_measure_bounded(&b, err)))
            return rc;
        out->gbs = ggfit__host_bw_best(&b);
        out->gflops_thread = b.single_gflops;
        out->gflops_all = b.all_gflops;
        out->n_cpus = b.n_threads;
        out->measured_at = now;
        out->fresh = true;
        measured_on(now, out->source, sizeof out->source);
        /* not kept (a read-only home): measured again next time, no error */
        char *why = NULL;
        store(path, cpu, mem_total, now, &b, &why);
        ggfit_free(why);
    }
    pthread_mutex_lock(&memo_lock);
    snprintf(memo.key, sizeof memo.key, "%s", key);
    memo.fig = *out;
    memo.fig.fresh = false;
    memo.have = true;
    pthread_mutex_unlock(&memo_lock);
    return GGFIT_OK;
}

ggfit_status ggfit_host_bw_keep(const char *cpu_name, uint64_t mem_total, const ggfit_host_bw *b,
                                char **err)
{
    char cpu[128], path[1100];
    if (err)
        *err = NULL;
    if (!b)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_host_bw_keep: NULL argument");
    clean_name(cpu_name, cpu, sizeof cpu);
    file_path(path, sizeof path);
    ggfit_status rc = store(path, cpu, mem_total, (int64_t)time(NULL), b, err);
    pthread_mutex_lock(&memo_lock);
    memo.have = false;   /* the next lookup reads what was kept */
    pthread_mutex_unlock(&memo_lock);
    return rc;
}
