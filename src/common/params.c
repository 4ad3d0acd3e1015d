/*
 * params.c - llama.cpp's flags (common/arg.cpp names and defaults).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "common/args.h"
#include "common/params.h"

/* ---- llama.cpp flags: where each lands (common/args.c parses them) ------ */

/* A count up to max: digits alone; past max "too large", not "expected
 * an integer" (-c 99999999999). */
static ggfit_status parse_count(const char *flag, const char *v, uint32_t max, uint32_t *out,
                                char **err)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < 0 || (errno && errno != ERANGE))
        return ggfit__fail(err, GGFIT_EINVAL, "%s: expected a non-negative integer, got "
                           "'%.*s%s'", flag, GGFIT__CLIP(v));
    if (errno == ERANGE || (unsigned long long)x > max)
        return ggfit__fail(err, GGFIT_EINVAL, "%s: %.*s%s is too large (at most %u)", flag,
                           GGFIT__CLIP(v), max);
    *out = (uint32_t)x;
    return GGFIT_OK;
}

static ggfit_status parse_u32(const char *flag, const char *v, uint32_t *out, char **err)
{
    return parse_count(flag, v, UINT32_MAX, out, err);
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
                       "%s: unsupported cache type '%.*s%s' (f32, f16, bf16, q8_0, q4_0, q4_1, "
                       "iq4_nl, q5_0, q5_1)", flag, GGFIT__CLIP(v));
}

static ggfit_status add_overrides(ggfit_params *p, const char *flag, const char *v, char **err)
{
    /* A comma list of PATTERN=BUFFER; the pattern is everything before the
     * last '=' of each item, as llama.cpp splits it. */
    const char *s = v;
    size_t vl = strlen(v);
    if (vl == 0 || v[vl - 1] == ',')
        return ggfit__fail(err, GGFIT_EINVAL, "%s: expected PATTERN=BUFFER[,...], got '%.*s%s'%s",
                           flag, GGFIT__CLIP(v), vl ? " (a trailing comma)" : "");
    while (*s) {
        size_t len = strcspn(s, ",");
        const char *eq = NULL;
        for (size_t k = 0; k < len; k++)
            if (s[k] == '=')
                eq = s + k;
        if (!eq || eq == s || (size_t)(eq - s) >= sizeof p->overrides[0].pattern ||
            (size_t)(s + len - eq - 1) >= sizeof p->overrides[0].buffer || eq + 1 == s + len)
            return ggfit__fail(err, GGFIT_EINVAL, "%s: expected PATTERN=BUFFER, got '%.*s%s'",
                               flag, (int)(len > 40 ? 40 : len), s, len > 40 ? "..." : "");
        if (p->n_overrides >= GGFIT_MAX_OVERRIDES)
            return ggfit__fail(err, GGFIT_EINVAL, "%s: more than %d overrides", flag,
                               GGFIT_MAX_OVERRIDES);
        ggfit_override *o = &p->overrides[p->n_overrides++];
        *o = (ggfit_override){ 0 };   /* whole: the entries past n are not zeroed */
        snprintf(o->pattern, sizeof o->pattern, "%.*s", (int)(eq - s), s);
        snprintf(o->buffer, sizeof o->buffer, "%.*s", (int)(s + len - eq - 1), eq + 1);
        s += len + (s[len] == ',');
    }
    p->set_overrides = true;
    return GGFIT_OK;
}

ggfit_status ggfit__params_set(ggfit_params *p, ggfit__flag_at at, const char *a, bool on,
                              const char *v, char **err)
{
    ggfit_status rc = GGFIT_OK;
    switch (at) {
    case GGFIT__AT_KV_UNIFIED:
        p->kv_unified = on;
        break;
    case GGFIT__AT_KV_OFFLOAD:
        p->no_kv_offload = !on;
        break;
    case GGFIT__AT_REPACK:
        p->no_repack = !on;
        break;
    case GGFIT__AT_SWA_FULL:
        p->swa_full = true;
        break;
    case GGFIT__AT_CPU_MOE:
        p->cpu_moe = true;
        p->set_overrides = true;
        break;
    case GGFIT__AT_NO_HOST:
        p->no_host = true;
        break;
    case GGFIT__AT_MMAP:
        p->use_mmap = on;
        p->set_use_mmap = true;   /* MMAP or NONE: not auto */
        break;
    case GGFIT__AT_EMBEDDINGS:
        p->embeddings = true;
        break;
    case GGFIT__AT_RERANK:
        p->embeddings = true;   /* as llama.cpp's --rerank: both */
        p->pooling = GGFIT_POOLING_RANK;
        break;
    case GGFIT__AT_CTX:
        /* llama.cpp pads the context to 256 cells in a uint32_t */
        rc = parse_count(a, v, UINT32_MAX - 255, &p->n_ctx, err);
        p->set_n_ctx = true;
        break;
    case GGFIT__AT_BATCH:
    case GGFIT__AT_UBATCH: {
        uint32_t *n = at == GGFIT__AT_BATCH ? &p->n_batch : &p->n_ubatch;
        rc = parse_u32(a, v, n, err);
        if (!rc && *n == 0)
            rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected at least 1 token, got '%s'",
                             a, v);
        break;
    }
    case GGFIT__AT_THREADS:
        /* llama.cpp: 0 or less is one thread per CPU (its default) */
        if (v[0] == '-' && v[1] && strspn(v + 1, "0123456789") == strlen(v + 1))
            p->n_threads = 0;
        else
            rc = parse_count(a, v, 4096, &p->n_threads, err);
        break;
    case GGFIT__AT_PARALLEL:
        if (!strcmp(v, "-1")) {
            /* llama-server's auto (its default): 4 slots and -kvu there
             * (ggfit_params_server); elsewhere the default, 1 */
            p->n_seq = 1;
            p->set_n_seq = false;
            break;
        }
        /* digits past 256 (however many) are out of range, not "no integer" */
        if (v[0] && strspn(v, "0123456789") == strlen(v) && strlen(v) > 3)
            p->n_seq = 0;
        else
            rc = parse_u32(a, v, &p->n_seq, err);
        p->set_n_seq = !rc;
        /* LLAMA_MAX_SEQ (src/llama-cparams.h) */
        if (!rc && (p->n_seq == 0 || p->n_seq > 256))
            rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected 1 to 256 sequences (llama.cpp's "
                             "LLAMA_MAX_SEQ), got '%.*s%s'", a, GGFIT__CLIP(v));
        break;
    case GGFIT__AT_FLASH_ATTN:
        if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "enabled"))
            p->flash_attn = GGFIT_FA_ON;
        else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "disabled"))
            p->flash_attn = GGFIT_FA_OFF;
        else if (!strcmp(v, "auto") || !strcmp(v, "-1"))
            p->flash_attn = GGFIT_FA_AUTO;
        else
            rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected on, off or auto, got '%.*s%s'", a, GGFIT__CLIP(v));
        break;
    case GGFIT__AT_TYPE_K:
        rc = parse_cache_type(a, v, &p->type_k, err);
        break;
    case GGFIT__AT_TYPE_V:
        rc = parse_cache_type(a, v, &p->type_v, err);
        break;
    case GGFIT__AT_NGL: {
        uint32_t n;
        if (!strcmp(v, "auto") || !strcmp(v, "-1"))
            p->n_gpu_layers = GGFIT_NGL_AUTO;
        else if (!strcmp(v, "all") || !strcmp(v, "-2"))
            p->n_gpu_layers = GGFIT_NGL_ALL;
        else if (!(rc = parse_u32(a, v, &n, err)))
            p->n_gpu_layers = n > INT32_MAX ? INT32_MAX : (int32_t)n;
        p->set_n_gpu_layers = true;
        break;
    }
    case GGFIT__AT_TENSOR_SPLIT: {
        const char *s = v;
        size_t k = 0;
        memset(p->tensor_split, 0, sizeof p->tensor_split);
        while (*s && !rc) {
            char *end;
            double x = strtod(s, &end);
            if (end == s || !isfinite(x) || x < 0 || x > 1e9 ||
                (*end && *end != ',' && *end != '/') || (*end && !end[1]) ||
                k >= GGFIT_MAX_DEVICES)
                rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected proportions like 3,1 "
                                 "(finite, not negative), got '%.*s%s'", a, GGFIT__CLIP(v));
            else
                p->tensor_split[k++] = (float)x;
            s = *end ? end + 1 : end;
        }
        if (!rc && k == 0)
            rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected proportions like 3,1, got ''",
                             a);
        p->n_tensor_split = (uint32_t)k;
        p->set_tensor_split = true;
        break;
    }
    case GGFIT__AT_SPLIT_MODE:
        if (!strcmp(v, "none"))
            p->split_mode = GGFIT_SPLIT_NONE;
        else if (!strcmp(v, "layer"))
            p->split_mode = GGFIT_SPLIT_LAYER;
        else if (!strcmp(v, "row"))
            p->split_mode = GGFIT_SPLIT_ROW;
        else
            rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected none, layer or row, got '%.*s%s'", a, GGFIT__CLIP(v));
        break;
    case GGFIT__AT_MAIN_GPU: {
        uint32_t n;
        if (!(rc = parse_u32(a, v, &n, err)))
            p->main_gpu = (int32_t)(n > INT32_MAX ? INT32_MAX : n);
        break;
    }
    case GGFIT__AT_OVERRIDE_TENSOR:
        rc = add_overrides(p, a, v, err);
        break;
    case GGFIT__AT_N_CPU_MOE:
        rc = parse_u32(a, v, &p->n_cpu_moe, err);
        p->set_overrides = true;
        break;
    case GGFIT__AT_POOLING: {
        static const char *const names[] = { "none", "mean", "cls", "last", "rank" };
        int k = 0;
        while (k < 5 && strcmp(v, names[k]))
            k++;
        if (k == 5)
            rc = ggfit__fail(err, GGFIT_EINVAL,
                             "%s: expected none, mean, cls, last or rank, got '%.*s%s'", a, GGFIT__CLIP(v));
        else
            p->pooling = GGFIT_POOLING_NONE + k;
        break;
    }
    default:
        break;
    }
    return rc;
}
