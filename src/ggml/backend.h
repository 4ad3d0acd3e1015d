/*
 * backend.h - what each ggml backend does differently, as one table
 * (ggml/src/ggml-<backend>/: buffer types, alloc sizes, offload_op, events).
 * Adding a backend is adding a row (and its ggfit_backend value).
 */
#ifndef GGFIT_BACKEND_H
#define GGFIT_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "ggfit.h"
#include "ggml/sched.h"

typedef struct ggfit_backend_rules {
    const char *name;          /* in --gpu KIND:SIZE and ggfit_backend_name */
    const char *device_prefix; /* llama.cpp's device names: CUDA0, ROCm0, ... */
    /* The pinned host buffer type that heads the CPU list of weights and
     * holds the CPU's compute buffer (get_host_buffer_type); NULL: none. */
    const char *host_buft;
    uint32_t alignment;        /* the device buffer's get_alignment */
    /* Quantized rows are padded to a multiple of 512 values, so kernels
     * can read whole blocks past the end (CUDA's get_alloc_size). */
    bool pad_quant_rows;
    ggfit_sched_offload offload; /* when it takes ops on host weights (offload_op) */
    /* Runs asynchronously with events: several such devices pipeline the
     * layers (ggml_backend_sched's n_copies, llama_context). */
    bool async;
} ggfit_backend_rules;

/* The rules of backend kind; the CPU's for values out of range. */
const ggfit_backend_rules *ggfit__backend(int kind);

/* What tensor i of graph t (as built: sources and view roots are indices
 * into t) asks of backend kind's buffer type beyond its bytes, in llama.cpp
 * build's rules (its get_alloc_size): Metal from METAL_FA_F16_KV on
 * reserves an F16 copy of K, and of V unless V views the same memory, for
 * every flash-attention node, whatever the cache's type. 0 for the other
 * ops and backends. */
uint64_t ggfit__backend_alloc_extra(int kind, const ggfit_st *t, int32_t i, uint32_t build);

#endif
