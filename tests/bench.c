/*
 * bench.c - speed targets, checked here rather than in timed tests
 * (make bench):
 *  - reading a header and describing the model: under 10 ms per layout;
 *  - projecting one configuration of the largest layout: under 1 ms, both
 *    the first projection after opening the model (which builds llama.cpp's
 *    graph) and a repeated one;
 *  - fitting gpt-oss-120b on 1, 2 and 3 devices: under 5 ms each
 *    (llama.cpp's --fit takes 0.3 to 20 s for the same decisions), once the
 *    model's graphs and memory are warm from an earlier fit.
 * Exit status 1 when a target is missed.
 *
 *  - whole `ggfit` runs, median of 21, as a user or a scheduler pays them:
 *    gpt-oss-120b on three devices at most 5 ms (llama.cpp's fit: 4.21 s),
 *    and with a tokenizer of its real size in the header (12.9 MB,
 *    tools/mkvocab.py) at -c 32768 on one 24,077 MiB device at most 6 ms
 *    (llama.cpp: 10.96 s, most of it loading the vocabulary). Beside them,
 *    `ggfit --version`: what the process alone costs here (start, dynamic
 *    loading, exit), which every run pays before any work.
 *  - ggfit batch on a scheduler's mix of 2,048 distinct plans (every
 *    shipped layout, eight machines, four contexts, four memory sizes):
 *    at least 1,000 plans a second on every CPU of the machine.
 *  - the incremental machinery (src/llama/graph_cache.h): the commands a
 *    user runs (a plain fit, --objective speed, sweep, a list of models,
 *    a llama-bench line's tests) timed with each set of cached pieces
 *    forced by GGFIT_CACHE, from none (every graph built, split and
 *    allocated from scratch) to all, beside the library's default, and
 *    what each piece buys: the time the commands take without it, less
 *    their time with every piece. CPU time of the process (user + system,
 *    which a shared machine's other work disturbs less than the wall
 *    clock), median of 11 runs taken in turn. No target: a piece that buys
 *    nothing visible has no place in the library (make bench-cache: this
 *    table alone).
 * A first fit on a freshly opened model is reported beside it, with the
 * fresh pages it touched and what a fresh page costs on this machine: its
 * extra time is those page faults (one graph is about 1 MB), which some
 * virtual machines make ten times dearer than bare metal. That figure is
 * what one `ggfit` run pays; it has no target of its own.
 */
#include <fcntl.h>
#include <sys/time.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ggfit_app.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* Microseconds to touch one fresh 4 KiB page here (best of a few 4 MiB runs). */
static double page_fault_us(void)
{
    enum { BYTES = 4 << 20, PAGE = 4096 };
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        char *p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 0;
        double t0 = now_ms();
        for (size_t i = 0; i < BYTES; i += PAGE)
            p[i] = 1;
        double dt = (now_ms() - t0) * 1e3 / (BYTES / PAGE);
        munmap(p, BYTES);
        best = dt < best ? dt : best;
    }
    return best;
}

static int open_model(const char *path, ggfit_model **m)
{
    char *err = NULL;
    if (ggfit_model_open(path, m, &err) != GGFIT_OK) {
        fprintf(stderr, "%s\n", err);
        ggfit_free(err);
        return 1;
    }
    return 0;
}

static int project(ggfit_model *m, const ggfit_params *p, const ggfit_device *devs, size_t n)
{
    ggfit_projection pr;
    char *err = NULL;
    if (ggfit_project(m, p, devs, n, &pr, NULL, &err) != GGFIT_OK) {
        fprintf(stderr, "%s\n", err);
        ggfit_free(err);
        return 1;
    }
    return 0;
}

static int fit(ggfit_model *m, const ggfit_params *p, const ggfit_device *devs, size_t n,
               unsigned *n_projections)
{
    ggfit_fit_result res;
    char *err = NULL;
    if (ggfit_fit(m, p, devs, n, NULL, &res, &err) != GGFIT_OK) {
        fprintf(stderr, "%s\n", err);
        ggfit_free(err);
        return 1;
    }
    *n_projections = res.n_projections;
    ggfit_free(res.log);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median wall time of 21 runs of argv (output to /dev/null), or -1 when a
 * run cannot start or fails (exit status 2: bad input); *q1 and *q3 get
 * the quartiles (a shared machine's noise). */
extern char **environ;

static double whole_run_ms(const char *const argv[], double *q1, double *q3)
{
    enum { RUNS = 21, MAX_ARGS = 16 };
    double t[RUNS];
    /* posix_spawn takes char *const[]: the pointers copied, not cast */
    char *args[MAX_ARGS + 1] = { NULL };
    size_t n_args = 0;
    while (argv[n_args] && n_args < MAX_ARGS)
        n_args++;
    memcpy(args, argv, n_args * sizeof *args);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    for (int r = 0; r < RUNS; r++) {
        pid_t pid;
        int st;
        double t0 = now_ms();
        if (posix_spawn(&pid, args[0], &fa, NULL, args, environ) != 0 ||
            waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 2) {
            posix_spawn_file_actions_destroy(&fa);
            fprintf(stderr, "bench: %s did not run\n", argv[0]);
            return -1;
        }
        t[r] = now_ms() - t0;
    }
    posix_spawn_file_actions_destroy(&fa);
    qsort(t, RUNS, sizeof t[0], cmp_double);
    *q1 = t[RUNS / 4];
    *q3 = t[3 * RUNS / 4];
    return t[RUNS / 2];
}

/* The whole-process targets; 0 when met. */
static int whole_runs(const char *ggfit, const char *dir, const char *vocab)
{
    char model[512];
    snprintf(model, sizeof model, "%s/gpt-oss-120b-mxfp4.gguf", dir);
    const char *three[] = { ggfit, "-m", model, "--gpu", "rpc:24077MiB,rpc:24077MiB,rpc:8192MiB",
                            "--host-mem", "256GiB", NULL };
    const char *tok[] = { ggfit, "-m", vocab, "-c", "32768", "--gpu", "24077MiB",
                    "--host-mem", "256GiB", NULL };
    const char *version[] = { ggfit, "--version", NULL };
    double qa[2], qb[2], qv[2];
    double a = whole_run_ms(three, &qa[0], &qa[1]), b = whole_run_ms(tok, &qb[0], &qb[1]),
           v = whole_run_ms(version, &qv[0], &qv[1]);
    printf("ggfit --version, the process alone (start, load, exit): %.2f ms (quartiles %.2f, "
           "%.2f)\n", v, qv[0], qv[1]);
    printf("ggfit run, gpt-oss-120b on 3 devices: %.2f ms (quartiles %.2f, %.2f; target 5 ms; "
           "llama.cpp 4.21 s)\n", a, qa[0], qa[1]);
    printf("ggfit run, gpt-oss-120b with a 12.9 MB tokenizer, -c 32768 on one 24077 MiB "
           "device: %.2f ms (quartiles %.2f, %.2f; target 6 ms; llama.cpp 10.96 s)\n", b, qb[0],
           qb[1]);
    return a < 0 || b < 0 || a > 5.0 || b > 6.0;
}

/* ggfit batch on a scheduler's mix: every shipped layout on eight machines
 * at four contexts and four memory sizes, each line a distinct plan; plans
 * a second of wall time on every CPU (target 1,000). 0 when met. */
static int batch_rate(const char *ggfit, const char *dir)
{
    static const char *const models[] = {
        "deepseek-v2-lite-Q4_K_M.gguf", "gemma-3-27b-Q4_K_M.gguf", "gemma-3-4b-Q4_K_M.gguf",
        "glm-4.5-air-Q4_K_M.gguf", "gpt-oss-120b-mxfp4.gguf", "gpt-oss-20b-mxfp4.gguf",
        "lfm2-1.2b-Q4_K_M.gguf", "llama-3.1-8b-Q4_K_M.gguf", "llama-3.3-70b-Q4_K_M.gguf",
        "mixtral-8x7b-Q4_K_M.gguf", "nemotron-h-8b-Q4_K_M.gguf", "qwen3-0.6b-f16.gguf",
        "qwen3-14b-Q4_K_M.gguf", "qwen3-14b-f16.gguf", "qwen3-30b-a3b-Q4_K_M.gguf",
        "qwen3-next-80b-a3b-Q4_K_M.gguf",
    };
    static const char *const gpus[] = { "rtx-3090", "rtx-4090", "rtx-3060-12gb", "8GiB",
                                        "a100-80gb", "rtx-3090,rtx-3090", "24GiB,12GiB",
                                        "none" };
    static const char *const ctx[] = { "4096", "16384", "32768", "" };
    static const char *const host[] = { "32GiB", "64GiB", "128GiB", "256GiB" };
    enum { N_MODELS = sizeof models / sizeof models[0] };
    const size_t lines = N_MODELS * 8 * 4 * 4;
    char in[] = "/tmp/ggfit-bench-batch-XXXXXX";
    int fd = mkstemp(in);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "bench: no temporary file for the batch\n");
        return 1;
    }
    for (size_t i = 0; i < lines; i++) {
        size_t m = i % N_MODELS, g = i / N_MODELS % 8, c = i / N_MODELS / 8 % 4,
               h = i / N_MODELS / 32 % 4;
        fprintf(f, "{\"id\": %zu, \"argv\": [\"-m\", \"%s/%s\", \"--gpu\", \"%s\", \"--host-mem\", "
                   "\"%s\"%s%s%s]}\n",
                i, dir, models[m], gpus[g], host[h], ctx[c][0] ? ", \"-c\", \"" : "", ctx[c],
                ctx[c][0] ? "\"" : "");
    }
    fclose(f);
    char prog[512], cmd[] = "batch";
    snprintf(prog, sizeof prog, "%s", ggfit);
    char *args[] = { prog, cmd, in, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int st = 0;
    double t0 = now_ms();
    int ok = posix_spawn(&pid, prog, &fa, NULL, args, environ) == 0 &&
             waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    double ms = now_ms() - t0;
    posix_spawn_file_actions_destroy(&fa);
    unlink(in);
    if (!ok) {
        fprintf(stderr, "bench: ggfit batch did not run\n");
        return 1;
    }
    double rate = lines / (ms / 1e3);
    printf("ggfit batch, %zu distinct plans (16 layouts x 8 machines x 4 contexts x 4 memory "
           "sizes) on %ld CPUs: %.0f plans/s (target 1000)\n",
           lines, sysconf(_SC_NPROCESSORS_ONLN), rate);
    return rate < 1000;
}

/* The incremental machinery's pieces, each forced on and off
 * (GGFIT_CACHE), against the commands a user runs. */
static double cpu_ms(const struct rusage *ru)
{
    return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
           (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

static int pieces(const char *ggfit, const char *dir)
{
    enum { RUNS = 11, N_CMD = 5, N_SET = 8, MAX_ARGS = 24, MAX_ENV = 512 };
    char m[4][512];
    static const char *const files[4] = { "gpt-oss-120b-mxfp4.gguf", "glm-4.5-air-Q4_K_M.gguf",
                                          "qwen3-next-80b-a3b-Q4_K_M.gguf",
                                          "llama-3.3-70b-Q4_K_M.gguf" };
    for (int k = 0; k < 4; k++)
        snprintf(m[k], sizeof m[k], "%s/%s", dir, files[k]);
#define DEVS "--gpu", "rpc:24077MiB,rpc:24077MiB,rpc:8192MiB", "--host-mem", "256GiB"
    const char *const cmds[N_CMD][MAX_ARGS] = {
        { ggfit, "-m", m[0], DEVS, NULL },
        { ggfit, "-m", m[0], DEVS, "--objective", "speed", NULL },
        { ggfit, "sweep", "-m", m[0], DEVS, NULL },
        { ggfit, "-m", m[0], "-m", m[1], "-m", m[2], "-m", m[3], DEVS, NULL },
        { ggfit, "bench", DEVS, "--", "llama-bench", "-m", m[0], "-p", "512,1024,2048", "-n",
          "128,256", "-d", "0,4096", NULL },
    };
#undef DEVS
    static const char *const names[N_CMD] = { "fit, 3 devices", "--objective speed", "sweep",
                                              "4 models listed", "llama-bench line" };
    /* NULL: the library's default. */
    static const char *const sets[N_SET] = { "none", "graphs", "projections", "graphs,resume",
                                             "graphs,projections", "graphs,projections,probes",
                                             "all", NULL };
    static const char *const heads[N_SET] = { "none", "graphs", "project", "gr+res", "gr+proj",
                                              "+probes", "all", "default" };
    /* The environment, with GGFIT_CACHE set or left out, and the speed
     * model's default host bandwidth (no measuring of this machine). */
    char *envs[N_SET][MAX_ENV];
    char cache_var[N_SET][64];
    for (int k = 0; k < N_SET; k++) {
        size_t n = 0;
        for (char **e = environ; *e && n < MAX_ENV - 3; e++)
            if (strncmp(*e, "GGFIT_CACHE=", 12) && strncmp(*e, "GGFIT_HOST_BW=", 14))
                envs[k][n++] = *e;
        static char host_bw[] = "GGFIT_HOST_BW=default";
        envs[k][n++] = host_bw;
        if (sets[k]) {
            snprintf(cache_var[k], sizeof cache_var[k], "GGFIT_CACHE=%s", sets[k]);
            envs[k][n++] = cache_var[k];
        }
        envs[k][n] = NULL;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double med[N_CMD][N_SET];
    for (int c = 0; c < N_CMD; c++) {
        char *args[MAX_ARGS];
        size_t n_args = 0;
        while (cmds[c][n_args] && n_args < MAX_ARGS - 1)
            n_args++;
        memcpy(args, cmds[c], n_args * sizeof *args);   /* (char *const[] for spawn) */
        args[n_args] = NULL;
        double t[N_SET][RUNS];
        for (int r = 0; r < RUNS; r++) {
            for (int k = 0; k < N_SET; k++) {
                pid_t pid;
                int st;
                struct rusage ru;
                if (posix_spawn(&pid, args[0], &fa, NULL, args, envs[k]) != 0 ||
                    wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 2) {
                    posix_spawn_file_actions_destroy(&fa);
                    fprintf(stderr, "bench: %s (%s) did not run\n", names[c],
                            sets[k] ? sets[k] : "default");
                    return 1;
                }
                t[k][r] = cpu_ms(&ru);
            }
        }
        for (int k = 0; k < N_SET; k++) {
            qsort(t[k], RUNS, sizeof t[k][0], cmp_double);
            med[c][k] = t[k][RUNS / 2];
        }
    }
    posix_spawn_file_actions_destroy(&fa);
    printf("\nincremental machinery, GGFIT_CACHE=<pieces>: ms of CPU per run (median of %d)\n",
           RUNS);
    printf("%-18s", "command");
    for (int k = 0; k < N_SET; k++)
        printf(" %8s", heads[k]);
    printf("\n");
    for (int c = 0; c < N_CMD; c++) {
        printf("%-18s", names[c]);
        for (int k = 0; k < N_SET; k++)
            printf(" %8.2f", med[c][k]);
        printf("\n");
    }
    /* What each piece buys: the time without it, less the time with all. */
    printf("each piece buys (ms; without it, less all):\n%-18s %8s %8s %8s\n", "command",
           "graphs", "project", "resume");
    for (int c = 0; c < N_CMD; c++)
        printf("%-18s %8.2f %8.2f %8.2f\n", names[c], med[c][2] - med[c][5],
               med[c][3] - med[c][5], med[c][4] - med[c][5]);
    return 0;
}

int main(int argc, char **argv)
{
    /* bench --pieces MODELS GGFIT: the incremental machinery's table alone. */
    if (argc > 3 && !strcmp(argv[1], "--pieces"))
        return pieces(argv[3], argv[2]);
    static const char *const files[] = {
        "qwen3-0.6b-f16.gguf", "llama-3.3-70b-Q4_K_M.gguf", "gpt-oss-120b-mxfp4.gguf",
        "glm-4.5-air-Q4_K_M.gguf", "qwen3-next-80b-a3b-Q4_K_M.gguf",
    };
    const char *dir = argc > 1 ? argv[1] : "data/models";
    enum { RUNS = 200, FRESH = 20 };
    int status = 0;
    printf("%-34s %10s %10s\n", "layout", "open ms", "best ms");
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char path[512];
        double total = 0, best = 1e9;
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        for (int r = 0; r < RUNS; r++) {
            ggfit_model *m;
            double t0 = now_ms();
            if (open_model(path, &m))
                return 1;
            double dt = now_ms() - t0;
            ggfit_model_free(m);
            total += dt;
            best = dt < best ? dt : best;
        }
        printf("%-34s %10.3f %10.3f\n", files[k], total / RUNS, best);
        if (best > 10.0)
            status = 1;
    }
    printf(status ? "bench: header reading over the 10 ms target\n"
                  : "bench: every layout read and described under 10 ms\n");

    char path[512];
    ggfit_model *m;
    snprintf(path, sizeof path, "%s/gpt-oss-120b-mxfp4.gguf", dir);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 32768;
    ggfit_device devs[3];
    size_t n;
    ggfit_devices_parse("cuda:24077MiB", devs, 3, &n, NULL);

    /* The first projection after opening builds the graph. */
    double first = 1e9, best = 1e9;
    for (int r = 0; r < FRESH; r++) {
        if (open_model(path, &m))
            return 1;
        double t0 = now_ms();
        if (project(m, &p, devs, n))
            return 1;
        double dt = now_ms() - t0;
        first = dt < first ? dt : first;
        ggfit_model_free(m);
    }
    if (open_model(path, &m))
        return 1;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_ms();
        if (project(m, &p, devs, n))
            return 1;
        double dt = now_ms() - t0;
        best = dt < best ? dt : best;
    }
    ggfit_model_free(m);
    printf("project gpt-oss-120b, -c 32768, one 24077 MiB GPU: first after opening %.3f ms, "
           "repeated %.3f ms (target 1 ms)\n", first, best);
    status |= first > 1.0 || best > 1.0;

    static const char *const specs[] = { "rpc:24077MiB", "rpc:24077MiB,rpc:12288MiB",
                                         "rpc:24077MiB,rpc:24077MiB,rpc:8192MiB" };
    ggfit_params_init(&p);
    for (int k = 0; k < 3; k++) {
        unsigned n_proj = 0;
        long faults = 0;
        ggfit_devices_parse(specs[k], devs, 3, &n, NULL);
        first = best = 1e9;
        for (int r = 0; r < FRESH; r++) {
            if (open_model(path, &m))
                return 1;
            long f0 = minor_faults();
            double t0 = now_ms();
            if (fit(m, &p, devs, n, &n_proj))
                return 1;
            double dt = now_ms() - t0;
            if (dt < first) {
                first = dt;
                faults = minor_faults() - f0;
            }
            ggfit_model_free(m);
        }
        if (open_model(path, &m))
            return 1;
        for (int r = 0; r < FRESH; r++) {
            double t0 = now_ms();
            if (fit(m, &p, devs, n, &n_proj))
                return 1;
            double dt = now_ms() - t0;
            best = dt < best ? dt : best;
        }
        ggfit_model_free(m);
        printf("fit gpt-oss-120b on %d device%s: %.3f ms, %u projections (target 5 ms); "
               "first after opening %.3f ms, %ld fresh pages\n", k + 1, k ? "s" : "", best,
               n_proj, first, faults);
        status |= best > 5.0;
    }
    if (argc > 3)
        status |= whole_runs(argv[2], dir, argv[3]);
    if (argc > 2)
        status |= batch_rate(argv[2], dir);
    if (argc > 2)
        status |= pieces(argv[2], dir);
    printf("this machine: %.1f us per fresh page\n", page_fault_us());
    printf(status ? "bench: a target was missed\n" : "bench: all targets met\n");
    return status;
}
