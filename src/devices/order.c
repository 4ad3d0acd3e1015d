/*
 * order.c - which devices a request plans for, in llama.cpp's order, and
 * which host: the rpc-servers' devices first (llama.cpp adds --rpc servers
 * before it enumerates its local backends), then the described (--gpu) or
 * discovered ones; the host memory of CPU-only fits and the CPU features
 * that decide weight repacking come from this machine unless described.
 */
#include <stdio.h>

#include "base/base.h"

ggfit_status ggfit_request_devices(ggfit_request *r, ggfit_device *out, size_t max, size_t *n,
                                   char **err)
{
    size_t n_rpc = 0, n_gpu = 0;
    ggfit_status rc;
    if (err)
        *err = NULL;
    if (!r || !out || !n)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_request_devices: NULL argument");
    *n = 0;
    if (r->rpc && (rc = ggfit_rpc_query(r->rpc, r->rpc_timeout_ms, out, max, &n_rpc, err)))
        return rc;
    if (r->gpu && (rc = ggfit_devices_parse(r->gpu, out + n_rpc, max - n_rpc, &n_gpu, err)))
        return rc;
    /* llama.cpp numbers all RPC devices in one sequence, so a described rpc
     * device after two queried ones is RPC2, not the RPC0 --gpu alone gives. */
    for (size_t d = n_rpc, k = n_rpc; d < n_rpc + n_gpu; d++)
        if (out[d].kind == GGFIT_BACKEND_RPC)
            snprintf(out[d].name, sizeof out[d].name, "RPC%zu", k++);
    *n = n_rpc + n_gpu;

    ggfit_host_info host;
    if (!r->gpu) {
        /* No --gpu: this machine's devices (after the rpc-servers', as in
         * llama.cpp), its CPU features, and its memory for CPU-only fits. */
        size_t n_local = 0;
        if ((rc = ggfit_host_probe(&r->probe, &host, err)) ||
            (rc = ggfit_devices_discover(&r->probe, out + *n, max - *n, &n_local, err)))
            return rc;
        *n += n_local;
        r->params.cpu_features = host.cpu_features;
        r->fit.host_free = host.available;
    } else if (!r->host_mem) {
        /* Described devices: CPU-only fits still need a host; this one's
         * memory, unless --host-mem describes another. */
        if ((rc = ggfit_host_probe(&r->probe, &host, err)))
            return rc;
        r->fit.host_free = host.available;
    }
    if (r->host_mem && ggfit_size_parse(r->host_mem, &r->fit.host_free) != GGFIT_OK)
        return ggfit__fail(err, GGFIT_EINVAL, "--host-mem: expected a size like 64GiB");
    return GGFIT_OK;
}
