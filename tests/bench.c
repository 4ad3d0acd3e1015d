/*
 * bench.c - speed targets, checked here rather than in timed tests
 * (make bench):
 *  - reading a header and describing the model: under 10 ms per layout;
 *  - projecting one configuration of the largest layout: under 1 ms;
 *  - fitting gpt-oss-120b on 1, 2 and 3 devices: under 5 ms each
 *    (llama.cpp's --fit takes 0.3 to 20 s for the same decisions).
 * Exit status 1 when a target is missed.
 */
#include <stdio.h>
#include <time.h>

#include "ggfit.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    static const char *const files[] = {
        "qwen3-0.6b-f16.gguf", "llama-3.3-70b-Q4_K_M.gguf", "gpt-oss-120b-mxfp4.gguf",
        "glm-4.5-air-Q4_K_M.gguf", "qwen3-next-80b-a3b-Q4_K_M.gguf",
    };
    const char *dir = argc > 1 ? argv[1] : "data/models";
    enum { RUNS = 200 };
    int status = 0;
    printf("%-34s %10s %10s\n", "layout", "open ms", "best ms");
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char path[512];
        double total = 0, best = 1e9;
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        for (int r = 0; r < RUNS; r++) {
            ggfit_model *m;
            char *err = NULL;
            double t0 = now_ms();
            if (ggfit_model_open(path, &m, &err) != GGFIT_OK) {
                fprintf(stderr, "%s\n", err);
                ggfit_free(err);
                return 1;
            }
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
    char *err = NULL;
    snprintf(path, sizeof path, "%s/gpt-oss-120b-mxfp4.gguf", dir);
    if (ggfit_model_open(path, &m, &err) != GGFIT_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 32768;
    ggfit_device devs[3];
    size_t n;
    ggfit_devices_parse("cuda:24077MiB", devs, 3, &n, NULL);
    ggfit_projection pr;
    double best = 1e9;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_ms();
        if (ggfit_project(m, &p, devs, n, &pr, NULL, &err) != GGFIT_OK) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        double dt = now_ms() - t0;
        best = dt < best ? dt : best;
    }
    printf("project gpt-oss-120b, -c 32768, one 24077 MiB GPU: %.3f ms (target 1 ms)\n", best);
    status |= best > 1.0;

    static const char *const specs[] = { "rpc:24077MiB", "rpc:24077MiB,rpc:12288MiB",
                                         "rpc:24077MiB,rpc:24077MiB,rpc:8192MiB" };
    ggfit_params_init(&p);
    for (int k = 0; k < 3; k++) {
        ggfit_fit_result res;
        ggfit_devices_parse(specs[k], devs, 3, &n, NULL);
        best = 1e9;
        for (int r = 0; r < 20; r++) {
            double t0 = now_ms();
            if (ggfit_fit(m, &p, devs, n, NULL, &res, &err) != GGFIT_OK) {
                fprintf(stderr, "%s\n", err);
                return 1;
            }
            double dt = now_ms() - t0;
            ggfit_free(res.log);
            best = dt < best ? dt : best;
        }
        printf("fit gpt-oss-120b on %d device%s: %.3f ms, %u projections (target 5 ms)\n", k + 1,
               k ? "s" : "", best, res.n_projections);
        status |= best > 5.0;
    }
    ggfit_model_free(m);
    printf(status ? "bench: a target was missed\n" : "bench: all targets met\n");
    return status;
}
