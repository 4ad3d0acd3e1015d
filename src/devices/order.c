/*
 * order.c - which devices a request plans for, in llama.cpp's order, and
 * which host: the rpc-servers' devices first (llama.cpp adds --rpc servers
 * before it enumerates its local backends), then the described (--gpu) or
 * discovered ones; the host's memory and the CPU features that decide the
 * CPU's extra buffer types (AMX, CPU_REPACK) come from this machine unless
 * described (--host-mem, --cpu, or a Mac from the catalog, which is a
 * whole machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "devices/spec.h"

/* --host-mem TOTAL[/FREE]. */
static ggfit_status parse_host_mem(const char *v, ggfit_host_mem *h, char **err)
{
    char buf[64];
    const char *slash = strchr(v, '/');
    size_t len = slash ? (size_t)(slash - v) : strlen(v);
    if (len == 0 || len >= sizeof buf)
        return ggfit__fail(err, GGFIT_EINVAL, "--host-mem: expected a size like 64GiB or "
                                              "64GiB/50GiB (total/free)");
    ggfit_status rc = ggfit__sizes_have_units("--host-mem", v, err);
    if (rc)
        return rc;   /* a bare number is no size here: 32 is not 32 MiB */
    memcpy(buf, v, len);
    buf[len] = '\0';
    if (ggfit_size_parse(buf, &h->total) != GGFIT_OK || h->total == 0 ||
        (slash && (ggfit_size_parse(slash + 1, &h->free) != GGFIT_OK || h->free > h->total)))
        return ggfit__fail(err, GGFIT_EINVAL, "--host-mem: bad size '%s' (a size like 64GiB, "
                                              "or TOTAL/FREE with FREE <= TOTAL)", v);
    if (slash) {
        snprintf(h->source, sizeof h->source, "--host-mem %s", v);
    } else {
        char why[128];
        h->free = ggfit_host_free_assumed(h->total, why, sizeof why);
        snprintf(h->source, sizeof h->source, "--host-mem %s: %s", v, why);
    }
    return GGFIT_OK;
}

/* The CPU of a machine from the catalog (devices/cpu.c's classes): a Mac
 * an Apple M1 or one of its successors, which add i8mm; a unified CUDA
 * device DGX Spark's GB10; an AMD APU a Zen 5. */
static uint32_t machine_cpu_features(const ggfit_device *d)
{
    const char *cpu = d->kind == GGFIT_BACKEND_METAL
                      ? (strstr(d->description, "Apple M1") ? "apple-m1" : "apple-m2")
                      : d->kind == GGFIT_BACKEND_CUDA ? "gb10" : "zen5";
    uint32_t f = 0;
    ggfit_cpu_parse(cpu, &f, NULL);
    return f;
}

/* The host's memory is this machine's own: the speed model may measure it
 * (speed/host_bw.c). Not with a fake root (--sysroot, GGFIT_SYSROOT): that
 * describes another machine, whose memory cannot be read here. */
static void this_machine(ggfit_request *r, const ggfit_host_info *host)
{
    const char *env = getenv("GGFIT_SYSROOT");
    r->host.this_machine = !r->probe.sysroot && !(env && env[0]);
    snprintf(r->host.cpu_name, sizeof r->host.cpu_name, "%s", host->cpu_name);
}

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
    memset(&r->host, 0, sizeof r->host);
    uint32_t cpu = 0;
    if (r->cpu && (rc = ggfit_cpu_parse(r->cpu, &cpu, err)))
        return rc;
    if (r->rpc && (rc = ggfit_rpc_query_for(r->rpc, r->params.llama_build, r->rpc_timeout_ms,
                                            out, max, &n_rpc, err)))
        return rc;
    /* Every --gpu, as one list: the devices are numbered across them
     * (CUDA0, CUDA1, ...) as in one list. */
    char gpus[4096];
    const char *spec = r->gpu;
    if (r->gpu && r->n_gpu_more) {
        size_t len = (size_t)snprintf(gpus, sizeof gpus, "%s", r->gpu);
        for (uint32_t k = 0; k < r->n_gpu_more && k < GGFIT_MAX_DEVICES && len < sizeof gpus; k++)
            len += (size_t)snprintf(gpus + len, sizeof gpus - len, ",%s", r->gpu_more[k]);
        if (len >= sizeof gpus)
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: the devices given are longer than "
                               "%zu characters", sizeof gpus - 1);
        spec = gpus;
    }
    if (spec && (rc = ggfit_devices_parse(spec, out + n_rpc, max - n_rpc, &n_gpu, err)))
        return rc;
    /* llama.cpp numbers all RPC devices in one sequence, so a described rpc
     * device after two queried ones is RPC2, not the RPC0 --gpu alone gives. */
    for (size_t d = n_rpc, k = n_rpc; d < n_rpc + n_gpu; d++)
        if (out[d].kind == GGFIT_BACKEND_RPC)
            snprintf(out[d].name, sizeof out[d].name, "RPC%zu", k++);
    *n = n_rpc + n_gpu;

    /* A Mac or an APU from the catalog is a whole machine: its memory is
     * the host's. */
    const ggfit_device *mac = NULL;
    for (size_t d = n_rpc; d < *n; d++)
        if (out[d].unified && out[d].system_memory && !mac)
            mac = &out[d];

    ggfit_host_info host;
    if (!r->gpu) {
        /* No --gpu: this machine's devices (after the rpc-servers', as in
         * llama.cpp), its CPU features and its memory. */
        size_t n_local = 0;
        if ((rc = ggfit_host_probe(&r->probe, &host, err)) ||
            (rc = ggfit_devices_discover(&r->probe, out + *n, max - *n, &n_local, err)))
            return rc;
        *n += n_local;
        r->params.cpu_features = host.cpu_features;
        r->host.total = host.total;
        r->host.free = host.available;
        r->host.cpu_features = host.cpu_features;
        snprintf(r->host.source, sizeof r->host.source, "this machine (%s)",
                 host.cpu_name[0] ? host.cpu_name : "MemAvailable");
        if (!r->host_mem)
            this_machine(r, &host);
        else if ((rc = parse_host_mem(r->host_mem, &r->host, err)))
            return rc;
        r->host.cpu_features = host.cpu_features;
    } else if (r->host_mem) {
        if ((rc = parse_host_mem(r->host_mem, &r->host, err)))
            return rc;
        r->host.cpu_features = r->params.cpu_features;
    } else if (mac) {
        char why[128];
        r->host.total = mac->system_memory;
        r->host.free = ggfit_host_free_assumed(mac->system_memory, why, sizeof why);
        snprintf(r->host.source, sizeof r->host.source, "the %.60s's memory: %.110s",
                 mac->description, why);
    } else {
        /* Described devices on this host, unless --host-mem describes
         * another. */
        if ((rc = ggfit_host_probe(&r->probe, &host, err)))
            return rc;
        r->host.total = host.total;
        r->host.free = host.available;
        r->host.cpu_features = r->params.cpu_features;
        snprintf(r->host.source, sizeof r->host.source, "this machine's");
        this_machine(r, &host);
    }
    if (mac && r->gpu) {
        /* Its CPU, not this machine's, decides the extra buffer types. */
        r->params.cpu_features = machine_cpu_features(mac);
        r->host.cpu_features = r->params.cpu_features;
    }
    /* A described CPU wins over any other. */
    if (r->cpu) {
        r->params.cpu_features = cpu;
        r->host.cpu_features = cpu;
    }
    /* what others hold already (a router's earlier children) */
    for (size_t d = 0; d < *n && d < GGFIT_MAX_DEVICES; d++)
        out[d].free = out[d].free > r->held[d] ? out[d].free - r->held[d] : 0;
    r->host.free = r->host.free > r->held_host ? r->host.free - r->held_host : 0;
    r->fit.host_free = r->host.free;
    return GGFIT_OK;
}
