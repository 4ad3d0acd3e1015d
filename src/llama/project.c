/*
 * project.c - what llama.cpp allocates for a model with given flags, per
 * buffer type: weights ("model"), KV cache and recurrent state ("context"),
 * compute buffers ("compute"). The rules are llama.cpp's (see
 * shared/LLAMA_MEMORY.md for the file and function each comes from):
 *  - layers go to devices from the end: the output layer first, then blocks
 *    from the last (llama_model::load_tensors);
 *  - a weight's buffer type is the first in its layer's list that supports
 *    the op the weight is used in (select_weight_buft);
 *  - every tensor is padded to its buffer's alignment (ggml-alloc);
 *  - KV cells, SWA windows, MLA and recurrent state per llama_kv_cache,
 *    llama_kv_cache_iswa and llama_memory_recurrent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "llama/build.h"
#include "ggml/sched.h"
#include "base/base.h"
#include "llama/arch.h"
#include "llama/model.h"
#include "llama/project.h"

/* The ops llama.cpp probes a weight with, as far as placement cares. */
typedef enum weight_op {
    OP_MUL_MAT,      /* 2-D matrix product: may be repacked */
    OP_MUL_MAT_ID,   /* 3-D expert product: may be repacked */
    OP_GET_ROWS,     /* embeddings: never repacked */
    OP_ROPE,         /* rope factors: duplicated per buffer type */
    OP_OTHER,        /* norms, biases, convolutions */
} weight_op;

typedef struct proj {
    const ggfit_model *m;
    const ggfit_hparams *hp;
    const ggfit_params *p;
    const ggfit_arch *arch;
    const ggfit_device *devs[GGFIT_MAX_DEVICES];   /* the model's devices */
    uint32_t n_dev;
    float cum[GGFIT_MAX_DEVICES];                  /* cumulative split */
    uint32_t i_gpu_start, act;
    int dev_buft[GGFIT_MAX_DEVICES];
    int cpu_buft, repack_buft, host_buft;          /* -1 until used / none */
    struct rule {
        pcre2_code *re;        /* a general pattern, or NULL for a block rule */
        int32_t layer;         /* block rule: its block; -1 any; -2 below -ncmoe */
        uint8_t kind;          /* block rule: which FFN tensors (ffn_kind) */
        int target;            /* device, or -1 for the CPU */
    } rules[GGFIT_MAX_OVERRIDES + 2];
    uint32_t n_rules;
    pcre2_match_data *md;
    int32_t tied_buft;                             /* the tied output copy, -1 */
    bool fa_mismatch;                              /* FA probe: a node left its layer */
    struct ggfit__gcache *cache;                   /* a fit's graph, or NULL */
    uint32_t period;                               /* SWA period in force */
    bool swa;
    uint64_t size_swa;
    ggfit_projection *out;
    char **err;
} proj;

static const char *path_of(const proj *pr)
{
    return ggfit_gguf_shard_path(ggfit_model_gguf(pr->m), 0);
}

/* ---- buffer types ------------------------------------------------------- */

static uint32_t buft_alignment(const proj *pr, int b)
{
    int32_t d = pr->out->bufts[b].device;
    if (d < 0 || pr->out->bufts[b].is_host)
        return 32;
    switch (pr->devs[d]->kind) {
    case GGFIT_BACKEND_CUDA:
    case GGFIT_BACKEND_ROCM:
        return 128;
    case GGFIT_BACKEND_VULKAN:
        return 64;   /* minStorageBufferOffsetAlignment; 64 covers common GPUs */
    default:
        return 32;   /* Metal, and RPC servers backed by the CPU */
    }
}

/* Bytes a tensor takes in buffer type b: the backend's alloc size, padded. */
static uint64_t alloc_bytes(const proj *pr, int b, const ggfit_tensor_info *t)
{
    uint64_t n = t->n_bytes;
    int32_t d = pr->out->bufts[b].device;
    if (d >= 0 && !pr->out->bufts[b].is_host &&
        (pr->devs[d]->kind == GGFIT_BACKEND_CUDA || pr->devs[d]->kind == GGFIT_BACKEND_ROCM) &&
        ggfit_type_is_quantized(t->type) && t->ne[0] % 512 != 0)
        /* CUDA pads quantized rows to 512 so its kernels can read whole
         * blocks past the end (ggml_backend_cuda_buffer_type_get_alloc_size). */
        n += ggfit_row_bytes(t->type, 512 - (uint64_t)t->ne[0] % 512);
    uint32_t a = buft_alignment(pr, b);
    return GGFIT_PAD(n, a);
}

static int buft_add(proj *pr, const char *name, int32_t device, bool is_host)
{
    ggfit_projection *o = pr->out;
    ggfit_buft_mem *b = &o->bufts[o->n_bufts];
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    b->device = device;
    b->is_host = is_host;
    return (int)o->n_bufts++;
}

static int cpu_buft(proj *pr)
{
    if (pr->cpu_buft < 0)
        pr->cpu_buft = buft_add(pr, "CPU", -1, true);
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
static int select_cpu(proj *pr, const ggfit_tensor_info *t, weight_op op)
{
    if (pr->host_buft >= 0)
        return pr->host_buft;
    if (repackable(pr, t, op)) {
        if (pr->repack_buft < 0)
            pr->repack_buft = buft_add(pr, "CPU_REPACK", -1, false);
        return pr->repack_buft;
    }
    return cpu_buft(pr);
}

static int device_buft(proj *pr, int d)
{
    if (pr->dev_buft[d] < 0)
        pr->dev_buft[d] = buft_add(pr, pr->devs[d]->name, d, false);
    return pr->dev_buft[d];
}

/* ---- layers and devices ----------------------------------------------- */

/* Device of layer il (il == n_layer: the output layer), -1 for the CPU. */
static int dev_layer(const proj *pr, uint32_t il)
{
    if (il < pr->i_gpu_start || il - pr->i_gpu_start >= pr->act)
        return -1;
    float x = (float)(il - pr->i_gpu_start) / (float)pr->act;
    for (uint32_t d = 0; d < pr->n_dev; d++)
        if (x < pr->cum[d])
            return (int)d;
    return (int)pr->n_dev - 1;
}

static int setup_devices(proj *pr, const ggfit_device *devs, size_t n)
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
    /* CUDA, ROCm and Vulkan have a pinned host buffer type that heads the
     * CPU list; fit-print loads without mmap, so it is kept. */
    if (pr->n_dev && !p->no_host) {
        static const char *const host_name[GGFIT_BACKEND_COUNT] = {
            [GGFIT_BACKEND_CUDA] = "CUDA_Host", [GGFIT_BACKEND_ROCM] = "ROCm_Host",
            [GGFIT_BACKEND_VULKAN] = "Vulkan_Host",
        };
        for (uint32_t d = 0; d < pr->n_dev; d++)
            if (host_name[pr->devs[d]->kind]) {
                pr->host_buft = buft_add(pr, host_name[pr->devs[d]->kind], -1, true);
                break;
            }
    }
    return GGFIT_OK;
}

/* ---- overrides (-ot, -cmoe, -ncmoe) -------------------------------------- */

/* The FFN tensors the overrides llama.cpp's fit writes select, after the
 * block prefix "blk.N.": "ffn_(gate|up|gate_up|down).*" (all but attention),
 * "ffn_(gate|gate_up|down).*" (all but up), "ffn_down.*", and the experts
 * "ffn_(up|down|gate_up|gate)_(ch|)exps". */
enum ffn_kind { FFN_ALL, FFN_NOT_UP, FFN_DOWN, FFN_EXPERTS, FFN_KIND_COUNT };

static const char *const ffn_tail[FFN_KIND_COUNT] = {
    "ffn_(gate|up|gate_up|down).*", "ffn_(gate|gate_up|down).*", "ffn_down.*",
    "ffn_(up|down|gate_up|gate)_(ch|)exps",
};

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Recognises "blk\.N\.<tail>" and "blk\.\d+\.<tail>" with one of the tails
 * above: the patterns of llama.cpp's fit, -cmoe and -ncmoe, matched without
 * a regex engine (they select exactly the same tensors). */
static bool block_rule(const char *pattern, int32_t *layer, uint8_t *kind)
{
    const char *p;
    if (!starts_with(pattern, "blk\\."))
        return false;
    p = pattern + 5;
    if (starts_with(p, "\\d+")) {
        *layer = -1;
        p += 3;
    } else {
        long n = 0;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9' && n < 1000000)
            n = n * 10 + (*p++ - '0');
        *layer = (int32_t)n;
    }
    if (!starts_with(p, "\\."))
        return false;
    p += 2;
    for (uint8_t k = 0; k < FFN_KIND_COUNT; k++)
        if (strcmp(p, ffn_tail[k]) == 0) {
            *kind = k;
            return true;
        }
    return false;
}

static int add_rule(proj *pr, const char *pattern, int target)
{
    struct rule *r = &pr->rules[pr->n_rules];
    memset(r, 0, sizeof *r);
    r->target = target;
    if (block_rule(pattern, &r->layer, &r->kind)) {
        pr->n_rules++;
        return GGFIT_OK;
    }
    int code;
    PCRE2_SIZE off;
    /* ECMAScript's \u escapes and unset back references, as std::regex. */
    r->re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                          PCRE2_ALT_BSUX | PCRE2_MATCH_UNSET_BACKREF, &code, &off, NULL);
    if (!r->re) {
        char msg[160];
        pcre2_get_error_message(code, (PCRE2_UCHAR *)msg, sizeof msg);
        return ggfit__fail(pr->err, GGFIT_EINVAL, "-ot pattern '%s': %s at %zu", pattern, msg,
                           (size_t)off);
    }
    pr->n_rules++;
    if (!pr->md && !(pr->md = pcre2_match_data_create(8, NULL)))
        return ggfit__fail(pr->err, GGFIT_ENOMEM, "out of memory");
    return GGFIT_OK;
}

static int setup_overrides(proj *pr)
{
    const ggfit_params *p = pr->p;
    int rc;
    for (uint32_t i = 0; i < p->n_overrides; i++) {
        const char *buf = p->overrides[i].buffer;
        int target = -2;
        if (strcmp(buf, "CPU") == 0)
            target = -1;
        for (uint32_t d = 0; d < pr->n_dev && target == -2; d++) {
            size_t len = strlen(pr->devs[d]->name);
            /* "RPC0[host:port]" names the device "RPC0" too. */
            if (strcmp(buf, pr->devs[d]->name) == 0 ||
                (strncmp(buf, pr->devs[d]->name, len) == 0 && buf[len] == '['))
                target = (int)d;
        }
        if (target == -2)
            return ggfit__fail(pr->err, GGFIT_EINVAL,
                               "-ot %s=%s: unknown buffer type '%s' (CPU or a device name)",
                               p->overrides[i].pattern, buf, buf);
        if ((rc = add_rule(pr, p->overrides[i].pattern, target)))
            return rc;
    }
    /* -cmoe: "\.ffn_(up|down|gate|gate_up)_(ch|)exps", every block's experts. */
    if (p->cpu_moe)
        pr->rules[pr->n_rules++] = (struct rule){ .layer = -1, .kind = FFN_EXPERTS, .target = -1 };
    /* -ncmoe N: one such pattern per block below N. */
    if (p->n_cpu_moe)
        pr->rules[pr->n_rules++] = (struct rule){ .layer = -2, .kind = FFN_EXPERTS, .target = -1 };
    return GGFIT_OK;
}

/* The part of a block tensor's name after "blk.N.". */
static const char *block_rest(const char *name)
{
    const char *dot = strchr(name + 4, '.');
    return dot ? dot + 1 : name;
}

/* Target of the first override matching a tensor: a device, -1 for the
 * CPU, or -2 when none matches. facts are the tensor's GGFIT_TFACT_*, which
 * say which FFN kinds block_rest(name) is. */
static int override_target(const proj *pr, const char *name, int32_t layer, uint16_t facts)
{
    for (uint32_t i = 0; i < pr->n_rules; i++) {
        const struct rule *r = &pr->rules[i];
        if (r->re) {
            if (pcre2_match(r->re, (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0, 0, pr->md,
                            NULL) >= 0)
                return r->target;
            continue;
        }
        if (layer < 0 || (r->layer >= 0 && r->layer != layer) ||
            (r->layer == -2 && (uint32_t)layer >= pr->p->n_cpu_moe))
            continue;
        if (facts & (1u << (GGFIT_TFACT_FFN_SHIFT + r->kind)))
            return r->target;
    }
    return -2;
}

/* ---- weights ------------------------------------------------------------ */

static bool name_has(const char *name, const char *part)
{
    return strstr(name, part) != NULL;
}

static weight_op tensor_op(const ggfit_tensor *t)
{
    const char *n = t->info->name;
    size_t len = strlen(n);
    if (len < 7 || strcmp(n + len - 7, ".weight") != 0)
        return OP_OTHER;   /* biases, scales */
    if (t->role == GGFIT_ROLE_TOKEN_EMBD || name_has(n, "embed_tokens"))
        return OP_GET_ROWS;
    if (!strncmp(n, "rope_", 5))
        return OP_ROPE;
    if (t->role == GGFIT_ROLE_NORM || t->role == GGFIT_ROLE_OUTPUT_NORM || name_has(n, "norm") ||
        name_has(n, "conv.weight") || name_has(n, "conv1d") || name_has(n, "ssm_a") ||
        name_has(n, "ssm_d.") ||
        name_has(n, "attn_sinks"))
        return OP_OTHER;
    if (t->role == GGFIT_ROLE_EXPERTS && t->info->n_dims == 3)
        return OP_MUL_MAT_ID;
    if (t->info->n_dims == 2)
        return OP_MUL_MAT;
    return OP_OTHER;
}

_Static_assert((int)OP_OTHER <= (int)GGFIT_TFACT_OP && GGFIT_TFACT_FFN_SHIFT + FFN_KIND_COUNT <= 8,
               "weight ops and FFN kinds fit their bits of GGFIT_TFACT_*");

/* The FFN kinds (bit k: kind k) that rest, a block tensor's name after
 * "blk.N.", is one of, in one pass: "ffn_gate", "ffn_up" or "ffn_down"
 * prefixes for the first three, "ffn_(up|down|gate_up|gate)_" then "exps"
 * or "chexps" for the experts. */
static unsigned ffn_kinds(const char *rest)
{
    if (strncmp(rest, "ffn_", 4) != 0)
        return 0;
    const char *p = rest + 4, *tail[2] = { NULL, NULL };
    unsigned k = 0;
    if (!strncmp(p, "gate", 4)) {
        k = 1u << FFN_ALL | 1u << FFN_NOT_UP;
        if (p[4] == '_') {
            tail[0] = p + 5;                   /* "ffn_gate_" */
            if (!strncmp(p + 5, "up_", 3))
                tail[1] = p + 8;               /* "ffn_gate_up_" */
        }
    } else if (!strncmp(p, "up", 2)) {
        k = 1u << FFN_ALL;
        if (p[2] == '_')
            tail[0] = p + 3;                   /* "ffn_up_" */
    } else if (!strncmp(p, "down", 4)) {
        k = 1u << FFN_ALL | 1u << FFN_NOT_UP | 1u << FFN_DOWN;
        if (p[4] == '_')
            tail[0] = p + 5;                   /* "ffn_down_" */
    }
    for (int i = 0; i < 2; i++)
        if (tail[i] && (!strncmp(tail[i], "exps", 4) || !strncmp(tail[i], "chexps", 6)))
            k |= 1u << FFN_EXPERTS;
    return k;
}

/* What project_weights and override_target would otherwise work out from
 * the name on every projection. */
uint16_t ggfit__tensor_facts(const ggfit_tensor *t)
{
    const char *n = t->info->name;
    uint16_t f = (uint16_t)tensor_op(t);
    if (t->layer >= 0) {
        f |= (uint16_t)(ffn_kinds(block_rest(n)) << GGFIT_TFACT_FFN_SHIFT);
    }
    if (!strcmp(n, "token_embd.weight"))
        f |= GGFIT_TFACT_TOKEN_EMBD;
    if (!strcmp(n, "output.weight"))
        f |= GGFIT_TFACT_OUTPUT;
    if (!strncmp(n, "token_embd_norm", 15))
        f |= GGFIT_TFACT_EMBD_NORM;
    return f;
}

/* Layer of a tensor for placement: block index, n_layer for the output
 * layer, -1 for the input layer. */
static int64_t placement_layer(const proj *pr, const ggfit_tensor *t, uint16_t facts)
{
    if (t->layer >= 0)
        return t->layer;
    if (t->output_layer)
        return pr->hp->n_layer;
    /* gemma3n's per-layer projection and its norm are repeating tensors
     * outside the blocks, created for block 0. */
    if (!strncmp(t->info->name, "per_layer_model_proj.", 21) ||
        !strncmp(t->info->name, "per_layer_proj_norm.", 20))
        return 0;
    /* LFM2's final norm is stored as token_embd_norm. */
    if ((facts & GGFIT_TFACT_EMBD_NORM) && !strncmp(pr->hp->arch, "lfm2", 4))
        return pr->hp->n_layer;
    return -1;
}

static int place_weight(proj *pr, const ggfit_tensor *t, weight_op op, int64_t layer,
                        uint16_t facts)
{
    int target = override_target(pr, t->info->name, t->layer, facts);
    if (target == -1)
        return select_cpu(pr, t->info, op);
    if (target >= 0)
        return device_buft(pr, target);
    if (layer < 0 || op == OP_GET_ROWS)
        return select_cpu(pr, t->info, op);
    int d = dev_layer(pr, (uint32_t)layer);
    return d < 0 ? select_cpu(pr, t->info, op) : device_buft(pr, d);
}

static void add_model(proj *pr, int b, const ggfit_tensor_info *t)
{
    pr->out->bufts[b].mem.model += alloc_bytes(pr, b, t);
}

static int project_weights(proj *pr, int32_t *placement)
{
    const ggfit_model *m = pr->m;
    const ggfit_hparams *hp = pr->hp;
    uint64_t n = ggfit_model_n_tensors(m);
    const uint16_t *facts = ggfit__model_facts(m);
    int embd_buft = -1;
    const ggfit_tensor *embd = NULL;
    uint16_t embd_facts = 0;
    bool has_output = false;
    for (uint64_t i = 0; i < n; i++) {
        const ggfit_tensor *t = ggfit_model_tensor(m, i);
        int b;
        if (placement)
            placement[i] = -1;
        /* NextN/MTP blocks are loaded only for speculative decoding. */
        if (t->layer >= 0 && ggfit_model_layer(m, (uint32_t)t->layer)->nextn)
            continue;
        weight_op op = (weight_op)(facts[i] & GGFIT_TFACT_OP);
        int64_t layer = placement_layer(pr, t, facts[i]);
        if (op == OP_ROPE && layer < 0) {
            /* One copy per distinct buffer type among the blocks' layers. */
            int seen[GGFIT_MAX_BUFTS] = {0};
            int first = -1;
            for (uint32_t il = 0; il < hp->n_layer - hp->n_nextn; il++) {
                int d = dev_layer(pr, il);
                b = d < 0 ? select_cpu(pr, t->info, op) : device_buft(pr, d);
                if (first < 0)
                    first = b;
                if (!seen[b]++)
                    add_model(pr, b, t->info);
            }
            if (placement)
                placement[i] = first;
            continue;
        }
        b = place_weight(pr, t, op, layer, facts[i]);
        add_model(pr, b, t->info);
        if (placement)
            placement[i] = b;
        if (facts[i] & GGFIT_TFACT_TOKEN_EMBD) {
            embd = t;
            embd_buft = b;
            embd_facts = facts[i];
        }
        has_output |= (facts[i] & GGFIT_TFACT_OUTPUT) != 0;
    }
    /* Tied embeddings: the output layer gets token_embd again, unless its
     * buffer type already holds it. */
    if (!has_output && embd) {
        int d = dev_layer(pr, hp->n_layer);
        int target = override_target(pr, embd->info->name, -1, embd_facts);
        int b = target >= 0 ? device_buft(pr, target)
                : target == -1 || d < 0 ? select_cpu(pr, embd->info, OP_MUL_MAT)
                                        : device_buft(pr, d);
        /* gemma3n makes the output's copy before token_embd itself, so the
         * copy is never found in place: both are always loaded. */
        if (b != embd_buft || !strcmp(hp->arch, "gemma3n"))
            add_model(pr, b, embd->info);
        pr->tied_buft = b;
    }
    return GGFIT_OK;
}

/* ---- context: KV cache and recurrent state -------------------------------- */

static bool layer_is_swa(const proj *pr, uint32_t il, uint32_t period)
{
    const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
    if (li->nextn)
        return false;
    if (pr->hp->has_swa_layers)
        return li->swa;
    if (period == 0)
        return true;
    return pr->arch->swa_dense_first ? il % period != 0 : il % period < period - 1;
}

/* llama_init_from_model refuses a quantized cache whose blocks do not
 * divide every layer's head (K or V), unless flash attention is off
 * (then a quantized V is refused anyway, in resolve_sizes). */
static int check_cache_blocks(proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    const ggfit_params *p = pr->p;
    if (p->flash_attn == GGFIT_FA_OFF)
        return GGFIT_OK;
    for (int kv = 0; kv < 2; kv++) {
        uint32_t type = kv ? p->type_v : p->type_k;
        if (!ggfit_type_is_quantized(type))
            continue;
        uint32_t blck = ggfit_type_block_size(type);
        for (uint32_t il = 0; il < hp->n_layer; il++) {
            bool swa = pr->swa && layer_is_swa(pr, il, pr->period);
            uint32_t head = kv ? (swa ? hp->n_embd_head_v_swa : hp->n_embd_head_v)
                               : (swa ? hp->n_embd_head_k_swa : hp->n_embd_head_k);
            if (blck && head % blck != 0)
                return ggfit__fail(pr->err, GGFIT_EINVAL,
                                   "%s: %c cache type %s with block size %u does not divide "
                                   "n_embd_head_%c=%u (layer %u); llama.cpp refuses it unless "
                                   "-fa off", path_of(pr), kv ? 'V' : 'K', ggfit_type_name(type),
                                   blck, kv ? 'v' : 'k', head, il);
        }
    }
    return GGFIT_OK;
}

static bool layer_has_attn(const proj *pr, uint32_t il)
{
    const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
    if (li->nextn && (pr->arch->mem != GGFIT_MEM_KV || !pr->arch->nextn_kv))
        return false;
    if (pr->arch->kv_from_start && il >= pr->arch->kv_from_start)
        return false;   /* it reads an earlier layer's cache */
    switch (pr->arch->rec) {
    case GGFIT_REC_NONE: case GGFIT_REC_BOTH: return true;
    case GGFIT_REC_ALL: return false;
    case GGFIT_REC_NO_KV_HEADS: case GGFIT_REC_NEMOTRON_H: return li->n_head_kv > 0;
    case GGFIT_REC_INTERVAL:
        return pr->hp->full_attn_interval && (il + 1) % pr->hp->full_attn_interval == 0;
    }
    return true;
}

static bool layer_has_state(const proj *pr, uint32_t il)
{
    const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
    if (li->nextn)
        return false;
    switch (pr->arch->rec) {
    case GGFIT_REC_NONE: return false;
    case GGFIT_REC_ALL: case GGFIT_REC_BOTH: return true;
    case GGFIT_REC_NO_KV_HEADS: return li->n_head_kv == 0;
    case GGFIT_REC_NEMOTRON_H: return li->n_head_kv == 0 && li->n_ff == 0;
    case GGFIT_REC_INTERVAL:
        return !pr->hp->full_attn_interval || (il + 1) % pr->hp->full_attn_interval != 0;
    }
    return false;
}

static int context_buft(proj *pr, uint32_t il)
{
    int d = pr->p->no_kv_offload ? -1 : dev_layer(pr, il);
    return d < 0 ? cpu_buft(pr) : device_buft(pr, d);
}

static void add_context(proj *pr, int b, uint64_t bytes)
{
    pr->out->bufts[b].mem.context += GGFIT_PAD(bytes, buft_alignment(pr, b));
}

/* llama4's window (llama_model_llama4::load_arch_hparams): a chunk of
 * 8192 tokens whatever attention.sliding_window says, unless it says 0,
 * which turns the chunks off. */
static uint32_t llama4_window(const proj *pr)
{
    char key[96];
    snprintf(key, sizeof key, "%s.attention.sliding_window", pr->hp->arch);
    if (pr->hp->n_swa == 0 && ggfit_gguf_find_key(ggfit_model_gguf(pr->m), key) >= 0)
        return 0;
    return pr->arch->swa_default;
}

/* Sliding window: the arch's period unless the file gives one, and the
 * cells of the SWA cache (llama_kv_cache_iswa). */
static void resolve_swa(proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    const ggfit_params *p = pr->p;
    uint64_t kv_size = pr->out->n_ctx_seq;
    uint32_t n_swa = hp->n_swa ? hp->n_swa : pr->arch->swa_default;
    if (!strcmp(hp->arch, "llama4"))
        n_swa = llama4_window(pr);
    uint32_t period = hp->swa_pattern ? hp->swa_pattern : pr->arch->swa_period;
    bool swa = n_swa > 0 && (hp->has_swa_layers || period > 0 || hp->swa_pattern) &&
               !(pr->arch->swa_needs_window && hp->n_swa == 0) && strcmp(hp->arch, "phi3");
    /* llama_model_exaone4::load_arch_hparams: sliding windows (4096 tokens
     * unless the file says otherwise) in the 64-block model (32B) only,
     * counting the blocks without the NextN ones; the others ignore the
     * window and its pattern. */
    if (!strcmp(hp->arch, "exaone4") && hp->n_layer - hp->n_nextn != 64)
        swa = false;
    uint64_t size_swa = kv_size;
    if (swa && !p->swa_full) {
        uint64_t want = (uint64_t)n_swa * (p->kv_unified ? p->n_seq : 1) + pr->out->n_ubatch;
        size_swa = GGFIT_PAD(want < kv_size ? want : kv_size, 256);
    }
    pr->swa = swa;
    pr->period = period;
    pr->size_swa = size_swa;
}

static int project_context(proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    const ggfit_params *p = pr->p;
    ggfit_projection *o = pr->out;
    uint32_t n_stream = o->n_stream, kv_size = o->n_ctx_seq;
    bool mla = hp->n_embd_head_k_mla && hp->n_embd_head_v_mla;
    bool swa = pr->swa;
    uint32_t period = pr->period;
    uint64_t size_swa = pr->size_swa;

    uint32_t nv_max = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
        bool s = swa && layer_is_swa(pr, il, period);
        uint32_t nv = (s ? hp->n_embd_head_v_swa : hp->n_embd_head_v) * li->n_head_kv;
        if (nv > nv_max)
            nv_max = nv;
    }

    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
        if (pr->arch->mem == GGFIT_MEM_RECURRENT || !layer_has_attn(pr, il))
            continue;
        bool s = swa && layer_is_swa(pr, il, period);
        uint64_t cells = s ? size_swa : kv_size;
        uint32_t nk = (s ? hp->n_embd_head_k_swa : hp->n_embd_head_k) * li->n_head_kv;
        /* The V cache is transposed, its rows padded to the widest layer's,
         * only when flash attention was off as the cache was made (-fa off). */
        uint32_t nv = p->flash_attn != GGFIT_FA_OFF
                          ? (s ? hp->n_embd_head_v_swa : hp->n_embd_head_v) * li->n_head_kv
                          : nv_max;
        uint64_t rk = ggfit_row_bytes(p->type_k, nk), rv = ggfit_row_bytes(p->type_v, nv);
        if ((nk && !rk) || (!mla && nv && !rv))
            return ggfit__fail(pr->err, GGFIT_EINVAL,
                               "%s: cache types %s/%s need rows that are whole blocks; layer %u "
                               "has K rows of %u and V rows of %u",
                               path_of(pr), ggfit_type_name(p->type_k),
                               ggfit_type_name(p->type_v), il, nk, nv);
        int b = context_buft(pr, il);
        add_context(pr, b, rk * cells * n_stream);
        if (!mla)   /* MLA caches the compressed latent as K only */
            add_context(pr, b, rv * cells * n_stream);
    }

    if (pr->arch->rec == GGFIT_REC_NONE)
        return GGFIT_OK;
    uint64_t n_rows = p->n_seq ? p->n_seq : 1, r, s;
    if (!strncmp(hp->arch, "lfm2", 4)) {
        r = (uint64_t)hp->n_embd * (hp->shortconv_l_cache ? hp->shortconv_l_cache - 1 : 0);
        s = 0;
    } else {
        r = (uint64_t)(hp->ssm_d_conv ? hp->ssm_d_conv - 1 : 0) *
            (hp->ssm_d_inner + 2ull * hp->ssm_n_group * hp->ssm_d_state);
        s = (uint64_t)hp->ssm_d_state * hp->ssm_d_inner;
    }
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        if (!layer_has_state(pr, il))
            continue;
        int b = context_buft(pr, il);
        add_context(pr, b, r * 4 * n_rows);
        add_context(pr, b, s * 4 * n_rows);
    }
    return GGFIT_OK;
}

/* ---- compute buffers (estimate) ------------------------------------------ */

/* Stage estimates from llama.cpp's measured dense-graph behaviour (see
 * LLAMA_MEMORY.md section 5); the graph replay replaces these. */
static void project_compute(proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    ggfit_projection *o = pr->out;
    uint64_t U = o->n_ubatch, E = hp->n_embd, V = hp->n_vocab;
    uint64_t F = hp->n_ff_max, H = hp->n_head_max;
    if (hp->n_expert && hp->n_ff_exp) {
        uint64_t moe = (uint64_t)hp->n_ff_exp * hp->n_expert_used + E * hp->n_expert_used / 3 +
                       hp->n_expert / 3;
        if (moe > F)
            F = moe;
    }
    uint64_t n_kv = o->n_ctx_seq;
    uint64_t mask = n_kv * U * (o->flash_attn ? 2 : 4);
    uint64_t small = 28 * U;
    uint64_t layer = 3 * F * U * 4 + 3 * E * U * 4 + mask + small;
    if (!o->flash_attn) {
        uint64_t attn = H * n_kv * U * 4 * o->n_stream + mask + 9 * E * U * 2;
        if (attn > layer)
            layer = attn;
    }
    uint64_t logits = V * U * 4 + E * U * 4;
    int out_dev = dev_layer(pr, hp->n_layer);
    bool cpu_layers = pr->act < hp->n_layer + 1;
    for (uint32_t d = 0; d < pr->n_dev; d++) {
        bool has_layers = false;
        for (uint32_t il = 0; il <= hp->n_layer && !has_layers; il++)
            has_layers = dev_layer(pr, il) == (int)d;
        if (!has_layers)
            continue;
        uint64_t c = layer;
        if (out_dev == (int)d && logits > c)
            c = logits;
        o->bufts[device_buft(pr, (int)d)].mem.compute += c;
    }
    uint64_t host = 2 * E * U * 4 + mask + small;
    if (cpu_layers || pr->n_dev == 0) {
        uint64_t run = layer + E * U * 4;
        if (out_dev < 0 && logits + E * U * 4 > run)
            run = logits + E * U * 4;
        host = run + small;
    }
    int hb = pr->host_buft >= 0 ? pr->host_buft : cpu_buft(pr);
    o->bufts[hb].mem.compute += host;
    o->compute_estimated = true;
}

/* ---- compute buffers from llama.cpp's graph ------------------------------- */

static void dump_graph(const gg_graph *g)
{
    for (uint32_t i = 0; i < g->n_leafs; i++) {
        const gg_tensor *t = &g->t[g->leafs[i]];
        fprintf(stderr, "leaf %s %s [%lld,%lld,%lld,%lld] buft %d\n", gg_tname(g, g->leafs[i]),
                ggfit_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1],
                (long long)t->ne[2], (long long)t->ne[3], t->buft);
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const gg_tensor *t = &g->t[g->nodes[i]];
        fprintf(stderr, "node %s op%d %s [%lld,%lld,%lld,%lld] pin %d src", gg_tname(g, g->nodes[i]), t->op,
                ggfit_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1],
                (long long)t->ne[2], (long long)t->ne[3], t->backend);
        for (int s = 0; s < t->n_src; s++)
            fprintf(stderr, "%s%s", s ? "|" : " ", t->src[s] >= 0 ? gg_tname(g, t->src[s]) : "-");
        fprintf(stderr, "\n");
    }
}

/* The graph the scheduler hands to ggml-alloc, one tensor a line, for
 * comparison with llama.cpp's recorded graphs (tools/scheddiff.py). */
static void dump_scheduled(const ggfit_sched_in *in, const ggfit_sched_out *so)
{
    char name[GGFIT_SCHED_NAME], src_name[GGFIT_SCHED_NAME];
    for (size_t i = 0; i < so->n_leafs + so->n_nodes; i++) {
        const ggfit_gt *t = &so->t[i];
        ggfit__sched_name(in, so, i, name);
        fprintf(stderr,
                "sched %s\t%s\t%d\t%s\t%lld,%lld,%lld,%lld\t%llu\t%d\t%u\t%d\t%d\t%llu\t",
                i < so->n_leafs ? "leaf" : "node", name, t->op, ggfit_type_name(t->type),
                (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
                (long long)t->ne[3], (unsigned long long)t->size, t->backend, t->flags,
                t->allocated, t->view_src, (unsigned long long)t->view_offs);
        for (int s = 0; s < t->n_src; s++) {
            if (t->src[s] < 0)
                snprintf(src_name, sizeof src_name, "-");
            else
                ggfit__sched_name(in, so, (size_t)t->src[s], src_name);
            fprintf(stderr, "%s%s", s ? "|" : "", src_name);
        }
        fprintf(stderr, "\n");
    }
}

/* ---- the graph cache of a fit ------------------------------------------ */

/* What a graph's structure depends on, apart from the model: equal keys
 * build equal graphs up to the buffer types of weights and caches. */
typedef struct gkey {
    const ggfit_model *m;
    uint32_t n_tokens, n_outputs, n_seqs, n_stream, n_kv, n_kv_swa, swa_period;
    uint32_t type_k, type_v;
    int32_t cpu_backend;
    bool swa, flash_attn, v_trans, no_kv_offload, pin_norms;
    bool tied_copy;        /* the tied output has its own copy of token_embd */
} gkey;

/* One kept graph, or the memory of one (a graph whose build failed). */
typedef struct gentry {
    gg_graph g;
    gkey key;
    bool valid;            /* g is key's graph */
    uint32_t used;         /* the cache's clock when last used */
    ggfit_sched_prep prep; /* the scheduler's structural work on g, or empty */
} gentry;

/* Two graphs: a fit projects its start, then its reduced context with the
 * -fa auto probe before each projection that leaves layers on the CPU; the
 * probe and the projection then take turns. The least recently used graph
 * makes way for a new one, in its memory: fresh pages cost more than the
 * build (each is a page fault), so memory is reused rather than kept. */
#define GCACHE_SLOTS 2
struct ggfit__gcache {
    gentry e[GCACHE_SLOTS];
    uint32_t clock;
    ggfit__buf work[GGFIT_SCHED_WORK + 1]; /* the scheduler's, then ggml-alloc's
                                              scratch, kept between projections */
};

/* Hands the graph to a model of llama.cpp's scheduler, as llama.cpp's
 * sched_reserve does, and replays ggml-alloc on what it returns: the bytes
 * per backend are the compute buffers. Returns GGFIT_EUNSUPPORTED when the
 * configuration is outside what the models cover (the caller estimates). */
static int schedule_and_allocate(proj *pr, const gg_graph *g, const int32_t *layer_backend,
                                 bool probe, ggfit_sched_prep *prep)
{
    ggfit_projection *o = pr->out;
    int n_backends = (int)pr->n_dev + 1;
    if (n_backends > GGFIT_SCHED_MAX_BACKENDS || o->n_bufts > GGFIT_SCHED_MAX_BUFTS)
        return GGFIT_EUNSUPPORTED;
    ggfit_sched_buft bufts[GGFIT_SCHED_MAX_BUFTS];
    ggfit_sched_backend backends[GGFIT_SCHED_MAX_BACKENDS];
    for (uint32_t b = 0; b < o->n_bufts; b++)
        bufts[b] = (ggfit_sched_buft){ .name = o->bufts[b].name, .is_host = o->bufts[b].is_host,
                                       .alignment = buft_alignment(pr, (int)b),
                                       .max_size = UINT64_MAX };
    uint32_t cpu_usable = 0;
    for (uint32_t b = 0; b < o->n_bufts; b++)
        if (o->bufts[b].device < 0)   /* host buffers and CPU_REPACK */
            cpu_usable |= 1u << b;
    for (uint32_t d = 0; d < pr->n_dev; d++) {
        ggfit_backend kind = pr->devs[d]->kind;
        int buft = device_buft(pr, (int)d);
        ggfit_sched_offload off = kind == GGFIT_BACKEND_CUDA || kind == GGFIT_BACKEND_ROCM ||
                                          kind == GGFIT_BACKEND_VULKAN
                                      ? GGFIT_OFFLOAD_BATCH
                                  : kind == GGFIT_BACKEND_METAL ? GGFIT_OFFLOAD_MATMUL
                                                                : GGFIT_OFFLOAD_NEVER;
        backends[d] = (ggfit_sched_backend){ .name = pr->devs[d]->name, .buft = buft,
                                             .bufts = 1u << buft, .offload = off,
                                             .offload_min_batch = 32 };
    }
    /* The CPU backend computes in the first device's host buffer type when it
     * has one (CUDA_Host), else in plain CPU memory. */
    int cpu_compute = pr->host_buft >= 0 ? pr->host_buft : cpu_buft(pr);
    bufts[cpu_compute].alignment = 32;
    backends[pr->n_dev] = (ggfit_sched_backend){ .name = "CPU", .buft = cpu_compute,
                                                 .bufts = cpu_usable | (1u << cpu_compute),
                                                 .is_cpu = true,
                                                 .offload = GGFIT_OFFLOAD_NEVER };
    /* Pipeline parallelism: several GPUs that run asynchronously with
     * events (CUDA, ROCm), every layer offloaded, no overrides. */
    bool async = pr->n_dev > 1;
    for (uint32_t d = 0; d < pr->n_dev; d++)
        async &= pr->devs[d]->kind == GGFIT_BACKEND_CUDA || pr->devs[d]->kind == GGFIT_BACKEND_ROCM;
    bool pipeline = async && pr->act > pr->hp->n_layer && pr->p->split_mode == GGFIT_SPLIT_LAYER &&
                    !pr->p->no_kv_offload && pr->n_rules == 0;

    ggfit_sched_in in = { .t = g->t, .n_tensors = g->n, .leafs = g->leafs, .nodes = g->nodes,
                          .n_leafs = g->n_leafs, .n_nodes = g->n_nodes, .backends = backends,
                          .n_backends = n_backends, .bufts = bufts, .n_bufts = (int)o->n_bufts,
                          .n_copies = pipeline ? GGFIT_SCHED_MAX_COPIES : 1, .cur_copy = 0,
                          .op_offload = true, .backends_only = probe,
                          .work = pr->cache ? pr->cache->work : NULL };
    ggfit_sched_out so;
    char *serr = NULL;
    /* A cached graph's structural work is done once (prep empty until
     * then); without it the split does it all, and reports what fails. */
    if (prep && !prep->tf && ggfit__sched_prepare(&in, prep, &serr) != GGFIT_OK) {
        ggfit_free(serr);
        serr = NULL;
    }
    in.prep = prep && prep->tf ? prep : NULL;
    int rc = ggfit__sched_split(&in, &so, &serr);
    if (!rc && g->names && !probe)
        dump_scheduled(&in, &so);
    if (rc) {
        ggfit_free(serr);
        return rc == GGFIT_ENOMEM ? rc : GGFIT_EUNSUPPORTED;
    }
    if (probe) {
        /* llama.cpp keeps flash attention only if every FA node runs on
         * its layer's device (llama_context::resolve_fused_ops). */
        pr->fa_mismatch = false;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const gg_tensor *t = &g->t[g->nodes[i]];
            if (t->op != GGFIT_OP_FLASH_ATTN_EXT || t->src[1] < 0)
                continue;
            /* The node's layer (llama.cpp reads it from the node's name),
             * which may read another layer's cache (gemma3n). */
            int32_t k = t->src[1], root = g->t[k].view_src >= 0 ? g->t[k].view_src : k;
            int32_t il = t->il >= 0 ? t->il : g->t[root].il;
            if (il >= 0 && so.backend_of[g->nodes[i]] != layer_backend[il])
                pr->fa_mismatch = true;
        }
        ggfit__sched_free(&so);
        return GGFIT_OK;
    }
    uint64_t sizes[GGFIT_SCHED_MAX_BACKENDS];
    rc = ggfit__galloc_reserve(so.t, so.n_leafs, so.n_nodes, so.n_backends, so.galloc, sizes,
                               pr->cache ? &pr->cache->work[GGFIT_SCHED_WORK] : NULL, &serr);
    ggfit_free(serr);
    if (!rc)
        for (int b = 0; b < n_backends; b++)
            o->bufts[backends[b].buft].mem.compute += sizes[b];
    ggfit__sched_free(&so);
    if (rc)
        return rc == GGFIT_ENOMEM ? rc : GGFIT_EUNSUPPORTED;
    o->compute_estimated = false;
    return GGFIT_OK;
}


static void make_key(gkey *k, const gb_params *p)
{
    memset(k, 0, sizeof *k);   /* padding too: keys are compared with memcmp */
    k->m = p->m;
    k->n_tokens = p->n_tokens;
    k->n_outputs = p->n_outputs;
    k->n_seqs = p->n_seqs;
    k->n_stream = p->n_stream;
    k->n_kv = p->n_kv;
    k->n_kv_swa = p->n_kv_swa;
    k->swa_period = p->swa_period;
    k->type_k = p->type_k;
    k->type_v = p->type_v;
    k->cpu_backend = p->cpu_backend;
    k->swa = p->swa;
    k->flash_attn = p->flash_attn;
    k->v_trans = p->v_trans;
    k->no_kv_offload = p->no_kv_offload;
    k->pin_norms = p->pin_norms;
    /* A tied output reads token_embd where it is, or a copy of it in the
     * output's buffer type: one leaf more (gb_output_weight). */
    const ggfit_gguf *g = ggfit_model_gguf(p->m);
    int64_t embd = ggfit_gguf_find_tensor(g, "token_embd.weight");
    k->tied_copy = ggfit_gguf_find_tensor(g, "output.weight") < 0 && embd >= 0 &&
                   p->tied_output_buft != p->placement[embd];
}

static void retarget(gg_graph *g, const ggfit_model *m, const int32_t *placement,
                     const int32_t *kv_buft, const int32_t *layer_backend, int32_t tied_buft)
{
    const ggfit_tensor_info *base = ggfit_gguf_tensor(ggfit_model_gguf(m), 0);
    for (uint32_t i = 0; i < g->n; i++) {
        gg_tensor *t = &g->t[i];
        if (t->tied)
            t->buft = (int16_t)tied_buft;
        else if (t->weight && !t->dup)   /* each copy keeps its buffer type */
            t->buft = placement[t->weight - base];
        else if (t->buft >= 0 && t->il >= 0)
            t->buft = kv_buft[t->il];
        if (t->pin_il >= 0)
            t->backend = layer_backend[t->pin_il];
    }
}

/* Placement also decides which copy of the rope factors (one per buffer
 * type, see gb_rope_factors) each layer's rope nodes read, and where each
 * copy first appears in the lists. Points every such node at its layer's
 * copy, making the copy when the graph has none yet; returns 1 when a
 * source changed (the lists must then be expanded again), 0 when none did,
 * -1 when out of memory. */
static int retarget_dups(gg_graph *g, const ggfit_model *m, const int32_t *placement,
                         const int32_t *layer_buft)
{
    const ggfit_tensor_info *base = ggfit_gguf_tensor(ggfit_model_gguf(m), 0);
    enum { MAX_DUPS = 4 * GGFIT_MAX_BUFTS };
    int32_t dups[MAX_DUPS];
    int n_dups = 0, changed = 0;
    for (uint32_t i = 0; i < g->n && n_dups < MAX_DUPS; i++)
        if (g->t[i].dup)
            dups[n_dups++] = (int32_t)i;
    if (n_dups == 0)
        return 0;
    uint32_t n = g->n;
    for (uint32_t i = 0; i < n; i++) {
        const gg_tensor *t = &g->t[i];
        if (t->op != GGFIT_OP_ROPE || t->il < 0 || t->n_src < 3 || t->src[2] < 0)
            continue;
        const gg_tensor *f = &g->t[t->src[2]];
        const ggfit_tensor_info *w = f->weight;
        int32_t want = gb_copy_buft(layer_buft, placement, w - base, t->il);
        if (f->buft == want)
            continue;
        int32_t copy = -1;
        for (int k = 0; k < n_dups && copy < 0; k++)
            if (g->t[dups[k]].weight == w && g->t[dups[k]].buft == want)
                copy = dups[k];
        if (copy < 0) {
            if (n_dups == MAX_DUPS)
                return -1;
            copy = gg_memory(g, w, w->name, w->type, 1, w->ne, want, true);
            if (g->oom)
                return -1;
            g->t[copy].dup = true;
            g->t[copy].size = gg_nbytes(g, copy);
            dups[n_dups++] = copy;
        }
        g->t[i].src[2] = copy;
        changed = 1;
    }
    return changed;
}

struct ggfit__gcache *ggfit__gcache_new(void)
{
    return ggfit__calloc(1, sizeof(struct ggfit__gcache));
}

static void gentry_clear(gentry *e)
{
    gg_free(&e->g);
    ggfit__sched_prep_free(&e->prep);
    e->valid = false;
}

void ggfit__gcache_free(struct ggfit__gcache *c)
{
    if (c) {
        for (int k = 0; k < GCACHE_SLOTS; k++)
            gentry_clear(&c->e[k]);
        for (int k = 0; k < GGFIT_SCHED_WORK + 1; k++)
            ggfit__buf_free(&c->work[k]);
        free(c);
    }
}

/* The entry holding key's graph, or NULL. */
static gentry *gcache_find(struct ggfit__gcache *c, const gkey *key)
{
    for (int k = 0; c && k < GCACHE_SLOTS; k++)
        if (c->e[k].valid && !memcmp(&c->e[k].key, key, sizeof *key)) {
            c->e[k].used = ++c->clock;
            return &c->e[k];
        }
    return NULL;
}

/* The entry a new graph for key replaces: one with the same graph but for
 * another context (a fit reduces the context once and never returns, so
 * that graph is done with, and reusing its memory spares a second graph's
 * fresh pages), else an empty one, else the least recently used. */
static gentry *gcache_victim(struct ggfit__gcache *c, const gkey *key)
{
    for (int k = 0; k < GCACHE_SLOTS; k++) {
        gkey other = c->e[k].key;
        other.n_kv = key->n_kv;
        other.n_kv_swa = key->n_kv_swa;
        if (c->e[k].valid && !memcmp(&other, key, sizeof other))
            return &c->e[k];
    }
    gentry *v = &c->e[0];
    for (int k = 0; k < GCACHE_SLOTS; k++) {
        if (!c->e[k].valid)
            return &c->e[k];
        if (c->e[k].used < v->used)
            v = &c->e[k];
    }
    return v;
}

/* Builds llama.cpp's graph for the model and sizes its compute buffers.
 * Returns GGFIT_EUNSUPPORTED when ggfit has no graph for the architecture. */
static int graph_compute(proj *pr, const int32_t *placement, bool probe)
{
    const ggfit_hparams *hp = pr->hp;
    ggfit_projection *o = pr->out;
    uint32_t n_layer = hp->n_layer;
    int32_t *arrays = ggfit__malloc((size_t)(4 * (n_layer + 1)) * sizeof *arrays);
    if (!arrays)
        return ggfit__fail(pr->err, GGFIT_ENOMEM, "out of memory");
    uint8_t *layer_flags = (uint8_t *)(arrays + 3 * (n_layer + 1));
    int32_t *layer_buft = arrays, *kv_buft = arrays + n_layer + 1,
            *layer_backend = arrays + 2 * (n_layer + 1);
    for (uint32_t il = 0; il <= n_layer; il++) {
        int d = dev_layer(pr, il);
        layer_buft[il] = d < 0 ? (pr->host_buft >= 0 ? pr->host_buft : cpu_buft(pr))
                               : device_buft(pr, d);
        kv_buft[il] = il < n_layer ? context_buft(pr, il) : -1;
        layer_backend[il] = d < 0 ? (int32_t)pr->n_dev : d;
        layer_flags[il] = 0;
        if (il < n_layer) {
            if (pr->swa && layer_is_swa(pr, il, pr->period))
                layer_flags[il] |= GB_LAYER_SWA;
            if (pr->arch->mem != GGFIT_MEM_RECURRENT && layer_has_attn(pr, il))
                layer_flags[il] |= GB_LAYER_ATTN;
            if (layer_has_state(pr, il))
                layer_flags[il] |= GB_LAYER_STATE;
        }
    }
    /* The reserved ubatch: min(n_ctx, n_ubatch) tokens, a multiple of the
     * sequences (llama_context::graph_reserve). */
    uint32_t n_seqs = o->n_seq, n_tokens = o->n_ubatch < o->n_ctx ? o->n_ubatch : o->n_ctx;
    /* The outputs stay as asked (n_outputs_max is n_batch, never less)
     * when the tokens are rounded up to a multiple of the sequences. */
    uint32_t n_outputs = n_tokens;
    n_tokens = (n_tokens + n_seqs - 1) / n_seqs * n_seqs;
    if (probe)   /* the FA probe: one token per sequence, FA on */
        n_tokens = n_outputs = n_seqs;
    gb_params gp = {
        .m = pr->m, .arch = pr->arch, .n_tokens = n_tokens, .n_outputs = n_outputs,
        .n_seqs = n_seqs, .n_stream = o->n_stream, .n_kv = o->n_ctx_seq,
        .n_kv_swa = (uint32_t)pr->size_swa, .swa = pr->swa, .swa_period = pr->period,
        .flash_attn = probe || o->flash_attn, .v_trans = pr->p->flash_attn == GGFIT_FA_OFF,
        .type_k = pr->p->type_k, .type_v = pr->p->type_v,
        .placement = placement, .tied_output_buft = pr->tied_buft, .kv_buft = kv_buft,
        .layer_buft = layer_buft, .layer_backend = layer_backend, .layer_flags = layer_flags,
        /* The graph callback pins "norm" (full offload) and, with -nkvo, the
         * attention output to the CPU (ggml_backend_sched_set_tensor_backend).
         * The FA probe splits the graph as built, so the pins hold there; the
         * measured reserve (ggml_backend_sched_reserve_size) resets the
         * scheduler first, which forgets every pin. */
        .pin_norms = probe && (pr->act > n_layer || n_tokens < 32),
        .no_kv_offload = probe && pr->p->no_kv_offload, .cpu_backend = (int32_t)pr->n_dev,
    };
    gg_graph local, *g = &local;
    gg_init(g);
    bool names = getenv("GGFIT_DEBUG_GRAPH") != NULL;
    int rc = GGFIT_OK;
    struct ggfit__gcache *cache = names ? NULL : pr->cache;
    gkey key;
    make_key(&key, &gp);
    gentry *c = gcache_find(cache, &key);
    if (c) {
        /* Same graph as an earlier projection: only where weights and
         * caches live, and the layers' devices, have changed. */
        g = &c->g;
        retarget(g, pr->m, placement, kv_buft, layer_backend, pr->tied_buft);
        int moved = retarget_dups(g, pr->m, placement, layer_buft);
        if (moved > 0) {
            ggfit__sched_prep_free(&c->prep);   /* the lists change */
            if (!gg_reexpand(g))
                moved = -1;
        }
        if (moved < 0) {
            c->valid = false;
            rc = GGFIT_ENOMEM;
        }
    } else {
        if (cache) {
            /* Built in a slot's memory, pages already touched. */
            c = gcache_victim(cache, &key);
            c->valid = false;
            ggfit__sched_prep_free(&c->prep);
            gg_reset(&c->g);
            g = &c->g;
        }
        g->names = names;
        /* A graph has up to about ten tensors per weight (gpt-oss 8); a
         * hint, bounded (11 MB) whatever a header claims, so a failure here
         * is not one. */
        uint64_t hint = ggfit_model_n_tensors(pr->m) * 10 + 1024;
        (void)gg_reserve(g, (uint32_t)(hint < (1u << 16) ? hint : (1u << 16)));
        rc = ggfit__build_graph(g, &gp);
        if (rc == GGFIT_OK && names && !probe)
            dump_graph(g);
        if (rc == GGFIT_OK && c) {
            c->key = key;
            c->valid = true;
            c->used = ++cache->clock;
        }
    }
    if (rc == GGFIT_OK)
        rc = schedule_and_allocate(pr, g, layer_backend, probe, c && c->valid ? &c->prep : NULL);
    gg_free(&local);
    ggfit_free(arrays);
    if (rc == GGFIT_ENOMEM)
        return ggfit__fail(pr->err, rc, "out of memory");
    return rc;
}

/* -fa auto: llama.cpp builds the graph of one token per sequence with
 * flash attention and keeps it only if every FA node runs on its layer's
 * device (llama_context::resolve_fused_ops); ggfit runs the same probe on
 * its own graph. An FA node has no weight: the scheduler gives it the
 * device of the nearest assigned node before it, the store into its layer's
 * cache, unless that is the CPU; then a device's node after it can take it.
 * So it can leave its layer only when attention is pinned to the CPU (-nkvo)
 * or some layer runs on the CPU next to offloaded ones; other
 * configurations skip the probe, which costs as much as a projection. A
 * quantized V cache turns auto into on, with no probe. The cache was made
 * for flash attention either way, so its V stays untransposed
 * (gb_params.v_trans). */
static int resolve_flash_attn(proj *pr, const int32_t *placement)
{
    if (pr->p->flash_attn != GGFIT_FA_AUTO || ggfit_type_is_quantized(pr->p->type_v) ||
        pr->n_dev == 0 || (!pr->p->no_kv_offload && pr->act > pr->hp->n_layer))
        return GGFIT_OK;
    int rc = graph_compute(pr, placement, true);
    if (rc == GGFIT_EUNSUPPORTED)
        return GGFIT_OK;
    if (rc)
        return rc;
    if (pr->fa_mismatch)
        pr->out->flash_attn = false;
    return GGFIT_OK;
}

/* ---- entry point -------------------------------------------------------- */

static int resolve_sizes(proj *pr)
{
    const ggfit_params *p = pr->p;
    ggfit_projection *o = pr->out;
    uint64_t n_ctx = p->n_ctx ? p->n_ctx : pr->hp->n_ctx_train;
    if (n_ctx == 0)
        return ggfit__fail(pr->err, GGFIT_EINVAL,
                           "%s: the model gives no context_length; pass -c", path_of(pr));
    uint32_t n_seq = p->n_seq ? p->n_seq : 1;
    uint64_t n_batch = p->n_batch < n_ctx ? p->n_batch : n_ctx;   /* causal models */
    uint64_t n_ubatch = p->n_ubatch ? p->n_ubatch : n_batch;
    if (n_ubatch > n_batch)
        n_ubatch = n_batch;
    n_ctx = GGFIT_PAD(n_ctx, 256);
    uint64_t n_ctx_seq = n_ctx;
    if (!p->kv_unified) {
        n_ctx_seq = GGFIT_PAD(n_ctx / n_seq, 256);
        n_ctx = n_ctx_seq * n_seq;
    }
    if (n_ctx > UINT32_MAX)
        return ggfit__fail(pr->err, GGFIT_EINVAL, "context %llu is too large",
                           (unsigned long long)n_ctx);
    o->n_ctx = (uint32_t)n_ctx;
    o->n_ctx_seq = (uint32_t)n_ctx_seq;
    o->n_batch = (uint32_t)n_batch;
    o->n_ubatch = (uint32_t)n_ubatch;
    o->n_seq = n_seq;
    o->n_stream = p->kv_unified ? 1 : n_seq;
    /* -fa auto keeps flash attention on every backend ggfit models. */
    o->flash_attn = p->flash_attn != GGFIT_FA_OFF;
    if (!o->flash_attn && ggfit_type_is_quantized(p->type_v))
        return ggfit__fail(pr->err, GGFIT_EINVAL,
                           "a quantized V cache (-ctv %s) needs flash attention (-fa on)",
                           ggfit_type_name(p->type_v));
    return GGFIT_OK;
}

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
    struct ggfit__gcache *c = ggfit__model_cache_take(m);
    int rc = ggfit__project_cached(m, p, devs, n, out, placement_out, c, err);
    ggfit__model_cache_give(m, c);
    return rc;
}

int ggfit__project_cached(const ggfit_model *m, const ggfit_params *p, const ggfit_device *devs,
                          size_t n, ggfit_projection *out, int32_t *placement_out,
                          struct ggfit__gcache *cache, char **err)
{
    int32_t *placement = placement_out;
    if (err)
        *err = NULL;
    if (!m || !p || !out || (n && !devs))
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_project: NULL argument");
    memset(out, 0, sizeof *out);
    proj pr = { .m = m, .hp = ggfit_model_hparams(m), .p = p, .out = out, .err = err,
                .cpu_buft = -1, .repack_buft = -1, .host_buft = -1, .tied_buft = -1,
                .cache = cache };
    if (!placement) {
        uint64_t nt = ggfit_model_n_tensors(m);
        placement = ggfit__malloc((size_t)(nt ? nt : 1) * sizeof *placement);
        if (!placement)
            return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    }
    bool known;
    pr.arch = ggfit__arch(pr.hp->arch, &known);
    for (int d = 0; d < GGFIT_MAX_DEVICES; d++)
        pr.dev_buft[d] = -1;
    int rc = setup_devices(&pr, devs, n);
    if (!rc)
        rc = resolve_sizes(&pr);
    if (!rc)
        rc = setup_overrides(&pr);
    /* Device buffers come first, in device order, then the CPU's. */
    for (uint32_t d = 0; !rc && d < pr.n_dev; d++)
        device_buft(&pr, (int)d);
    if (!rc)
        rc = project_weights(&pr, placement);
    if (!rc) {
        resolve_swa(&pr);
        cpu_buft(&pr);
        rc = check_cache_blocks(&pr);
    }
    if (!rc) {
        rc = resolve_flash_attn(&pr, placement);
    }
    if (!rc)
        rc = project_context(&pr);
    if (!rc) {
        rc = graph_compute(&pr, placement, false);
        if (rc == GGFIT_EUNSUPPORTED) {
            rc = GGFIT_OK;
            project_compute(&pr);
        }
    }
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
    for (uint32_t i = 0; i < pr.n_rules; i++)
        pcre2_code_free(pr.rules[i].re);
    pcre2_match_data_free(pr.md);
    if (placement != placement_out)
        ggfit_free(placement);
    return rc;
}
