/*
 * handles.c - ggfit.h's handles over the structs the library fills:
 * llama.cpp's flags (ggfit_params), a projection and a fit result, each
 * made, read and set through functions, so that a program built against
 * ggfit.h never depends on their size or layout (ggfit_app.h defines them).
 * Also ggfit_app.h's heap constructors for a request and a plan.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* ---- llama.cpp's flags ---------------------------------------------------- */

ggfit_params *ggfit_params_new(void)
{
    ggfit_params *p = ggfit__malloc(sizeof *p);
    if (p)
        ggfit_params_init(p);
    return p;
}

ggfit_params *ggfit_params_dup(const ggfit_params *p)
{
    ggfit_params *d = p ? ggfit__malloc(sizeof *d) : NULL;
    if (d)
        memcpy(d, p, sizeof *d);
    return d;
}

void ggfit_params_free(ggfit_params *p)
{
    free(p);
}

/* The K and V cache types llama.cpp's -ctk and -ctv take (common/arg.cpp
 * kv_cache_types), as ggfit_params_parse_arg checks them. */
static bool cache_type(int64_t v)
{
    static const ggfit_type allowed[] = {
        GGFIT_TYPE_F32, GGFIT_TYPE_F16, GGFIT_TYPE_BF16, GGFIT_TYPE_Q8_0, GGFIT_TYPE_Q4_0,
        GGFIT_TYPE_Q4_1, GGFIT_TYPE_IQ4_NL, GGFIT_TYPE_Q5_0, GGFIT_TYPE_Q5_1,
    };
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (v == allowed[i])
            return true;
    return false;
}

static bool in(int64_t v, int64_t lo, int64_t hi)
{
    return v >= lo && v <= hi;
}

int64_t ggfit_params_get(const ggfit_params *p, ggfit_param key)
{
    if (!p)
        return 0;
    switch (key) {
    case GGFIT_PARAM_N_CTX: return p->n_ctx;
    case GGFIT_PARAM_N_BATCH: return p->n_batch;
    case GGFIT_PARAM_N_UBATCH: return p->n_ubatch;
    case GGFIT_PARAM_N_SEQ: return p->n_seq;
    case GGFIT_PARAM_KV_UNIFIED: return p->kv_unified;
    case GGFIT_PARAM_FLASH_ATTN: return p->flash_attn;
    case GGFIT_PARAM_TYPE_K: return p->type_k;
    case GGFIT_PARAM_TYPE_V: return p->type_v;
    case GGFIT_PARAM_SWA_FULL: return p->swa_full;
    case GGFIT_PARAM_N_GPU_LAYERS: return p->n_gpu_layers;
    case GGFIT_PARAM_SPLIT_MODE: return p->split_mode;
    case GGFIT_PARAM_MAIN_GPU: return p->main_gpu;
    case GGFIT_PARAM_CPU_MOE: return p->cpu_moe;
    case GGFIT_PARAM_N_CPU_MOE: return p->n_cpu_moe;
    case GGFIT_PARAM_NO_KV_OFFLOAD: return p->no_kv_offload;
    case GGFIT_PARAM_NO_REPACK: return p->no_repack;
    case GGFIT_PARAM_NO_HOST: return p->no_host;
    case GGFIT_PARAM_USE_MMAP: return p->use_mmap;
    case GGFIT_PARAM_CPU_FEATURES: return p->cpu_features;
    case GGFIT_PARAM_EMBEDDINGS: return p->embeddings;
    case GGFIT_PARAM_POOLING: return p->pooling;
    case GGFIT_PARAM_N_OUTPUTS_MAX: return p->n_outputs_max;
    case GGFIT_PARAM_CACHE_RAM_MIB: return p->cache_ram_mib;
    case GGFIT_PARAM_LOAD_MTP: return p->load_mtp;
    case GGFIT_PARAM_CTX_MTP: return p->ctx_mtp;
    case GGFIT_PARAM_N_RS_SEQ: return p->n_rs_seq;
    case GGFIT_PARAM_LLAMA_BUILD: return p->llama_build;
    case GGFIT_PARAM_COUNT: break;
    }
    return 0;
}

/* Whether v is a value the setting can take: the ranges
 * ggfit_params_parse_arg accepts for its flag. */
static bool valid(ggfit_param key, int64_t v)
{
    switch (key) {
    case GGFIT_PARAM_N_CTX: return in(v, 0, UINT32_MAX - 255); /* padded to 256 */
    case GGFIT_PARAM_N_BATCH:
    case GGFIT_PARAM_N_UBATCH: return in(v, 1, UINT32_MAX);
    case GGFIT_PARAM_N_SEQ: return in(v, 1, 256);    /* LLAMA_MAX_SEQ */
    case GGFIT_PARAM_FLASH_ATTN: return in(v, GGFIT_FA_AUTO, GGFIT_FA_ON);
    case GGFIT_PARAM_TYPE_K:
    case GGFIT_PARAM_TYPE_V: return cache_type(v);
    case GGFIT_PARAM_N_GPU_LAYERS: return in(v, GGFIT_NGL_ALL, INT32_MAX);
    case GGFIT_PARAM_SPLIT_MODE: return in(v, GGFIT_SPLIT_NONE, GGFIT_SPLIT_ROW);
    case GGFIT_PARAM_MAIN_GPU: return in(v, 0, GGFIT_MAX_DEVICES - 1);
    case GGFIT_PARAM_N_CPU_MOE:
    case GGFIT_PARAM_CPU_FEATURES:
    case GGFIT_PARAM_N_OUTPUTS_MAX:
    case GGFIT_PARAM_N_RS_SEQ:
    case GGFIT_PARAM_LLAMA_BUILD: return in(v, 0, UINT32_MAX);
    case GGFIT_PARAM_POOLING: return in(v, GGFIT_POOLING_UNSPECIFIED, GGFIT_POOLING_RANK);
    case GGFIT_PARAM_CACHE_RAM_MIB: return in(v, -1, INT32_MAX);
    case GGFIT_PARAM_KV_UNIFIED:
    case GGFIT_PARAM_SWA_FULL:
    case GGFIT_PARAM_CPU_MOE:
    case GGFIT_PARAM_NO_KV_OFFLOAD:
    case GGFIT_PARAM_NO_REPACK:
    case GGFIT_PARAM_NO_HOST:
    case GGFIT_PARAM_USE_MMAP:
    case GGFIT_PARAM_EMBEDDINGS:
    case GGFIT_PARAM_LOAD_MTP:
    case GGFIT_PARAM_CTX_MTP: return in(v, 0, 1);
    case GGFIT_PARAM_COUNT: break;
    }
    return false;
}

ggfit_status ggfit_params_set(ggfit_params *p, ggfit_param key, int64_t value)
{
    if (!p || !valid(key, value))
        return GGFIT_EINVAL;
    switch (key) {
    case GGFIT_PARAM_N_CTX: p->n_ctx = (uint32_t)value; p->set_n_ctx = true; break;
    case GGFIT_PARAM_N_BATCH: p->n_batch = (uint32_t)value; break;
    case GGFIT_PARAM_N_UBATCH: p->n_ubatch = (uint32_t)value; break;
    case GGFIT_PARAM_N_SEQ: p->n_seq = (uint32_t)value; p->set_n_seq = true; break;
    case GGFIT_PARAM_KV_UNIFIED: p->kv_unified = value; break;
    case GGFIT_PARAM_FLASH_ATTN: p->flash_attn = (int)value; break;
    case GGFIT_PARAM_TYPE_K: p->type_k = (uint32_t)value; break;
    case GGFIT_PARAM_TYPE_V: p->type_v = (uint32_t)value; break;
    case GGFIT_PARAM_SWA_FULL: p->swa_full = value; break;
    case GGFIT_PARAM_N_GPU_LAYERS:
        p->n_gpu_layers = (int32_t)value;
        p->set_n_gpu_layers = true;
        break;
    case GGFIT_PARAM_SPLIT_MODE: p->split_mode = (int)value; break;
    case GGFIT_PARAM_MAIN_GPU: p->main_gpu = (int32_t)value; break;
    case GGFIT_PARAM_CPU_MOE: p->cpu_moe = value; break;
    case GGFIT_PARAM_N_CPU_MOE: p->n_cpu_moe = (uint32_t)value; break;
    case GGFIT_PARAM_NO_KV_OFFLOAD: p->no_kv_offload = value; break;
    case GGFIT_PARAM_NO_REPACK: p->no_repack = value; break;
    case GGFIT_PARAM_NO_HOST: p->no_host = value; break;
    case GGFIT_PARAM_USE_MMAP: p->use_mmap = value; p->set_use_mmap = true; break;
    case GGFIT_PARAM_CPU_FEATURES: p->cpu_features = (uint32_t)value; break;
    case GGFIT_PARAM_EMBEDDINGS: p->embeddings = value; break;
    case GGFIT_PARAM_POOLING: p->pooling = (int)value; break;
    case GGFIT_PARAM_N_OUTPUTS_MAX: p->n_outputs_max = (uint32_t)value; break;
    case GGFIT_PARAM_CACHE_RAM_MIB: p->cache_ram_mib = (int32_t)value; break;
    case GGFIT_PARAM_LOAD_MTP: p->load_mtp = value; break;
    case GGFIT_PARAM_CTX_MTP: p->ctx_mtp = value; break;
    case GGFIT_PARAM_N_RS_SEQ: p->n_rs_seq = (uint32_t)value; break;
    case GGFIT_PARAM_LLAMA_BUILD: p->llama_build = (uint32_t)value; break;
    case GGFIT_PARAM_COUNT: break;
    }
    return GGFIT_OK;
}

ggfit_status ggfit_params_set_flag(ggfit_params *p, const char *flag, const char *value,
                                   char **err)
{
    if (err)
        *err = NULL;
    if (!p || !flag)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_params_set_flag: NULL argument");
    /* ggfit_params_parse_arg takes a command line's argv (char **): the
     * flag and its value copied into one */
    char *argv[3] = { ggfit__strndup(flag, strlen(flag)),
                      value ? ggfit__strndup(value, strlen(value)) : NULL, NULL };
    int argc = value ? 2 : 1, i = 0;
    ggfit_status rc;
    if (!argv[0] || (value && !argv[1]))
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    else if (!(rc = ggfit_params_parse_arg(p, argc, argv, &i, NULL, err)) && i < argc)
        rc = ggfit__fail(err, GGFIT_EINVAL, "%s takes no value, got '%s'", flag, value);
    free(argv[0]);
    free(argv[1]);
    return rc;
}

uint32_t ggfit_params_n_tensor_split(const ggfit_params *p)
{
    return p ? p->n_tensor_split : 0;
}

float ggfit_params_tensor_split(const ggfit_params *p, uint32_t i)
{
    return p && i < GGFIT_MAX_DEVICES ? p->tensor_split[i] : 0.0f;
}

uint32_t ggfit_params_n_overrides(const ggfit_params *p)
{
    return p ? p->n_overrides : 0;
}

bool ggfit_params_override(const ggfit_params *p, uint32_t i, const char **pattern,
                           const char **buffer)
{
    if (!p || i >= p->n_overrides)
        return false;
    if (pattern)
        *pattern = p->overrides[i].pattern;
    if (buffer)
        *buffer = p->overrides[i].buffer;
    return true;
}

/* ---- projections ----------------------------------------------------------- */

ggfit_projection *ggfit_projection_new(void)
{
    return ggfit__calloc(1, sizeof(ggfit_projection));
}

void ggfit_projection_free(ggfit_projection *pr)
{
    free(pr);
}

uint32_t ggfit_projection_n_ctx(const ggfit_projection *pr) { return pr->n_ctx; }
uint32_t ggfit_projection_n_ctx_seq(const ggfit_projection *pr) { return pr->n_ctx_seq; }
uint32_t ggfit_projection_n_batch(const ggfit_projection *pr) { return pr->n_batch; }
uint32_t ggfit_projection_n_ubatch(const ggfit_projection *pr) { return pr->n_ubatch; }
int32_t ggfit_projection_n_gpu_layers(const ggfit_projection *pr) { return pr->n_gpu_layers; }
bool ggfit_projection_flash_attn(const ggfit_projection *pr) { return pr->flash_attn; }
uint32_t ggfit_projection_n_devices(const ggfit_projection *pr) { return pr->n_devices; }
const ggfit_mem *ggfit_projection_host(const ggfit_projection *pr) { return &pr->host; }
const ggfit_mem *ggfit_projection_cpu_extra(const ggfit_projection *pr) { return &pr->cpu_extra; }
uint32_t ggfit_projection_n_bufts(const ggfit_projection *pr) { return pr->n_bufts; }
const char *ggfit_projection_warning(const ggfit_projection *pr) { return pr->warning; }

const ggfit_mem *ggfit_projection_device(const ggfit_projection *pr, uint32_t i,
                                         uint32_t *device)
{
    if (i >= pr->n_devices || i >= GGFIT_MAX_DEVICES)
        return NULL;
    if (device)
        *device = pr->device_of[i];
    return &pr->devices[i];
}

const ggfit_buft_mem *ggfit_projection_buft(const ggfit_projection *pr, uint32_t i)
{
    return i < pr->n_bufts && i < GGFIT_MAX_BUFTS ? &pr->bufts[i] : NULL;
}

/* ---- fit results ----------------------------------------------------------- */

ggfit_fit_result *ggfit_fit_result_new(void)
{
    return ggfit__calloc(1, sizeof(ggfit_fit_result));
}

void ggfit_fit_result_free(ggfit_fit_result *r)
{
    ggfit_fit_result_clear(r);
    free(r);
}

ggfit_fit_status ggfit_fit_result_status(const ggfit_fit_result *r) { return r->status; }
const ggfit_params *ggfit_fit_result_params(const ggfit_fit_result *r) { return &r->params; }
const char *ggfit_fit_result_reason(const ggfit_fit_result *r) { return r->reason; }
const char *ggfit_fit_result_log(const ggfit_fit_result *r) { return r->log; }
uint32_t ggfit_fit_result_n_projections(const ggfit_fit_result *r) { return r->n_projections; }

const ggfit_projection *ggfit_fit_result_projection(const ggfit_fit_result *r)
{
    return &r->projection;
}

/* ---- ggfit_app.h: a request and a plan on the heap -------------------------- */

ggfit_request *ggfit_request_new(void)
{
    ggfit_request *r = ggfit__malloc(sizeof *r);
    if (r)
        ggfit_request_init(r);
    return r;
}

void ggfit_request_free(ggfit_request *r)
{
    free(r);
}

ggfit_plan *ggfit_plan_new(void)
{
    /* zero: ggfit_plan_destroy frees nothing of a plan never planned */
    return ggfit__calloc(1, sizeof(ggfit_plan));
}

void ggfit_plan_destroy(ggfit_plan *plan)
{
    ggfit_plan_free(plan);
    free(plan);
}
