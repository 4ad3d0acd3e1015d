/*
 * backend.c - the backend table. Alignments are each backend's buffer
 * alignment (CUDA and HIP 128; Vulkan the device's
 * minStorageBufferOffsetAlignment, 64 on common GPUs; Metal, CPU and RPC
 * servers backed by a CPU 32).
 */
#include "ggml/backend.h"
#include "versions/version.h"

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

/* An F16 copy of t's elements, padded to 16 bytes. */
static uint64_t f16_copy(const ggfit_st *t)
{
    uint64_t n = (uint64_t)t->ne[0] * (uint64_t)t->ne[1] * (uint64_t)t->ne[2] * (uint64_t)t->ne[3];
    return (2 * n + 15) / 16 * 16;
}

uint64_t ggfit__backend_alloc_extra(int kind, const ggfit_st *t, int32_t i, uint32_t build)
{
    const ggfit_st *n = &t[i];
    if (kind != GGFIT_BACKEND_METAL || n->op != GGFIT_OP_FLASH_ATTN_EXT || n->n_src < 3 ||
        n->src[1] < 0 || n->src[2] < 0 ||
        !ggfit__llama_has(build, LLAMA_CHANGE_METAL_FA_F16_KV))
        return 0;
    /* ggml_metal_op_flash_attn_ext_extra_kv_f16 */
    int32_t ki = n->src[1];
    const ggfit_st *k = &t[ki], *v = &t[n->src[2]];
    uint64_t extra = f16_copy(k);
    bool v_of_k = v->view_src >= 0 &&
                  (v->view_src == ki || (v->view_src == k->view_src && v->view_offs == k->view_offs));
    return v_of_k ? extra : extra + f16_copy(v);
}
