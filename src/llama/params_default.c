/*
 * params_default.c - llama.cpp's flags as a program starts with them
 * (common/common.h's defaults), their copies, and llama-server's changes
 * to them before its fit: below every stage that holds a copy of the flags.
 */
#include <stddef.h>
#include <string.h>

#include "base/base.h"
#include "llama/params_default.h"
#include "versions/version.h"

void ggfit__params_copy(ggfit_params *dst, const ggfit_params *src)
{
    const size_t head = offsetof(ggfit_params, overrides), tail = head + sizeof src->overrides;
    size_t n = src->n_overrides < GGFIT_MAX_OVERRIDES ? src->n_overrides : GGFIT_MAX_OVERRIDES;
    memcpy(dst, src, head);
    memcpy(dst->overrides, src->overrides, n * sizeof *src->overrides);
    memcpy((char *)dst + tail, (const char *)src + tail, sizeof *src - tail);
}

void ggfit__zero_except(void *base, size_t size, const ggfit__hole *holes, size_t n_holes)
{
    size_t at = 0;
    for (size_t k = 0; k < n_holes; k++) {
        memset((char *)base + at, 0, holes[k].offset - at);
        at = holes[k].offset + holes[k].size;
    }
    memset((char *)base + at, 0, size - at);
}

/* llama.cpp's defaults, on zeroed flags. */
static void params_defaults(ggfit_params *p)
{
    p->n_ctx = 0;
    p->n_batch = 2048;
    p->n_ubatch = 512;
    p->n_seq = 1;
    p->flash_attn = GGFIT_FA_AUTO;
    p->type_k = p->type_v = GGFIT_TYPE_F16;
    p->n_gpu_layers = GGFIT_NGL_AUTO;
    p->split_mode = GGFIT_SPLIT_LAYER;
    p->use_mmap = true;
    p->cpu_features = GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512;
    p->pooling = GGFIT_POOLING_UNSPECIFIED;
}

void ggfit__params_init_head(ggfit_params *p)
{
    const ggfit__hole ov = { offsetof(ggfit_params, overrides), sizeof p->overrides };
    ggfit__zero_except(p, sizeof *p, &ov, 1);
    params_defaults(p);
}

void ggfit_params_init(ggfit_params *p)
{
    memset(p, 0, sizeof *p);
    params_defaults(p);
}

/* llama-server's own changes to the flags before it fits them. */
void ggfit_params_server(ggfit_params *p, int32_t cache_ram_mib)
{
    /* tools/server/server.cpp: "n_parallel is set to auto, using
     * n_parallel = 4 and kv_unified = true" (common/arg.cpp gives the
     * server -np -1). The context stays -c tokens (0: the trained
     * context), one cache shared by the slots. */
    if (!p->set_n_seq) {
        p->n_seq = 4;
        p->kv_unified = true;
        p->set_n_seq = true;
    }
    /* server-context.cpp server_n_outputs_max: every ubatch token's output
     * with embeddings or a pooling, else one per slot and draft token
     * (common_speculative_n_max: 0 without a draft, which ggfit does not
     * count), from the -b that server.cpp already cut to -ub for
     * embeddings. */
    uint32_t n_batch = p->embeddings && p->n_ubatch && p->n_batch > p->n_ubatch ? p->n_ubatch
                                                                                : p->n_batch;
    if (p->embeddings ||
        (p->pooling != GGFIT_POOLING_UNSPECIFIED && p->pooling != GGFIT_POOLING_NONE)) {
        p->n_outputs_max = n_batch;
    } else {
        uint64_t n_out = (uint64_t)p->n_seq * 1u;
        p->n_outputs_max = n_out < n_batch ? (uint32_t)n_out : n_batch;
        if (p->n_outputs_max == 0)
            p->n_outputs_max = 1;
    }
    /* common_params cache_ram_mib = 8192 */
    p->cache_ram_mib = cache_ram_mib < -1 ? 8192 : cache_ram_mib;
}

void ggfit_params_load_mode(ggfit_params *p, const ggfit_device *devs, size_t n)
{
    if (p->set_use_mmap || !ggfit__llama_has(p->llama_build, LLAMA_CHANGE_LOAD_MODE_AUTO))
        return;
    /* ggml_backend_dev_props.caps.mmap_support: false on an integrated
     * CUDA or HIP device (GGML_BACKEND_DEVICE_TYPE_IGPU) and on an
     * integrated Vulkan GPU; Metal, though unified, maps */
    bool maps = true;
    for (size_t d = 0; d < n; d++) {
        ggfit_backend k = devs[d].kind;
        if (devs[d].unified &&
            (k == GGFIT_BACKEND_CUDA || k == GGFIT_BACKEND_ROCM || k == GGFIT_BACKEND_VULKAN))
            maps = false;
    }
    p->use_mmap = maps;
}
