/*
 * params.c - llama.cpp's flags (common/arg.cpp names and defaults) and the
 * --gpu device descriptions.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "devices/catalog.h"

static const char *const backend_names[GGFIT_BACKEND_COUNT] = {
    "cpu", "cuda", "rocm", "vulkan", "metal", "rpc",
};

/* How llama.cpp names the devices of each backend: CUDA0, ROCm0, ... */
static const char *const device_prefix[GGFIT_BACKEND_COUNT] = {
    "CPU", "CUDA", "ROCm", "Vulkan", "Metal", "RPC",
};

const char *ggfit_backend_name(int backend)
{
    return backend >= 0 && backend < GGFIT_BACKEND_COUNT ? backend_names[backend] : NULL;
}

void ggfit_params_init(ggfit_params *p)
{
    memset(p, 0, sizeof *p);
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
}

/* ---- sizes and devices ------------------------------------------------------ */

ggfit_status ggfit_size_parse(const char *s, uint64_t *bytes)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || !isfinite(v))
        return GGFIT_EINVAL;
    static const struct { const char *unit; double mul; } units[] = {
        { "", 1048576.0 }, { "B", 1.0 },
        { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
        { "TiB", 1099511627776.0 },
        { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 },
        { "K", 1024.0 }, { "M", 1048576.0 }, { "G", 1073741824.0 }, { "T", 1099511627776.0 },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcasecmp(end, units[i].unit) == 0 &&
            (strcmp(units[i].unit, "B") || strcmp(end, "B") == 0)) {
            double b = v * units[i].mul;
            if (b >= 18446744073709551615.0)
                return GGFIT_EINVAL;
            *bytes = (uint64_t)(b + 0.5);
            return GGFIT_OK;
        }
    return GGFIT_EINVAL;
}

ggfit_status ggfit_devices_parse(const char *spec, ggfit_device *out, size_t max, size_t *n,
                                 char **err)
{
    unsigned count[GGFIT_BACKEND_COUNT] = {0};
    *n = 0;
    if (strcmp(spec, "none") == 0 || strcmp(spec, "") == 0)
        return GGFIT_OK;
    const char *p = spec;
    while (*p) {
        char item[128];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof item)
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: bad device '%.*s'", (int)len, p);
        memcpy(item, p, len);
        item[len] = '\0';
        p += len + (p[len] == ',');
        if (*n >= max)
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: more than %zu devices", max);
        ggfit_device *d = &out[*n];
        memset(d, 0, sizeof *d);
        d->kind = GGFIT_BACKEND_CUDA;
        char *size = item, *colon = strchr(item, ':');
        bool kind_given = colon != NULL;
        if (colon) {
            *colon = '\0';
            int k;
            for (k = 1; k < GGFIT_BACKEND_COUNT; k++)
                if (strcasecmp(item, backend_names[k]) == 0)
                    break;
            if (k == GGFIT_BACKEND_COUNT)
                return ggfit__fail(err, GGFIT_EINVAL,
                                   "--gpu: unknown kind '%s' (cuda, rocm, vulkan, metal, rpc)",
                                   item);
            d->kind = (ggfit_backend)k;
            size = colon + 1;
        }
        char *slash = strchr(size, '/');
        if (slash)
            *slash = '\0';
        if (isalpha((unsigned char)size[0])) {  /* a catalog id: rtx-3090, m3-pro-18gb */
            const ggfit_catalog_entry *c = ggfit_catalog_find(size);
            if (!c) {
                char near[160];
                if (ggfit__catalog_suggest(size, near, sizeof near))
                    return ggfit__fail(err, GGFIT_EINVAL,
                                       "--gpu: unknown device '%s'; did you mean %s?", size,
                                       near);
                return ggfit__fail(err, GGFIT_EINVAL,
                                   "--gpu: unknown device '%s' (a size such as 24GiB, or an "
                                   "id from data/gpus.tsv such as rtx-3090, m3-pro-18gb)",
                                   size);
            }
            if (!kind_given)
                d->kind = c->kind;
            d->total = c->memory;
            snprintf(d->description, sizeof d->description, "%s", c->name);
            d->bandwidth_gbs = c->bandwidth_gbs;
            d->unified = c->system_memory != 0;
        } else if (ggfit_size_parse(size, &d->total) != GGFIT_OK)
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: bad size '%s' (e.g. 24GiB, 24077MiB)",
                               size);
        d->free = d->total;
        if (slash && (ggfit_size_parse(slash + 1, &d->free) != GGFIT_OK || d->free > d->total))
            return ggfit__fail(err, GGFIT_EINVAL,
                               "--gpu: bad free size '%s' (TOTAL/FREE, FREE <= TOTAL)", slash + 1);
        unsigned idx = count[d->kind]++;
        if (d->kind == GGFIT_BACKEND_METAL && idx == 0)
            snprintf(d->name, sizeof d->name, "Metal");
        else
            snprintf(d->name, sizeof d->name, "%s%u", device_prefix[d->kind], idx);
        (*n)++;
    }
    return GGFIT_OK;
}

/* ---- llama.cpp flags ------------------------------------------------------- */

static bool is(const char *a, const char *s1, const char *s2, const char *s3)
{
    return !strcmp(a, s1) || (s2 && !strcmp(a, s2)) || (s3 && !strcmp(a, s3));
}

static ggfit_status parse_u32(const char *flag, const char *v, uint32_t *out, char **err)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno || x < 0 || x > UINT32_MAX)
        return ggfit__fail(err, GGFIT_EINVAL, "%s: expected a non-negative integer, got '%s'",
                           flag, v);
    *out = (uint32_t)x;
    return GGFIT_OK;
}

static ggfit_status parse_cache_type(const char *flag, const char *v, uint32_t *out,
                                     char **err)
{
    static const char *const allowed[] = { "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1",
                                           "iq4_nl", "q5_0", "q5_1" };
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (strcasecmp(v, allowed[i]) == 0) {
            *out = (uint32_t)ggfit_type_from_name(allowed[i]);
            return GGFIT_OK;
        }
    return ggfit__fail(err, GGFIT_EINVAL,
                       "%s: unsupported cache type '%s' (f32, f16, bf16, q8_0, q4_0, q4_1, "
                       "iq4_nl, q5_0, q5_1)", flag, v);
}

static ggfit_status add_overrides(ggfit_params *p, const char *flag, const char *v, char **err)
{
    /* A comma list of PATTERN=BUFFER; the pattern is everything before the
     * last '=' of each item, as llama.cpp splits it. */
    const char *s = v;
    while (*s) {
        size_t len = strcspn(s, ",");
        const char *eq = NULL;
        for (size_t k = 0; k < len; k++)
            if (s[k] == '=')
                eq = s + k;
        if (!eq || eq == s || (size_t)(eq - s) >= sizeof p->overrides[0].pattern ||
            (size_t)(s + len - eq - 1) >= sizeof p->overrides[0].buffer || eq + 1 == s + len)
            return ggfit__fail(err, GGFIT_EINVAL, "%s: expected PATTERN=BUFFER, got '%.*s'",
                               flag, (int)len, s);
        if (p->n_overrides >= GGFIT_MAX_OVERRIDES)
            return ggfit__fail(err, GGFIT_EINVAL, "%s: more than %d overrides", flag,
                               GGFIT_MAX_OVERRIDES);
        ggfit_override *o = &p->overrides[p->n_overrides++];
        snprintf(o->pattern, sizeof o->pattern, "%.*s", (int)(eq - s), s);
        snprintf(o->buffer, sizeof o->buffer, "%.*s", (int)(s + len - eq - 1), eq + 1);
        s += len + (s[len] == ',');
    }
    p->set_overrides = true;
    return GGFIT_OK;
}

ggfit_status ggfit_params_parse_arg(ggfit_params *p, int argc, char **argv, int *i, bool *used,
                                    char **err)
{
    const char *a = argv[*i];
    if (used)
        *used = true;
    /* Flags without a value. */
    if (is(a, "-kvu", "--kv-unified", NULL)) {
        p->kv_unified = true;
    } else if (is(a, "--swa-full", NULL, NULL)) {
        p->swa_full = true;
    } else if (is(a, "-cmoe", "--cpu-moe", NULL)) {
        p->cpu_moe = true;
        p->set_overrides = true;
    } else if (is(a, "-nkvo", "--no-kv-offload", NULL)) {
        p->no_kv_offload = true;
    } else if (is(a, "-nr", "--no-repack", NULL)) {
        p->no_repack = true;
    } else if (is(a, "--no-host", NULL, NULL)) {
        p->no_host = true;
    } else if (is(a, "--mmap", NULL, NULL)) {
        p->use_mmap = true;
    } else if (is(a, "--no-mmap", NULL, NULL)) {
        p->use_mmap = false;
    } else {
        static const char *const with_value[] = {
            "-c", "--ctx-size", "-b", "--batch-size", "-ub", "--ubatch-size", "-np",
            "--parallel", "-fa", "--flash-attn", "-ctk", "--cache-type-k", "-ctv",
            "--cache-type-v", "-ngl", "--gpu-layers", "--n-gpu-layers", "-ts",
            "--tensor-split", "-sm", "--split-mode", "-mg", "--main-gpu", "-ot",
            "--override-tensor", "-ncmoe", "--n-cpu-moe",
        };
        bool known = false;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
            known |= !strcmp(a, with_value[k]);
        if (!known && !used)
            return ggfit__fail(err, GGFIT_EINVAL, "unknown argument '%s'", a);
        if (!known) {
            *used = false;   /* not a llama.cpp flag; the caller may know it */
            return GGFIT_OK;
        }
        if (*i + 1 >= argc)
            return ggfit__fail(err, GGFIT_EINVAL, "%s needs a value", a);
        const char *v = argv[++*i];
        ggfit_status rc = GGFIT_OK;
        if (is(a, "-c", "--ctx-size", NULL)) {
            rc = parse_u32(a, v, &p->n_ctx, err);
            p->set_n_ctx = true;
        } else if (is(a, "-b", "--batch-size", NULL)) {
            rc = parse_u32(a, v, &p->n_batch, err);
        } else if (is(a, "-ub", "--ubatch-size", NULL)) {
            rc = parse_u32(a, v, &p->n_ubatch, err);
        } else if (is(a, "-np", "--parallel", NULL)) {
            rc = parse_u32(a, v, &p->n_seq, err);
            if (!rc && p->n_seq == 0)
                rc = ggfit__fail(err, GGFIT_EINVAL, "%s: at least 1 sequence", a);
        } else if (is(a, "-fa", "--flash-attn", NULL)) {
            if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "enabled"))
                p->flash_attn = GGFIT_FA_ON;
            else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "disabled"))
                p->flash_attn = GGFIT_FA_OFF;
            else if (!strcmp(v, "auto") || !strcmp(v, "-1"))
                p->flash_attn = GGFIT_FA_AUTO;
            else
                rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected on, off or auto, got '%s'", a, v);
        } else if (is(a, "-ctk", "--cache-type-k", NULL)) {
            rc = parse_cache_type(a, v, &p->type_k, err);
        } else if (is(a, "-ctv", "--cache-type-v", NULL)) {
            rc = parse_cache_type(a, v, &p->type_v, err);
        } else if (is(a, "-ngl", "--gpu-layers", "--n-gpu-layers")) {
            uint32_t n;
            if (!strcmp(v, "auto") || !strcmp(v, "-1"))
                p->n_gpu_layers = GGFIT_NGL_AUTO;
            else if (!strcmp(v, "all") || !strcmp(v, "-2"))
                p->n_gpu_layers = GGFIT_NGL_ALL;
            else if (!(rc = parse_u32(a, v, &n, err)))
                p->n_gpu_layers = n > INT32_MAX ? INT32_MAX : (int32_t)n;
            p->set_n_gpu_layers = true;
        } else if (is(a, "-ts", "--tensor-split", NULL)) {
            const char *s = v;
            size_t k = 0;
            memset(p->tensor_split, 0, sizeof p->tensor_split);
            while (*s && !rc) {
                char *end;
                double x = strtod(s, &end);
                if (end == s || x < 0 || (*end && *end != ',' && *end != '/') ||
                    k >= GGFIT_MAX_DEVICES)
                    rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected proportions like 3,1, got '%s'",
                                     a, v);
                else
                    p->tensor_split[k++] = (float)x;
                s = *end ? end + 1 : end;
            }
            p->set_tensor_split = true;
        } else if (is(a, "-sm", "--split-mode", NULL)) {
            if (!strcmp(v, "none"))
                p->split_mode = GGFIT_SPLIT_NONE;
            else if (!strcmp(v, "layer"))
                p->split_mode = GGFIT_SPLIT_LAYER;
            else if (!strcmp(v, "row"))
                p->split_mode = GGFIT_SPLIT_ROW;
            else
                rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected none, layer or row, got '%s'", a, v);
        } else if (is(a, "-mg", "--main-gpu", NULL)) {
            uint32_t n;
            if (!(rc = parse_u32(a, v, &n, err)))
                p->main_gpu = (int32_t)(n > INT32_MAX ? INT32_MAX : n);
        } else if (is(a, "-ot", "--override-tensor", NULL)) {
            rc = add_overrides(p, a, v, err);
        } else if (is(a, "-ncmoe", "--n-cpu-moe", NULL)) {
            rc = parse_u32(a, v, &p->n_cpu_moe, err);
            p->set_overrides = true;
        }
        if (rc)
            return rc;
    }
    (*i)++;
    return GGFIT_OK;
}
