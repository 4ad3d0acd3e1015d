/*
 * bench.c - how long reading a header and describing the model takes, per
 * shipped layout (make bench). Targets: well under 10 ms for the largest
 * layout; the projection and fit benchmarks join this as they are built.
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
    printf(status ? "bench: over the 10 ms target\n" : "bench: every layout under 10 ms\n");
    return status;
}
