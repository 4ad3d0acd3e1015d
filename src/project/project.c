/*
 * project.c - what llama.cpp allocates for a model with given flags, per
 * buffer type: weights ("model"), KV cache and recurrent state ("context"),
 * compute buffers ("compute"). The driver: the stages run one after the
 * other in llama.cpp's order (llama_model_load, then llama_init_from_model),
 * each in its own file with a header of its one entry point that only this
 * file includes; each reads what the stages before it wrote into the state
 * (proj.h) and calls no other stage. shared/LLAMA_MEMORY.md names the
 * llama.cpp file and function of each rule.
 *   arch_keys.c         what load_arch_hparams refuses, and the file's
 *                       numbers (llama/check.c, the row's .check), before
 *                       any of them is used
 *   split.c             the layers' devices, from the end: the output
 *                       layer first, then blocks from the last
 *   sizes.c             context, batches, sequences, streams (cparams)
 *   override.c          -ot, -cmoe and -ncmoe as rules
 *   weights.c           each weight's buffer type: an override's, else the
 *                       first in its layer's list that supports the op it
 *                       is used in, padded to the buffer's alignment
 *   layers.c            the sliding window, and what each layer holds
 *   cache_types.c       the cache types llama_init_from_model refuses
 *   flash_attn.c        -fa auto's probe
 *   kv_cache.c          KV cells, SWA windows, MLA
 *   memory_recurrent.c  recurrent state
 *   compute.c           compute buffers from llama.cpp's graph through the
 *                       scheduler and ggml-alloc (graph_reserve.c),
 *                       estimated where there is no graph
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "llama/check.h"
#include "llama/params_default.h"
#include "project/graph_cache.h"
#include "project/project.h"
#include "project/proj.h"
/* the stages, in the order they run */
#include "project/arch_keys.h"
#include "project/split.h"
#include "project/sizes.h"
#include "project/override.h"
#include "project/weights.h"
#include "project/layers.h"
#include "project/cache_types.h"
#include "project/flash_attn.h"
#include "project/kv_cache.h"
#include "project/memory_recurrent.h"
#include "project/compute.h"

static void fill_rows(proj *pr)
{
    ggfit_projection *o = pr->out;
    o->n_devices = pr->n_dev;
    for (uint32_t d = 0; d < pr->n_dev; d++)
        o->device_of[d] = pr->p->split_mode == GGFIT_SPLIT_NONE ? (uint32_t)pr->p->main_gpu : d;
    for (uint32_t i = 0; i < o->n_bufts; i++) {
        const ggfit_buft_mem *b = &o->bufts[i];
        ggfit_mem *row = b->is_host ? &o->host : b->device >= 0 ? &o->devices[b->device]
                                                                : &o->cpu_extra;
        row->model += b->mem.model;
        row->context += b->mem.context;
        row->compute += b->mem.compute;
    }
}

ggfit_status ggfit_project(const ggfit_model *m, const ggfit_params *p,
                           const ggfit_device *devs, size_t n, ggfit_projection *out,
                           int32_t *placement_out, char **err)
{
    if (!m)
        return ggfit__project_cached(m, p, devs, n, out, placement_out, NULL, err);
    struct ggfit__gcache *c = ggfit__gcache_take(m);
    ggfit_status rc = ggfit__project_cached(m, p, devs, n, out, placement_out, c, err);
    ggfit__gcache_give(m, c);
    return rc;
}

ggfit_status ggfit__project_cached(const ggfit_model *m, const ggfit_params *p,
                                   const ggfit_device *devs, size_t n, ggfit_projection *out,
                                   int32_t *placement_out, struct ggfit__gcache *cache,
                                   char **err)
{
    int32_t *placement = placement_out;
    if (err)
        *err = NULL;
    if (!m || !p || !out || (n && !devs))
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_project: NULL argument");
    bool pm = cache && (ggfit__cache_pieces(cache) & GGFIT_CACHE_PROJECTIONS);
    if (pm && ggfit__pmemo_find(cache, m, p, devs, n, out, placement_out))
        return GGFIT_OK;
    memset(out, 0, sizeof *out);
    int8_t dev_of[GGFIT_MAX_LAYERS + 1];   /* set as far as used */
    proj pr;
    ggfit__proj_init(&pr, m, p, out, cache, dev_of, err);
    if (!placement) {
        uint64_t nt = ggfit_model_n_tensors(m);
        placement = ggfit__malloc((size_t)(nt ? nt : 1) * sizeof *placement);
        if (!placement)
            return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    }
    bool known;
    pr.arch = ggfit__model_arch(m, &known);
    /* llama_init_from_model turns flash attention off for an architecture
     * that cannot run it, before anything is sized. (The copy is on the
     * heap: 86 KB in this frame put every projection's callees that much
     * deeper on the stack, on pages of their own.) */
    ggfit_params *p_no_fa = NULL;
    if (pr.arch->no_flash_attn && p->flash_attn != GGFIT_FA_OFF) {
        if (!(p_no_fa = ggfit__malloc(sizeof *p_no_fa))) {
            if (placement != placement_out)
                free(placement);
            return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        }
        ggfit__params_copy(p_no_fa, p);
        p_no_fa->flash_attn = GGFIT_FA_OFF;
        pr.p = p_no_fa;
    }
    /* The model's load (load_arch_hparams) refuses before any context is
     * made, and the file's numbers first: nothing below divides by one
     * unchecked. */
    ggfit_status rc = ggfit__check_arch_keys(&pr);
    if (!rc)
        rc = ggfit__check_model(m, pr.arch, pr.p->llama_build, err);
    if (!rc)
        rc = ggfit__setup_devices(&pr, devs, n);
    if (!rc)
        rc = ggfit__resolve_sizes(&pr);
    if (!rc)
        rc = ggfit__setup_overrides(&pr);
    /* Device buffers come first, in device order, then the CPU's. */
    for (uint32_t d = 0; !rc && d < pr.n_dev; d++)
        ggfit__device_buft(&pr, (int)d);
    if (!rc)
        rc = ggfit__project_weights(&pr, placement);
    if (!rc)
        rc = ggfit__resolve_layers(&pr);
    if (!rc)
        rc = ggfit__check_cache_types(&pr);
    if (!rc)
        rc = ggfit__resolve_flash_attn(&pr, placement);
    if (!rc)
        rc = ggfit__project_kv(&pr);
    if (!rc)
        ggfit__project_state(&pr);
    if (!rc)
        rc = ggfit__project_compute(&pr, placement);
    if (!rc) {
        fill_rows(&pr);
        if (!known)
            snprintf(out->warning, sizeof out->warning,
                     "architecture '%s' is not known to ggfit: weights are exact, the KV "
                     "cache and compute buffers follow the generic transformer rules",
                     pr.hp->arch);
        else if (out->compute_estimated)
            snprintf(out->warning, sizeof out->warning,
                     "compute buffers are estimated: ggfit has no graph for this "
                     "configuration of '%s'", pr.hp->arch);
    }
    ggfit__proj_free(&pr);
    free(p_no_fa);
    if (pm && rc == GGFIT_OK)
        ggfit__pmemo_put(cache, out, placement, ggfit_model_n_tensors(m));
    if (placement != placement_out)
        ggfit_free(placement);
    return rc;
}
