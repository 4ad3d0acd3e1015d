/*
 * buft.c - buffer types: the CPU list of llama_model's make_cpu_buft_list
 * (a device's pinned host type, the CPU's extra buffer types, CPU), each
 * device's own type, and what the bytes a tensor takes in each depend on
 * (the buffer type's get_alloc_size, padded to its alignment:
 * ggfit__alloc_bytes, inline in proj.h). The devices' backends' rules
 * are ggml/backend.c's table; the CPU's extra buffer types' are here.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "ggml/backend.h"
#include "project/proj.h"

static uint32_t buft_alignment(const proj *pr, int b)
{
    int32_t d = pr->out->bufts[b].device;
    if (d < 0 || pr->out->bufts[b].is_host)
        return 32;
    return ggfit__backend(pr->devs[d]->kind)->alignment;
}

int ggfit__buft_add(proj *pr, const char *name, int32_t device, bool is_host)
{
    ggfit_projection *o = pr->out;
    ggfit_buft_mem *b = &o->bufts[o->n_bufts];
    memset(b, 0, sizeof *b);
    ggfit__str_put(b->name, sizeof b->name, 0, name);
    b->device = device;
    b->is_host = is_host;
    int i = (int)o->n_bufts++;
    pr->buft_align[i] = buft_alignment(pr, i);
    pr->buft_alloc[i] = device >= 0 && !is_host &&
                        ggfit__backend(pr->devs[device]->kind)->pad_quant_rows
                        ? GGFIT__ALLOC_PAD_ROWS : GGFIT__ALLOC_NBYTES;
    return i;
}

int ggfit__cpu_buft(proj *pr)
{
    if (pr->cpu_buft < 0)
        pr->cpu_buft = ggfit__buft_add(pr, "CPU", -1, true);
    return pr->cpu_buft;
}

/* ---- the CPU's extra buffer types ---------------------------------------
 *
 * ggml-cpu lists them (ggml-cpu.cpp ggml_backend_cpu_get_extra_buffer_types)
 * in this order: AMX, SpacemiT's, KleidiAI's, CPU_REPACK, each where the
 * build has it; make_cpu_buft_list puts them after the pinned host type and
 * before CPU, and select_weight_buft takes the first whose supports_op
 * accepts the weight's probe (weight_buft_supported). A build for the CPU
 * (-march=native) has AMX where the CPU has AMX-INT8 and AVX512-VNNI, and
 * CPU_REPACK always; SpacemiT's (RISC-V) and KleidiAI's are options a build
 * must ask for, and are not modelled. --no-repack (use_extra_bufts off)
 * leaves all of them out. Neither is a host buffer type (is_host NULL), and
 * both are the CPU device's, never a model device: llama.cpp's table counts
 * their bytes in no row (fill_rows puts them in cpu_extra). */

/* AMX (ggml-cpu/amx/amx.cpp, extra_buffer_type::supports_op): a plain
 * matrix product (GGML_OP_MUL_MAT; never MUL_MAT_ID), its output rows in
 * 32s (the product's ne[0] % (TILE_N * 2)), and rows of a type it has a
 * kernel for, their length a multiple of the kernel's step: TILE_K (32) for
 * Q4_0, Q4_1, Q8_0, QK_K (256) for Q4_K, Q5_K, Q6_K, IQ4_XS, 16 for F16. It
 * does not look at the weight's dimensions: a 3-D weight probed with
 * MUL_MAT goes there too. */
static bool amx_takes(const proj *pr, const ggfit_tensor_info *t, weight_op op)
{
    if (!(pr->p->cpu_features & GGFIT_CPU_AMX) || op != OP_MUL_MAT || t->ne[1] % 32 != 0)
        return false;
    int64_t step;
    switch (t->type) {
    case GGFIT_TYPE_Q4_0: case GGFIT_TYPE_Q4_1: case GGFIT_TYPE_Q8_0:
        step = 32;
        break;
    case GGFIT_TYPE_Q4_K: case GGFIT_TYPE_Q5_K: case GGFIT_TYPE_Q6_K: case GGFIT_TYPE_IQ4_XS:
        step = 256;
        break;
    case GGFIT_TYPE_F16:
        step = 16;
        break;
    default:
        return false;
    }
    return t->ne[0] % step == 0;
}

/* What AMX allocates (amx/mmq.cpp ggml_backend_amx_get_alloc_size): the
 * types it packs for its kernels (common.h qtype_has_amx_kernels) take
 * ne[1] rows of the packed row (get_row_size), each block of the row with
 * what the kernel keeps beside it: Q8_0 an int32 compensation, Q4_K and
 * Q5_K 4 bytes of scales and mins, IQ4_XS 2; Q4_0, Q4_1 and Q6_K nothing.
 * F16 is not packed: its bytes. Only ne[0] and ne[1] are read, so a 3-D
 * weight gets one matrix's bytes, as llama.cpp sizes it. Aligned to 32
 * (TENSOR_ALIGNMENT). */
uint64_t ggfit__amx_alloc_size(const ggfit_tensor_info *t)
{
    uint64_t extra;
    switch (t->type) {
    case GGFIT_TYPE_Q8_0: case GGFIT_TYPE_Q4_K: case GGFIT_TYPE_Q5_K:
        extra = 4;
        break;
    case GGFIT_TYPE_IQ4_XS:
        extra = 2;
        break;
    case GGFIT_TYPE_Q4_0: case GGFIT_TYPE_Q4_1: case GGFIT_TYPE_Q6_K:
        extra = 0;
        break;
    default:
        return t->n_bytes;
    }
    uint64_t blocks = (uint64_t)t->ne[0] / ggfit_type_block_size(t->type);
    return (uint64_t)t->ne[1] * (ggfit_row_bytes(t->type, (uint64_t)t->ne[0]) + blocks * extra);
}

/* CPU_REPACK (ggml-cpu/repack.cpp): the product's op on a weight of its
 * dimensions (2-D for MUL_MAT, 3-D for MUL_MAT_ID), a type the CPU has a
 * repacked kernel for, and rows in groups of 8. Allocates the tensor's
 * bytes, aligned to 32. */
static bool repack_takes(const proj *pr, const ggfit_tensor_info *t, weight_op op)
{
    if (!(op == OP_MUL_MAT && t->n_dims == 2) && !(op == OP_MUL_MAT_ID && t->n_dims == 3))
        return false;
    if (t->ne[1] % 8 != 0)
        return false;
    uint32_t f = pr->p->cpu_features;
    switch (t->type) {
    case GGFIT_TYPE_Q4_0: case GGFIT_TYPE_Q4_K: case GGFIT_TYPE_IQ4_NL: case GGFIT_TYPE_MXFP4:
        return (f & (GGFIT_CPU_AVX2 | GGFIT_CPU_NEON_DOTPROD)) != 0;
    case GGFIT_TYPE_Q2_K:
        return (f & GGFIT_CPU_AVX512) != 0;
    case GGFIT_TYPE_Q5_K: case GGFIT_TYPE_Q6_K: case GGFIT_TYPE_Q8_0:
        return (f & GGFIT_CPU_NEON_DOTPROD) != 0 && !(f & GGFIT_CPU_AVX2);
    default:
        return false;
    }
}

static const struct cpu_extra {
    const char *name;         /* ggml's name for the buffer type */
    bool (*takes)(const proj *pr, const ggfit_tensor_info *t, weight_op op);
    uint8_t alloc;            /* GGFIT__ALLOC_* */
} cpu_extras[] = {
    [GGFIT__CPU_EXTRA_AMX] = { "AMX", amx_takes, GGFIT__ALLOC_AMX },
    [GGFIT__CPU_EXTRA_REPACK] = { "CPU_REPACK", repack_takes, GGFIT__ALLOC_NBYTES },
};
_Static_assert(sizeof cpu_extras / sizeof cpu_extras[0] == GGFIT__CPU_EXTRA_COUNT,
               "a row for each of the CPU's extra buffer types");

/* The CPU list: the first device's host buffer type, the CPU's extra
 * buffer types, CPU. The extra ones are the CPU's, not a device's, and
 * align to 32 as CPU does (TENSOR_ALIGNMENT). */
int ggfit__select_cpu(proj *pr, const ggfit_tensor_info *t, weight_op op)
{
    if (pr->host_buft >= 0)
        return pr->host_buft;
    for (int e = 0; !pr->p->no_repack && e < GGFIT__CPU_EXTRA_COUNT; e++) {
        if (!cpu_extras[e].takes(pr, t, op))
            continue;
        if (pr->extra_buft[e] < 0) {
            pr->extra_buft[e] = ggfit__buft_add(pr, cpu_extras[e].name, -1, false);
            pr->buft_alloc[pr->extra_buft[e]] = cpu_extras[e].alloc;
        }
        return pr->extra_buft[e];
    }
    return ggfit__cpu_buft(pr);
}

int ggfit__device_buft(proj *pr, int d)
{
    if (pr->dev_buft[d] < 0)
        pr->dev_buft[d] = ggfit__buft_add(pr, pr->devs[d]->name, d, false);
    return pr->dev_buft[d];
}

int ggfit__cpu_compute_buft(proj *pr)
{
    return pr->host_buft >= 0 ? pr->host_buft : ggfit__cpu_buft(pr);
}
