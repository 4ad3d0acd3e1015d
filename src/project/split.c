/*
 * split.c - which device each layer goes to (llama_model::load_tensors):
 * -sm none keeps only -mg's device; otherwise the offloaded layers, the
 * last -ngl of the blocks plus the output layer, are split by -ts or by
 * each device's free memory, from the first device on.
 */
#include "base/base.h"
#include "ggml/backend.h"
#include "project/split.h"

/* Layer il goes to the device whose share of the offloaded layers it falls
 * in; the output layer counts as the last (il == n_layer). */
static int dev_of_layer(const proj *pr, uint32_t k)
{
    float x = (float)k / (float)pr->act;
    for (uint32_t d = 0; d < pr->n_dev; d++)
        if (x < pr->cum[d])
            return (int)d;
    return (int)pr->n_dev - 1;
}

ggfit_status ggfit__setup_devices(proj *pr, const ggfit_device *devs, size_t n)
{
    const ggfit_params *p = pr->p;
    if (n > GGFIT_MAX_DEVICES)
        return ggfit__fail(pr->err, GGFIT_EINVAL, "more than %d devices", GGFIT_MAX_DEVICES);
    if (p->split_mode == GGFIT_SPLIT_ROW)
        return ggfit__fail(pr->err, GGFIT_EUNSUPPORTED,
                           "split mode row is not supported; use -sm layer or none");
    if (p->split_mode == GGFIT_SPLIT_NONE && n > 0) {
        if (p->main_gpu < 0 || (size_t)p->main_gpu >= n)
            return ggfit__fail(pr->err, GGFIT_EINVAL, "-mg %d: there are %zu devices",
                               p->main_gpu, n);
        pr->devs[0] = &devs[p->main_gpu];
        pr->n_dev = 1;
    } else {
        for (size_t d = 0; d < n; d++)
            pr->devs[d] = &devs[d];
        pr->n_dev = (uint32_t)n;
    }
    /* Split proportions: -ts, or each device's free memory. */
    float split[GGFIT_MAX_DEVICES], sum = 0;
    bool given = false;
    for (uint32_t d = 0; d < pr->n_dev; d++)
        given |= p->tensor_split[d] > 0;
    for (uint32_t d = 0; d < pr->n_dev; d++) {
        size_t src = p->split_mode == GGFIT_SPLIT_NONE ? 0 : d;
        split[d] = given ? p->tensor_split[src] : (float)pr->devs[d]->free;
        sum += split[d];
    }
    float acc = 0;
    for (uint32_t d = 0; d < pr->n_dev; d++) {
        acc += split[d];
        pr->cum[d] = sum > 0 ? acc / sum : (float)(d + 1) / (float)pr->n_dev;
    }
    uint32_t total = pr->hp->n_layer + 1;
    int64_t ngl = p->n_gpu_layers < 0 ? (int64_t)total : (int64_t)p->n_gpu_layers;
    if (ngl > total)
        ngl = total;
    pr->i_gpu_start = total - (uint32_t)ngl;
    pr->act = pr->n_dev ? (uint32_t)ngl : 0;
    pr->out->n_gpu_layers = (int32_t)pr->act;
    /* n_layer is at most GGFIT_MAX_LAYERS (the model refuses more) */
    if (pr->act > GGFIT_MAX_LAYERS + 1)
        return ggfit__fail(pr->err, GGFIT_ELIMIT, "%u layers to place", pr->act);
    for (uint32_t k = 0; k < pr->act; k++)
        pr->dev_of[k] = (int8_t)dev_of_layer(pr, k);
    /* The first device with a pinned host buffer type (CUDA_Host, ...)
     * puts it at the head of the CPU list; fit-print loads without mmap, so
     * it is kept. */
    if (pr->n_dev && !p->no_host) {
        for (uint32_t d = 0; d < pr->n_dev; d++) {
            const char *host = ggfit__backend(pr->devs[d]->kind)->host_buft;
            if (host) {
                pr->host_buft = ggfit__buft_add(pr, host, -1, true);
                break;
            }
        }
    }
    return GGFIT_OK;
}
