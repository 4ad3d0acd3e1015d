/*
 * buft.c - buffer types: the CPU list of llama_model's make_cpu_buft_list
 * (a device's pinned host type, CPU_REPACK, CPU), each device's own type,
 * and what the bytes a tensor takes in each depend on (the backend's
 * get_alloc_size, padded to its alignment: ggfit__alloc_bytes, inline in
 * project.h). The backends' rules are ggml/backend.c's table.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "ggml/backend.h"
#include "llama/project.h"

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
    pr->buft_pads[i] = device >= 0 && !is_host &&
                       ggfit__backend(pr->devs[device]->kind)->pad_quant_rows;
    return i;
}

int ggfit__cpu_buft(proj *pr)
{
    if (pr->cpu_buft < 0)
        pr->cpu_buft = ggfit__buft_add(pr, "CPU", -1, true);
    return pr->cpu_buft;
}

/* Repacking needs the product's op, a type the CPU has a repacked kernel
 * for on this machine, and rows in groups of 8 (ggml-cpu/repack.cpp). */
static bool repackable(const proj *pr, const ggfit_tensor_info *t, weight_op op)
{
    if (pr->p->no_repack)
        return false;
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

/* The CPU list: the first device's host buffer type, CPU_REPACK, CPU. */
int ggfit__select_cpu(proj *pr, const ggfit_tensor_info *t, weight_op op)
{
    if (pr->host_buft >= 0)
        return pr->host_buft;
    if (repackable(pr, t, op)) {
        if (pr->repack_buft < 0)
            pr->repack_buft = ggfit__buft_add(pr, "CPU_REPACK", -1, false);
        return pr->repack_buft;
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
