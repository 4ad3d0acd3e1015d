/*
 * ggfit_llama.h - a ggfit plan applied to llama.cpp's C API: the
 * llama_model_params and llama_context_params that load the model as the
 * plan placed it, with no command line in between.
 *
 * Optional and header-only: libggfit never links llama.cpp. A program that
 * has llama.cpp's headers (include/llama.h, ggml/include/ggml-backend.h)
 * includes this file after ggfit.h (and ggfit_app.h, for plans) and links
 * both libraries; the functions below are static and compiled into it.
 * Built and checked against llama.cpp b10587 (docs/llama.md; b10309's
 * llama.h has the same fields and works too).
 *
 *   ggfit_llama_params *lp;
 *   if (ggfit_llama_apply_plan(plan, &lp, &err) != GGFIT_OK) ...
 *   model = llama_model_load_from_file(path, lp->model);
 *   ctx = llama_init_from_model(model, lp->context);
 *   ...
 *   ggfit_llama_params_free(lp);   (after llama_model_load_from_file)
 *
 * Devices. llama.cpp loads on the devices of ggml's backend registry;
 * ggfit plans on a list of ggfit_device. ggfit_llama_devices builds that
 * list from the registry, in the order llama.cpp uses when it picks the
 * devices itself (src/llama.cpp llama_prepare_model_devices: rpc-servers
 * first, then GPUs, a GPU seen by two backends once, integrated GPUs only
 * when there is no discrete one), each named by its buffer type as -ot
 * spells it ("CUDA0", "RPC0[host:port]"). The other way, for a plan made
 * on other devices (--gpu rtx-3090, a list from another machine), each
 * ggfit device is matched to a registry device not already taken:
 *   1. the same name (the device's or its buffer type's); an rpc device
 *      "RPC0" described with --gpu matches "RPC0[host:port]";
 *   2. else the same backend (CUDA, ROCm, Vulkan, Metal, RPC) with the
 *      nearest total memory: a catalog's Metal against ggml's "MTL0", or
 *      a list whose names are in another order than this machine's;
 *   3. else an error naming the device and the registry's devices.
 * The model is then given exactly those devices, in ggfit's order, so that
 * -ts, -mg and the overrides' device names mean what they meant to ggfit.
 * An empty list loads on the CPU alone (llama.cpp would otherwise take
 * every device).
 *
 * Errors are a status and a message the caller frees with ggfit_free(),
 * as in ggfit.h.
 */
#ifndef GGFIT_LLAMA_H
#define GGFIT_LLAMA_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggfit.h"
#include "ggml-backend.h"
#include "llama.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What llama.cpp is given, and the storage it points into: the fields of
 * model point into this struct, so it lives until llama_model_load_from_file
 * has returned (llama.cpp copies the overrides and the split it keeps). */
typedef struct ggfit_llama_params {
    struct llama_model_params model;
    struct llama_context_params context;
    ggml_backend_dev_t devices[GGFIT_MAX_DEVICES + 1]; /* NULL-terminated,
                                 ggfit's order */
    size_t n_devices;
    float *tensor_split;      /* llama_max_devices() floats, or NULL */
    struct llama_model_tensor_buft_override *overrides; /* n_overrides and
                                 a {NULL, NULL} end, or NULL */
    size_t n_overrides;
    char **patterns;          /* the overrides' patterns, copied */
} ggfit_llama_params;

/* ------------------------------------------------------------------------
 * Internals: messages, names
 * ---------------------------------------------------------------------- */

/* Sets *err (when err is not NULL) to a message the caller frees with
 * ggfit_free() (the C library's free, which libggfit's is); returns rc. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static inline ggfit_status ggfit_llama__fail(char **err, ggfit_status rc, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        char *s = (char *)malloc(512);
        if (s) {
            va_start(ap, fmt);
            vsnprintf(s, 512, fmt, ap);
            va_end(ap);
        }
        *err = s;
    }
    return rc;
}

/* ggfit's backend for a registry device, from its backend's name (the
 * registry's: "CUDA", "ROCm", "Vulkan", "MTL", "RPC"); false for one
 * ggfit has no rules for (SYCL, CANN, OpenCL, ...). */
static inline bool ggfit_llama__backend(ggml_backend_dev_t dev, ggfit_backend *kind)
{
    static const struct { const char *reg; ggfit_backend kind; } names[] = {
        { "CUDA", GGFIT_BACKEND_CUDA }, { "ROCm", GGFIT_BACKEND_ROCM },
        { "HIP", GGFIT_BACKEND_ROCM }, { "Vulkan", GGFIT_BACKEND_VULKAN },
        { "MTL", GGFIT_BACKEND_METAL }, { "Metal", GGFIT_BACKEND_METAL },
        { "RPC", GGFIT_BACKEND_RPC },
    };
    const char *reg = ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(reg, names[i].reg) == 0) {
            *kind = names[i].kind;
            return true;
        }
    return false;
}

/* The name -ot takes for a device: its buffer type's ("CUDA0",
 * "RPC0[host:port]"), else the device's own. */
static inline const char *ggfit_llama__buft_name(ggml_backend_dev_t dev)
{
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(dev);
    return buft ? ggml_backend_buft_name(buft) : ggml_backend_dev_name(dev);
}

/* Whether ggfit's name a names the registry's b: equal, or a is b up to
 * b's "[host:port]" (an rpc device described with --gpu is "RPC0"). */
static inline bool ggfit_llama__same_name(const char *a, const char *b)
{
    size_t n = strlen(a);
    return strcmp(a, b) == 0 || (strncmp(a, b, n) == 0 && b[n] == '[');
}

/* ------------------------------------------------------------------------
 * Devices
 * ---------------------------------------------------------------------- */

/* The registry's devices llama.cpp loads on when it picks them itself
 * (src/llama.cpp llama_prepare_model_devices), in its order: rpc-servers,
 * then GPUs (one per device_id: a GPU seen by two backends once), then
 * integrated GPUs when there is no discrete GPU. At most max; returns how
 * many. Register rpc-servers first (ggfit_llama_add_rpc). */
static inline size_t ggfit_llama_registry(ggml_backend_dev_t *out, size_t max)
{
    size_t n = 0, n_gpu = 0, first_gpu = 0;
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1)
            first_gpu = n;
        for (size_t i = 0; i < ggml_backend_dev_count() && n < max; i++) {
            ggml_backend_dev_t dev = ggml_backend_dev_get(i);
            enum ggml_backend_dev_type t = ggml_backend_dev_type(dev);
            bool rpc = strcmp(ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev)), "RPC") == 0;
            bool take = pass == 0 ? t == GGML_BACKEND_DEVICE_TYPE_GPU && rpc
                      : pass == 1 ? t == GGML_BACKEND_DEVICE_TYPE_GPU && !rpc
                      : t == GGML_BACKEND_DEVICE_TYPE_IGPU && n_gpu == 0;
            if (!take)
                continue;
            if (pass == 1) {
                struct ggml_backend_dev_props a, b;
                bool dup = false;
                ggml_backend_dev_get_props(dev, &a);
                for (size_t k = first_gpu; k < n && a.device_id && !dup; k++) {
                    ggml_backend_dev_get_props(out[k], &b);
                    dup = b.device_id && strcmp(a.device_id, b.device_id) == 0;
                }
                if (dup)
                    continue;
                n_gpu++;
            }
            /* llama.cpp keeps integrated GPUs of the first one's backend
             * alone (a GPU that two backends both list) */
            if (pass == 2 && n > 0 && ggml_backend_dev_type(out[n - 1]) == GGML_BACKEND_DEVICE_TYPE_IGPU &&
                ggml_backend_dev_backend_reg(out[n - 1]) != ggml_backend_dev_backend_reg(dev))
                continue;
            out[n++] = dev;
        }
    }
    return n;
}

/* Registers the rpc-servers of endpoints ("host:port[,host:port...]") as
 * llama.cpp's --rpc does (common/arg.cpp add_rpc_devices): through the RPC
 * backend's ggml_backend_rpc_add_server. Each server's devices then come
 * first in ggfit_llama_registry. */
static inline ggfit_status ggfit_llama_add_rpc(const char *endpoints, char **err)
{
    typedef ggml_backend_reg_t (*add_server_fn)(const char *endpoint);
    ggml_backend_load_all();
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("RPC");
    void *sym = reg ? ggml_backend_reg_get_proc_address(reg, "ggml_backend_rpc_add_server") : NULL;
    add_server_fn add = NULL;
    /* an object pointer to a function pointer, as POSIX's dlsym is used
     * (ISO C has no cast between the two) */
    if (sym)
        memcpy(&add, &sym, sizeof add);
    if (!add)
        return ggfit_llama__fail(err, GGFIT_EUNSUPPORTED,
                                 "--rpc %s: this llama.cpp has no RPC backend "
                                 "(build it with -DGGML_RPC=ON)", endpoints);
    const char *p = endpoints;
    while (*p) {
        char ep[256];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof ep)
            return ggfit_llama__fail(err, GGFIT_EINVAL, "--rpc %s: bad endpoint at '%s' "
                                     "(host:port, comma-separated)", endpoints, p);
        memcpy(ep, p, len);
        ep[len] = '\0';
        ggml_backend_reg_t srv = add(ep);
        if (!srv)
            return ggfit_llama__fail(err, GGFIT_EIO, "--rpc: rpc-server %s does not answer "
                                     "(is ggml-rpc-server running there?)", ep);
        ggml_backend_register(srv);
        p += len + (p[len] == ',');
    }
    return GGFIT_OK;
}

/* ggfit's devices for the registry's (ggfit_llama_registry's, in its
 * order): name (the buffer type's), backend, total and free memory as the
 * backend reports them now, description. At most max; *n is how many. A
 * device of a backend ggfit has no rules for is GGFIT_EUNSUPPORTED. */
static inline ggfit_status ggfit_llama_devices(ggfit_device *out, size_t max, size_t *n,
                                               char **err)
{
    ggml_backend_dev_t devs[GGFIT_MAX_DEVICES];
    size_t nd = ggfit_llama_registry(devs, GGFIT_MAX_DEVICES);
    *n = 0;
    for (size_t i = 0; i < nd && i < max; i++) {
        ggfit_device *d = &out[i];
        size_t free_b = 0, total_b = 0;
        memset(d, 0, sizeof *d);
        if (!ggfit_llama__backend(devs[i], &d->kind))
            return ggfit_llama__fail(err, GGFIT_EUNSUPPORTED,
                                     "device %s: ggfit has no rules for llama.cpp's %s backend "
                                     "(CUDA, ROCm, Vulkan, Metal and RPC)",
                                     ggml_backend_dev_name(devs[i]),
                                     ggml_backend_reg_name(ggml_backend_dev_backend_reg(devs[i])));
        snprintf(d->name, sizeof d->name, "%s", ggfit_llama__buft_name(devs[i]));
        snprintf(d->description, sizeof d->description, "%s",
                 ggml_backend_dev_description(devs[i]));
        ggml_backend_dev_memory(devs[i], &free_b, &total_b);
        d->total = total_b;
        d->free = free_b;
        if (d->kind == GGFIT_BACKEND_RPC) {
            /* "RPC0[host:port]": the endpoint ggfit's renderers name */
            const char *lb = strchr(d->name, '[');
            if (lb)
                snprintf(d->endpoint, sizeof d->endpoint, "%.*s", (int)strcspn(lb + 1, "]"), lb + 1);
        }
        (*n)++;
    }
    return GGFIT_OK;
}

/* Matches ggfit's n devices to the registry's (the header's comment: by
 * name, else by backend and nearest memory) into out[0..n-1]. */
static inline ggfit_status ggfit_llama_match_devices(const ggfit_device *devs, size_t n,
                                             ggml_backend_dev_t *out, char **err)
{
    ggml_backend_dev_t reg[GGFIT_MAX_DEVICES];
    bool taken[GGFIT_MAX_DEVICES] = { false };
    size_t nr = ggfit_llama_registry(reg, GGFIT_MAX_DEVICES);
    for (size_t i = 0; i < n; i++) {
        int best = -1;
        for (size_t k = 0; k < nr && best < 0; k++)
            if (!taken[k] && (ggfit_llama__same_name(devs[i].name, ggfit_llama__buft_name(reg[k])) ||
                              ggfit_llama__same_name(devs[i].name, ggml_backend_dev_name(reg[k]))))
                best = (int)k;
        uint64_t best_gap = UINT64_MAX;
        bool by_name = best >= 0;
        for (size_t k = 0; k < nr && !by_name; k++) {
            ggfit_backend kind;
            size_t free_b = 0, total_b = 0;
            if (taken[k] || !ggfit_llama__backend(reg[k], &kind) || kind != devs[i].kind)
                continue;
            ggml_backend_dev_memory(reg[k], &free_b, &total_b);
            uint64_t gap = total_b > devs[i].total ? total_b - devs[i].total : devs[i].total - total_b;
            if (gap < best_gap) {
                best_gap = gap;
                best = (int)k;
            }
        }
        if (best < 0) {
            char have[256] = "";
            size_t len = 0;
            for (size_t k = 0; k < nr && len < sizeof have; k++)
                len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", k ? ", " : "",
                                        ggfit_llama__buft_name(reg[k]));
            return ggfit_llama__fail(err, GGFIT_EINVAL,
                                     "device %s (%s): no device of that name or backend in ggml's "
                                     "registry (it has: %s); plan for ggfit_llama_devices' list, "
                                     "or register the rpc-servers first",
                                     devs[i].name, ggfit_backend_name(devs[i].kind),
                                     nr ? have : "none");
        }
        taken[best] = true;
        out[i] = reg[best];
    }
    return GGFIT_OK;
}

/* ------------------------------------------------------------------------
 * Parameters
 * ---------------------------------------------------------------------- */

/* Frees what ggfit_llama_apply made; NULL does nothing. */
static inline void ggfit_llama_params_free(ggfit_llama_params *lp)
{
    if (!lp)
        return;
    for (size_t i = 0; i < lp->n_overrides; i++)
        free(lp->patterns[i]);
    free(lp->patterns);
    free(lp->overrides);
    free(lp->tensor_split);
    free(lp);
}

/* The buffer type an override's buffer name stands for: "CPU", one of
 * ggfit's devices (the registry device matched to it), else any buffer
 * type of the registry by name, as llama.cpp's -ot looks them up. */
static inline ggml_backend_buffer_type_t ggfit_llama__buft(const ggfit_llama_params *lp,
                                                           const ggfit_device *devs,
                                                           const char *name)
{
    if (strcmp(name, "CPU") == 0) {
        ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
        return cpu ? ggml_backend_dev_buffer_type(cpu) : NULL;
    }
    for (size_t d = 0; d < lp->n_devices; d++)
        if (ggfit_llama__same_name(name, devs[d].name) || ggfit_llama__same_name(devs[d].name, name))
            return ggml_backend_dev_buffer_type(lp->devices[d]);
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_buffer_type_t b = ggml_backend_dev_buffer_type(ggml_backend_dev_get(i));
        if (b && strcmp(ggml_backend_buft_name(b), name) == 0)
            return b;
    }
    return NULL;
}

/* Appends one override (its pattern copied). */
static inline ggfit_status ggfit_llama__add_override(ggfit_llama_params *lp, const char *pattern,
                                                     ggml_backend_buffer_type_t buft)
{
    size_t len = strlen(pattern) + 1;
    char *copy = (char *)malloc(len);
    if (!copy)
        return GGFIT_ENOMEM;
    memcpy(copy, pattern, len);
    lp->patterns[lp->n_overrides] = copy;
    lp->overrides[lp->n_overrides].pattern = copy;
    lp->overrides[lp->n_overrides].buft = buft;
    lp->n_overrides++;
    return GGFIT_OK;
}

/* The overrides in the order ggfit matched them (src/project/override.c):
 * -ot's in order, then -cmoe's, then -ncmoe's, the first match winning
 * as in llama_model_loader; -cmoe and -ncmoe as common/arg.cpp writes
 * them (the experts' up, down, gate and gate_up tensors, "ch" ones
 * too). */
static inline ggfit_status ggfit_llama__overrides(ggfit_llama_params *lp, const ggfit_params *p,
                                                  const ggfit_device *devs, char **err)
{
    static const char exps[] = "\\.ffn_(up|down|gate|gate_up)_(ch|)exps";
    uint32_t n_ot = ggfit_params_n_overrides(p);
    bool cmoe = ggfit_params_get(p, GGFIT_PARAM_CPU_MOE) != 0;
    int64_t ncmoe = ggfit_params_get(p, GGFIT_PARAM_N_CPU_MOE);
    size_t n = n_ot + (cmoe ? 1 : 0) + (size_t)(ncmoe > 0 ? ncmoe : 0);
    if (n == 0)
        return GGFIT_OK;
    lp->overrides = (struct llama_model_tensor_buft_override *)calloc(n + 1, sizeof *lp->overrides);
    lp->patterns = (char **)calloc(n, sizeof *lp->patterns);
    if (!lp->overrides || !lp->patterns)
        return ggfit_llama__fail(err, GGFIT_ENOMEM, "out of memory");
    ggml_backend_buffer_type_t cpu = ggfit_llama__buft(lp, devs, "CPU");
    for (uint32_t i = 0; i < n_ot; i++) {
        const char *pattern, *buffer;
        ggfit_params_override(p, i, &pattern, &buffer);
        ggml_backend_buffer_type_t buft = ggfit_llama__buft(lp, devs, buffer);
        if (!buft)
            return ggfit_llama__fail(err, GGFIT_EINVAL,
                                     "-ot %s=%s: no buffer type '%s' in ggml's registry "
                                     "(CPU or a device of the plan)", pattern, buffer, buffer);
        if (ggfit_llama__add_override(lp, pattern, buft))
            return ggfit_llama__fail(err, GGFIT_ENOMEM, "out of memory");
    }
    if (cmoe && ggfit_llama__add_override(lp, exps, cpu))
        return ggfit_llama__fail(err, GGFIT_ENOMEM, "out of memory");
    for (int64_t il = 0; il < ncmoe; il++) {
        char pattern[80];
        snprintf(pattern, sizeof pattern, "blk\\.%d%s", (int)il, exps);
        if (ggfit_llama__add_override(lp, pattern, cpu))
            return ggfit_llama__fail(err, GGFIT_ENOMEM, "out of memory");
    }
    lp->model.tensor_buft_overrides = lp->overrides;
    return GGFIT_OK;
}

/* -ts as llama.cpp takes it: llama_max_devices() proportions indexed as
 * the model's devices, which are ggfit's; NULL (by free memory) when -ts
 * gave none. */
static inline ggfit_status ggfit_llama__split(ggfit_llama_params *lp, const ggfit_params *p,
                                              char **err)
{
    uint32_t n_ts = ggfit_params_n_tensor_split(p);
    size_t n_max = llama_max_devices();
    bool any = false;
    for (uint32_t i = 0; i < n_ts; i++)
        any = any || ggfit_params_tensor_split(p, i) != 0.0f;
    if (!any)
        return GGFIT_OK;
    lp->tensor_split = (float *)calloc(n_max, sizeof *lp->tensor_split);
    if (!lp->tensor_split)
        return ggfit_llama__fail(err, GGFIT_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < n_ts && i < n_max; i++)
        lp->tensor_split[i] = ggfit_params_tensor_split(p, i);
    lp->model.tensor_split = lp->tensor_split;
    return GGFIT_OK;
}

/* The context's fields, each from the flag that sets it in llama.cpp's
 * common_context_params_to_llama: -c, -b, -ub, -np, -kvu, -ctk, -ctv, -fa,
 * -nkvo, --swa-full, --embedding and --pooling, and the outputs the graph
 * is reserved for. ggfit's values are llama.cpp's (types are ggml's ids;
 * -fa auto/off/on is -1/0/1). */
static inline void ggfit_llama__context(struct llama_context_params *c, const ggfit_params *p)
{
    c->n_ctx = (uint32_t)ggfit_params_get(p, GGFIT_PARAM_N_CTX);
    c->n_batch = (uint32_t)ggfit_params_get(p, GGFIT_PARAM_N_BATCH);
    c->n_ubatch = (uint32_t)ggfit_params_get(p, GGFIT_PARAM_N_UBATCH);
    c->n_seq_max = (uint32_t)ggfit_params_get(p, GGFIT_PARAM_N_SEQ);
    c->n_outputs_max = (uint32_t)ggfit_params_get(p, GGFIT_PARAM_N_OUTPUTS_MAX);
    c->n_rs_seq = (uint32_t)ggfit_params_get(p, GGFIT_PARAM_N_RS_SEQ);
    c->kv_unified = ggfit_params_get(p, GGFIT_PARAM_KV_UNIFIED) != 0;
    c->type_k = (enum ggml_type)ggfit_params_get(p, GGFIT_PARAM_TYPE_K);
    c->type_v = (enum ggml_type)ggfit_params_get(p, GGFIT_PARAM_TYPE_V);
    c->flash_attn_type = (enum llama_flash_attn_type)ggfit_params_get(p, GGFIT_PARAM_FLASH_ATTN);
    c->offload_kqv = ggfit_params_get(p, GGFIT_PARAM_NO_KV_OFFLOAD) == 0;
    c->swa_full = ggfit_params_get(p, GGFIT_PARAM_SWA_FULL) != 0;
    c->embeddings = ggfit_params_get(p, GGFIT_PARAM_EMBEDDINGS) != 0;
    c->pooling_type = (enum llama_pooling_type)ggfit_params_get(p, GGFIT_PARAM_POOLING);
    if (ggfit_params_get(p, GGFIT_PARAM_CTX_MTP))
        c->ctx_type = LLAMA_CONTEXT_TYPE_MTP;
}

/* llama.cpp's parameters for flags p on ggfit's n devices devs (matched to
 * the registry's: the header's comment), into *out, which the caller frees
 * with ggfit_llama_params_free() once the model is loaded. n_gpu_layers is
 * -ngl as given, where pr is NULL: auto and all are llama.cpp's -1, every
 * layer; with pr, the projection's layers offloaded (auto resolved), so
 * that llama.cpp loads what ggfit projected. The load mode is --mmap's
 * (LLAMA_LOAD_MODE_MMAP) or --no-mmap's (NONE), never llama.cpp's auto:
 * ggfit has decided it (ggfit_params_load_mode). */
static inline ggfit_status ggfit_llama_apply(const ggfit_params *p, const ggfit_projection *pr,
                                             const ggfit_device *devs, size_t n,
                                             ggfit_llama_params **out, char **err)
{
    ggfit_status rc;
    int64_t ngl = ggfit_params_get(p, GGFIT_PARAM_N_GPU_LAYERS);
    ggfit_llama_params *lp = (ggfit_llama_params *)calloc(1, sizeof *lp);
    *out = NULL;
    if (!lp)
        return ggfit_llama__fail(err, GGFIT_ENOMEM, "out of memory");
    if (n > GGFIT_MAX_DEVICES) {
        rc = ggfit_llama__fail(err, GGFIT_ELIMIT, "%zu devices: ggfit plans for %d at most",
                               n, GGFIT_MAX_DEVICES);
        goto fail;
    }
    lp->model = llama_model_default_params();
    lp->context = llama_context_default_params();
    if ((rc = ggfit_llama_match_devices(devs, n, lp->devices, err)))
        goto fail;
    lp->n_devices = n;
    lp->devices[n] = NULL;
    lp->model.devices = lp->devices;   /* never NULL: none is the CPU alone */

    lp->model.n_gpu_layers = pr ? ggfit_projection_n_gpu_layers(pr) : ngl < 0 ? -1 : (int32_t)ngl;
    lp->model.split_mode = (enum llama_split_mode)ggfit_params_get(p, GGFIT_PARAM_SPLIT_MODE);
    lp->model.main_gpu = (int32_t)ggfit_params_get(p, GGFIT_PARAM_MAIN_GPU);
    lp->model.load_mode = ggfit_params_get(p, GGFIT_PARAM_USE_MMAP) ? LLAMA_LOAD_MODE_MMAP
                                                                    : LLAMA_LOAD_MODE_NONE;
    lp->model.use_extra_bufts = ggfit_params_get(p, GGFIT_PARAM_NO_REPACK) == 0;
    lp->model.no_host = ggfit_params_get(p, GGFIT_PARAM_NO_HOST) != 0;
    lp->model.load_mtp = ggfit_params_get(p, GGFIT_PARAM_LOAD_MTP) != 0;
    if ((rc = ggfit_llama__split(lp, p, err)) || (rc = ggfit_llama__overrides(lp, p, devs, err)))
        goto fail;
    ggfit_llama__context(&lp->context, p);
    *out = lp;
    return GGFIT_OK;
fail:
    ggfit_llama_params_free(lp);
    return rc;
}

#ifdef GGFIT_APP_H
/* A plan's (ggfit_app.h: ggfit_request_plan) flags on its devices: the
 * fitted ones, or the flags as given where the plan projected them
 * (-fitp on); GGFIT_EINVAL for a plan whose fit failed (there is nothing
 * to load: the message is the fit's reason). */
static inline ggfit_status ggfit_llama_apply_plan(const ggfit_plan *plan,
                                                  ggfit_llama_params **out, char **err)
{
    if (!plan->print_memory && plan->fit.status == GGFIT_FIT_FAILED) {
        *out = NULL;
        return ggfit_llama__fail(err, GGFIT_EINVAL, "the plan does not fit: %s", plan->fit.reason);
    }
    const ggfit_params *p = plan->print_memory ? &plan->asked : &plan->fit.params;
    return ggfit_llama_apply(p, &plan->projection, plan->devices, plan->n_devices, out, err);
}
#endif

#ifdef __cplusplus
}
#endif
#endif /* GGFIT_LLAMA_H */
