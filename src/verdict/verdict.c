/*
 * verdict.c - will it run on the whole machine? llama.cpp's fit keeps a
 * margin free on each GPU and looks at nothing else; the verdict judges
 * the same plan against every memory it draws on:
 *
 *  - each device: what the plan puts there, plus -fitt's margin, against
 *    its free memory (llama.cpp's own test, except on Metal with mmap,
 *    where the device holds the span of the file it maps, not the tensors);
 *  - the host: the Host row (weights left on the CPU, KV and compute on
 *    the host, pinned host buffers) and the CPU's extra buffer types (AMX,
 *    CPU_REPACK: weights llama.cpp's table counts in no row), against
 *    system memory; the weights mapped from the file must stay resident
 *    too, or every token pages them in from disk;
 *  - one pool for unified memory (Apple silicon, APUs): each unified
 *    device's use and the host's together against the machine's memory,
 *    since a tensor "moved to the CPU" stays in the same RAM.
 *
 * Metal's span (llama_model_loader::get_mapping_range, llama-model.cpp):
 * with mmap, llama.cpp gives each backend one buffer from the first byte of
 * the first tensor it holds in a file to the last byte of the last one,
 * and Metal wires that whole range. With output.weight at the start of the
 * file and the offloaded blocks at its end, a partial offload maps nearly
 * the whole file; -ot and --cpu-moe shrink nothing inside the range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "gguf/gguf.h"
#include "load/reorder.h"
#include "verdict/verdict.h"

const char *ggfit_verdict_status_str(int status)
{
    static const char *const names[] = { "fits", "does not fit", "host memory short" };
    return status >= 0 && status <= GGFIT_VERDICT_HOST ? names[status] : NULL;
}

static uint64_t mem_sum(const ggfit_mem *m)
{
    return m->model + m->context + m->compute;
}

static void pool_close(ggfit_pool *pl)
{
    pl->free_after = (int64_t)pl->free - (int64_t)pl->used;
    uint64_t need = pl->used + pl->margin;
    pl->short_by = need > pl->free ? need - pl->free : 0;
}

/* How a verdict is judged: as the file is, with the fixes for its spans
 * too, or as if the file were written by ggfit reorder. */
typedef enum judging { AS_IS, WITH_FIXES, REORDERED } judging;

/* The spans each Metal device maps, and the bytes of the CPU's mapped
 * weights that lie inside them (counted once in a unified pool). */
typedef struct spans {
    uint32_t n;
    ggfit_span s[GGFIT_MAX_SPANS];
    uint64_t cpu_inside;
} spans;

static int32_t span_index(spans *sp, int32_t device, uint32_t shard)
{
    for (uint32_t i = 0; i < sp->n; i++)
        if (sp->s[i].device == device && sp->s[i].shard == shard)
            return (int32_t)i;
    if (sp->n >= GGFIT_MAX_SPANS)
        return -1;
    ggfit_span *s = &sp->s[sp->n];
    memset(s, 0, sizeof *s);
    s->device = device;
    s->shard = shard;
    s->first = UINT64_MAX;
    return (int32_t)sp->n++;
}

/* Where the blocks went: runs of blocks on one device with their experts
 * in one place (-3: nothing of the kind seen yet). */
static ggfit_status layer_ranges(const ggfit_model *m, const ggfit_projection *pr,
                                 const int32_t *place, ggfit_verdict *v)
{
    uint32_t nl = ggfit_model_hparams(m)->n_layer;
    uint64_t nt = ggfit_model_n_tensors(m);
    int32_t *dev = ggfit__malloc(3 * ((size_t)nl + 1) * sizeof *dev), *exp;
    if (!dev)
        return GGFIT_ENOMEM;
    exp = dev + nl + 1;
    uint32_t *on = (uint32_t *)(exp + nl + 1);   /* the places of its experts */
    for (uint32_t il = 0; il <= nl; il++) {
        dev[il] = exp[il] = -3;
        on[il] = 0;
    }
    for (uint64_t i = 0; i < nt; i++) {
        const ggfit_tensor *t = ggfit_model_tensor(m, i);
        uint32_t il = t->output_layer ? nl : (uint32_t)t->layer;
        if (place[i] < 0 || (!t->output_layer && (t->layer < 0 || t->layer >= (int32_t)nl)))
            continue;
        int32_t at = pr->bufts[place[i]].device;
        if (t->role == GGFIT_ROLE_EXPERTS) {
            exp[il] = exp[il] == -3 || exp[il] == at ? at : -2;
            on[il] |= 1u << (at >= 0 && at < GGFIT_MAX_DEVICES ? at : GGFIT_MAX_DEVICES);
        }
        else if (dev[il] == -3 || t->role == GGFIT_ROLE_ATTENTION)
            dev[il] = at;
    }
    for (uint32_t il = 0; il <= nl; il++) {
        int32_t d = dev[il], e = exp[il];
        if (d == -3 && e == -3)
            continue;   /* nothing loaded (NextN blocks, a model without output) */
        if (d == -3)
            d = e >= -1 ? e : -1;
        if (e == -3)
            e = d;
        ggfit_layer_range *r = v->n_ranges ? &v->ranges[v->n_ranges - 1] : NULL;
        if (r && il != nl && r->last + 1 == il && r->device == d &&
            r->experts == e && r->experts_on == on[il]) {
            r->last = il;
            continue;
        }
        if (v->n_ranges >= GGFIT_MAX_RANGES)
            break;
        r = &v->ranges[v->n_ranges++];
        r->first = r->last = il;
        r->device = d;
        r->experts = e;
        r->experts_on = on[il];
        r->output = il == nl;
    }
    free(dev);
    return GGFIT_OK;
}

/* Where each tensor lands (a projection with placement): the layers' runs,
 * then the ranges of the file the Metal devices hold. */
static ggfit_status metal_spans(const ggfit_model *m, const ggfit_params *p,
                                const ggfit_device *devs, size_t n, judging how, spans *sp,
                                ggfit_verdict *v, char **err)
{
    memset(sp, 0, sizeof *sp);
    uint64_t nt = ggfit_model_n_tensors(m);
    int32_t *place = ggfit__malloc((nt ? nt : 1) * sizeof *place);
    ggfit_projection *pr = ggfit__malloc(sizeof *pr);
    uint64_t *offs = ggfit__malloc((nt ? nt : 1) * sizeof *offs);
    uint64_t *order = ggfit__malloc((nt ? nt : 1) * sizeof *order);
    ggfit_status rc = GGFIT_ENOMEM;
    if (!place || !pr || !offs || !order)
        goto done;
    /* Where each tensor's data is: in the file, or where ggfit reorder
     * would put it. */
    for (uint64_t i = 0; i < nt; i++)
        offs[i] = ggfit_model_tensor(m, i)->info->offset;
    if (how == REORDERED) {
        const ggfit_gguf *g = ggfit_model_gguf(m);
        for (uint32_t k = 0; k < ggfit_gguf_n_shards(g); k++) {
            ggfit__gguf_shard_raw raw;
            ggfit__gguf_raw(g, k, &raw);
            uint64_t cnt = ggfit__reorder_shard(m, k, order);
            ggfit__reorder_offsets(m, order, cnt, raw.alignment, offs);
        }
    }
    if ((rc = ggfit_project(m, p, devs, n, pr, place, err)))
        goto done;
    if ((rc = layer_ranges(m, pr, place, v)))
        goto done;
    for (uint64_t i = 0; i < nt && p->use_mmap; i++) {
        if (place[i] < 0)
            continue;
        const ggfit_buft_mem *b = &pr->bufts[place[i]];
        const ggfit_tensor_info *t = ggfit_model_tensor(m, i)->info;
        if (b->device < 0 || devs[b->device].kind != GGFIT_BACKEND_METAL || b->is_host)
            continue;
        int32_t k = span_index(sp, b->device, t->shard);
        if (k < 0)
            continue;
        ggfit_span *s = &sp->s[k];
        if (offs[i] < s->first)
            s->first = offs[i];
        if (offs[i] + t->n_bytes > s->last)
            s->last = offs[i] + t->n_bytes;
        s->tensors += t->n_bytes;
    }
    /* The CPU's mapped weights that the spans cover already. */
    for (uint64_t i = 0; i < nt && sp->n; i++) {
        if (place[i] < 0 || pr->bufts[place[i]].device >= 0 || !pr->bufts[place[i]].is_host)
            continue;
        const ggfit_tensor_info *t = ggfit_model_tensor(m, i)->info;
        for (uint32_t k = 0; k < sp->n; k++)
            if (sp->s[k].shard == t->shard && offs[i] >= sp->s[k].first &&
                offs[i] + t->n_bytes <= sp->s[k].last) {
                sp->cpu_inside += t->n_bytes;
                break;
            }
    }
    rc = GGFIT_OK;
done:
    if (rc == GGFIT_ENOMEM && err && !*err)
        ggfit__fail(err, rc, "out of memory");
    free(place);
    free(pr);
    free(offs);
    free(order);
    return rc;
}

static bool has_metal_weights(const ggfit_projection *pr, const ggfit_device *devs)
{
    for (uint32_t d = 0; d < pr->n_devices; d++)
        if (devs[pr->device_of[d]].kind == GGFIT_BACKEND_METAL && pr->devices[d].model)
            return true;
    return false;
}

/* Bytes of weights the CPU maps from the file: with mmap, the Host row's
 * weights (llama.cpp's fit projects without mmap, into a pinned host
 * buffer where a GPU has one; a real run with mmap maps them, CPU_Mapped).
 * AMX and CPU_REPACK are allocated either way. */
static uint64_t cpu_mapped(const ggfit_params *p, const ggfit_projection *pr)
{
    return p->use_mmap ? pr->host.model : 0;
}

uint64_t ggfit__fit_margin(const ggfit_fit_options *opt, size_t d)
{
    if (!opt || opt->n_margins == 0)
        return (uint64_t)1024 << 20;
    return opt->margin[d < opt->n_margins ? d : opt->n_margins - 1];
}

static ggfit_status judge(const ggfit_model *m, const ggfit_params *p, const ggfit_projection *pr,
                          const ggfit_device *devs, size_t n, const ggfit_host_mem *host,
                          const ggfit_fit_options *opt, judging how, ggfit_verdict *v,
                          char **err);

/* Each change that shrinks what Metal maps, projected and judged. */
static ggfit_status span_fixes(const ggfit_model *m, const ggfit_params *p,
                               const ggfit_device *devs, size_t n, const ggfit_host_mem *host,
                               const ggfit_fit_options *opt, ggfit_verdict *v, char **err)
{
    ggfit_params *q = ggfit__malloc(sizeof *q);
    ggfit_projection *pr = ggfit__malloc(sizeof *pr);
    ggfit_verdict *w = ggfit__malloc(sizeof *w);
    ggfit_status rc = GGFIT_ENOMEM;
    if (!q || !pr || !w) {
        ggfit__fail(err, rc, "out of memory");
        goto done;
    }
    /* The output layer kept on the CPU: what moved a user's mapping from
     * 47,674 MiB to 11 MiB when output.weight lies far from the blocks. */
    *q = *p;
    if (q->n_overrides < GGFIT_MAX_OVERRIDES) {
        memmove(&q->overrides[1], &q->overrides[0], q->n_overrides * sizeof q->overrides[0]);
        snprintf(q->overrides[0].pattern, sizeof q->overrides[0].pattern, "^output");
        snprintf(q->overrides[0].buffer, sizeof q->overrides[0].buffer, "CPU");
        q->n_overrides++;
        q->set_overrides = true;
        if ((rc = ggfit_project(m, q, devs, n, pr, NULL, err)) ||
            (rc = judge(m, q, pr, devs, n, host, opt, AS_IS, w, err)))
            goto done;
        if (w->metal_mapped < v->metal_mapped) {
            ggfit_span_fix *f = &v->fixes[v->n_fixes++];
            f->kind = GGFIT_FIX_OUTPUT_CPU;
            f->mapped = w->metal_mapped;
            f->status = w->status;
        }
    }
    /* The file reordered (ggfit reorder): each span is its tensors. */
    ggfit_projection *same = ggfit__malloc(sizeof *same);
    if (!same) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    rc = ggfit_project(m, p, devs, n, same, NULL, err);
    if (!rc)
        rc = judge(m, p, same, devs, n, host, opt, REORDERED, w, err);
    free(same);
    if (rc)
        goto done;
    ggfit_span_fix *r = &v->fixes[v->n_fixes++];
    r->kind = GGFIT_FIX_REORDER;
    r->mapped = w->metal_mapped;
    r->status = w->status;
    /* Without mmap the weights are copied into Metal buffers of their own
     * size; the CPU's weights are then allocated, not mapped. */
    *q = *p;
    q->use_mmap = false;
    if ((rc = ggfit_project(m, q, devs, n, pr, NULL, err)) ||
        (rc = judge(m, q, pr, devs, n, host, opt, AS_IS, w, err)))
        goto done;
    ggfit_span_fix *f = &v->fixes[v->n_fixes++];
    f->kind = GGFIT_FIX_NO_MMAP;
    f->mapped = w->metal_tensors;
    f->status = w->status;
    rc = GGFIT_OK;
done:
    free(q);
    free(pr);
    free(w);
    return rc;
}

static ggfit_status judge(const ggfit_model *m, const ggfit_params *p, const ggfit_projection *pr,
                          const ggfit_device *devs, size_t n, const ggfit_host_mem *host,
                          const ggfit_fit_options *opt, judging how, ggfit_verdict *v,
                          char **err)
{
    ggfit_status rc;
    memset(v, 0, sizeof *v);
    v->first_short = -1;

    spans sp = {0};
    bool metal = p->use_mmap && has_metal_weights(pr, devs);
    if ((rc = metal_spans(m, p, devs, n, how, &sp, v, err)))
        return rc;

    bool unified = false;
    uint64_t unified_used = 0;
    for (uint32_t d = 0; d < pr->n_devices && v->n_pools < GGFIT_MAX_POOLS - 2; d++) {
        const ggfit_device *dev = &devs[pr->device_of[d]];
        ggfit_pool *pl = &v->pools[v->n_pools++];
        pl->kind = GGFIT_POOL_DEVICE;
        snprintf(pl->name, sizeof pl->name, "%s", dev->name);
        pl->device = (int32_t)pr->device_of[d];
        pl->total = dev->total;
        pl->free = dev->free;
        pl->used = mem_sum(&pr->devices[d]);
        pl->margin = ggfit__fit_margin(opt, d);
        uint64_t extra = opt ? opt->extra_used[pr->device_of[d]] : 0;   /* a draft model */
        if (metal && dev->kind == GGFIT_BACKEND_METAL) {
            uint64_t span = 0, tensors = 0;
            for (uint32_t k = 0; k < sp.n; k++)
                if (sp.s[k].device == pl->device) {
                    span += sp.s[k].last - sp.s[k].first;
                    tensors += sp.s[k].tensors;
                }
            v->metal_mapped += span;
            v->metal_tensors += pr->devices[d].model;
            pl->used = span + pr->devices[d].context + pr->devices[d].compute;
            pl->mapped = span;
            (void)tensors;
        }
        pl->used += extra;
        pool_close(pl);
        if (dev->unified) {
            unified = true;
            unified_used += pl->used;
        }
    }
    if (!metal)
        for (uint32_t d = 0; d < pr->n_devices; d++)
            if (devs[pr->device_of[d]].kind == GGFIT_BACKEND_METAL)
                v->metal_tensors += pr->devices[d].model;
    if (!metal || sp.n == 0)
        v->metal_mapped = p->use_mmap ? v->metal_tensors : 0;
    v->n_spans = sp.n;
    memcpy(v->spans, sp.s, sp.n * sizeof sp.s[0]);

    ggfit_pool *h = &v->pools[v->n_pools++];
    h->kind = GGFIT_POOL_HOST;
    snprintf(h->name, sizeof h->name, "Host");
    h->device = -1;
    h->total = host ? host->total : 0;
    h->free = host ? host->free : 0;
    /* The Host row and the CPU's extra buffer types (AMX, CPU_REPACK):
     * host memory too, though llama.cpp's table leaves them out. */
    h->used = mem_sum(&pr->host) + mem_sum(&pr->cpu_extra);
    /* llama-server's prompt cache (server_prompt_cache): states of past
     * prompts in host memory up to --cache-ram MiB, or without a limit up
     * to the context's tokens (limit_tokens = n_ctx), about the KV cache
     * once more. Not in llama.cpp's fit. */
    if (p->cache_ram_mib > 0) {
        v->prompt_cache = (uint64_t)p->cache_ram_mib << 20;
    } else if (p->cache_ram_mib == -1) {
        v->prompt_cache = pr->host.context + pr->cpu_extra.context;
        for (uint32_t d = 0; d < pr->n_devices; d++)
            v->prompt_cache += pr->devices[d].context;
    }
    h->used += v->prompt_cache;
    if (opt)
        h->used += opt->extra_host;   /* a draft model's host buffers */
    h->mapped = cpu_mapped(p, pr);
    /* CPU-only: llama.cpp's fit keeps its margin in system memory. */
    h->margin = pr->n_devices == 0 ? ggfit__fit_margin(opt, 0) : 0;
    pool_close(h);

    if (unified) {
        ggfit_pool *u = &v->pools[v->n_pools++];
        u->kind = GGFIT_POOL_UNIFIED;
        snprintf(u->name, sizeof u->name, "unified memory");
        u->device = -1;
        u->total = h->total;
        u->free = h->free;
        uint64_t host_part = h->used - (sp.cpu_inside < h->mapped ? sp.cpu_inside : h->mapped);
        u->used = unified_used + host_part;
        u->mapped = v->metal_mapped + h->mapped -
                    (sp.cpu_inside < h->mapped ? sp.cpu_inside : h->mapped);
        pool_close(u);
    }

    v->status = GGFIT_VERDICT_FITS;
    for (uint32_t i = 0; i < v->n_pools; i++) {
        const ggfit_pool *pl = &v->pools[i];
        if (!pl->short_by)
            continue;
        /* Without GPUs the host is the only memory: short there is no fit. */
        bool host_only = pl->kind == GGFIT_POOL_HOST && pr->n_devices > 0;
        if (!host_only) {
            v->status = GGFIT_VERDICT_NO_FIT;
            v->first_short = (int32_t)i;
            break;
        }
        if (v->first_short < 0) {
            v->status = GGFIT_VERDICT_HOST;
            v->first_short = (int32_t)i;
        }
    }

    /* Worth a word when the spans map clearly more than the tensors. */
    uint64_t excess = v->metal_mapped - v->metal_tensors;
    if (how == WITH_FIXES && metal && v->metal_mapped > v->metal_tensors &&
        excess > (v->metal_tensors / 20 > (64u << 20) ? v->metal_tensors / 20 : (64u << 20)))
        return span_fixes(m, p, devs, n, host, opt, v, err);
    return GGFIT_OK;
}

ggfit_status ggfit_verdict_of(const ggfit_model *m, const ggfit_params *p,
                              const ggfit_projection *pr, const ggfit_device *devs, size_t n,
                              const ggfit_host_mem *host, const ggfit_fit_options *opt,
                              ggfit_verdict *out, char **err)
{
    if (err)
        *err = NULL;
    if (!m || !p || !pr || !out || (n && !devs))
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_verdict_of: NULL argument");
    return judge(m, p, pr, devs, n, host, opt, WITH_FIXES, out, err);
}

ggfit_status ggfit__verdict_quick(const ggfit_model *m, const ggfit_params *p,
                                  const ggfit_projection *pr, const ggfit_device *devs, size_t n,
                                  const ggfit_host_mem *host, const ggfit_fit_options *opt,
                                  ggfit_verdict *out, char **err)
{
    return judge(m, p, pr, devs, n, host, opt, AS_IS, out, err);
}
