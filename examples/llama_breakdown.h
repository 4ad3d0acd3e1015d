/*
 * llama_breakdown.h - llama.cpp's memory breakdown from C.
 *
 * llama.cpp exports its breakdown (what each buffer type holds of the
 * model, the context and the compute buffers) only as C++
 * (src/llama-ext.h llama_get_memory_breakdown: a std::map, b10309 and
 * b10587 alike); llama_breakdown.cpp, built against llama.cpp's source
 * tree, hands it to C as rows.
 */
#ifndef GGFIT_EXAMPLE_LLAMA_BREAKDOWN_H
#define GGFIT_EXAMPLE_LLAMA_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct llama_context;

typedef struct llama_breakdown_row {
    char name[96];            /* the buffer type's name: "CPU", "CUDA0" */
    int32_t device;           /* index among the model's devices, -1 none
                                 (the CPU and host buffers) */
    bool is_host;             /* host memory (llama.cpp's Host row) */
    uint64_t model;           /* bytes of weights */
    uint64_t context;         /* bytes of KV cache and recurrent state */
    uint64_t compute;         /* bytes of compute buffers */
} llama_breakdown_row;

/* ctx's breakdown, one row per buffer type in llama.cpp's map order, at
 * most max into rows; returns how many there are. */
size_t llama_breakdown(const struct llama_context *ctx, llama_breakdown_row *rows, size_t max);

#ifdef __cplusplus
}
#endif
#endif
