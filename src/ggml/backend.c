/*
 * backend.c - the backend table. Alignments are each backend's buffer
 * alignment (CUDA and HIP 128; Vulkan the device's
 * minStorageBufferOffsetAlignment, 64 on common GPUs; Metal, CPU and RPC
 * servers backed by a CPU 32).
 */
#include "ggml/backend.h"

static const ggfit_backend_rules backends[GGFIT_BACKEND_COUNT] = {
    [GGFIT_BACKEND_CPU] = {
        .name = "cpu", .device_prefix = "CPU", .alignment = 32,
        .offload = GGFIT_OFFLOAD_NEVER,
    },
    [GGFIT_BACKEND_CUDA] = {
        .name = "cuda", .device_prefix = "CUDA", .host_buft = "CUDA_Host", .alignment = 128,
        .pad_quant_rows = true, .offload = GGFIT_OFFLOAD_BATCH, .async = true,
    },
    [GGFIT_BACKEND_ROCM] = {
        .name = "rocm", .device_prefix = "ROCm", .host_buft = "ROCm_Host", .alignment = 128,
        .pad_quant_rows = true, .offload = GGFIT_OFFLOAD_BATCH, .async = true,
    },
    [GGFIT_BACKEND_VULKAN] = {
        .name = "vulkan", .device_prefix = "Vulkan", .host_buft = "Vulkan_Host",
        .alignment = 64, .offload = GGFIT_OFFLOAD_BATCH,
    },
    [GGFIT_BACKEND_METAL] = {
        .name = "metal", .device_prefix = "Metal", .alignment = 32,
        .offload = GGFIT_OFFLOAD_MATMUL,
    },
    [GGFIT_BACKEND_RPC] = {
        .name = "rpc", .device_prefix = "RPC", .alignment = 32,
        .offload = GGFIT_OFFLOAD_NEVER,
    },
};

const ggfit_backend_rules *ggfit__backend(int kind)
{
    return &backends[kind >= 0 && kind < GGFIT_BACKEND_COUNT ? kind : GGFIT_BACKEND_CPU];
}

const char *ggfit_backend_name(int backend)
{
    return backend >= 0 && backend < GGFIT_BACKEND_COUNT ? backends[backend].name : NULL;
}
