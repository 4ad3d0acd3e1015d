/*
 * draft.c - llama-server's draft model for speculative decoding (-md), as
 * the server fits it (tools/server/server-context.cpp load_model): before
 * the target's fit it measures the draft with common_get_device_memory_data
 * on common_base_params_to_speculative's params (common/speculative.cpp)
 * and adds the draft's model + context + compute bytes of each device to
 * that device's fit target (fit_params_target); the draft's host buffers
 * are not added. The draft is measured at the target's -c (0: the
 * draft's own trained context).
 * From FIT_N_STREAMS (b10587) the server adds nothing: common_init_result
 * fits the draft (or MTP context) beside the target as its extra model
 * (common_fit_extra_model, fit.c), at each context the fit tries, and the
 * draft's context follows the target's; the plan's draft is projected at
 * the fitted context (ggfit__draft_fitted).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/draft.h"
#include "llama/arch.h"
#include "common/args.h"
#include "common/fitter.h"
#include "llama/params_default.h"
#include "versions/version.h"

/* common_speculative_type, in its order, by --spec-type's names
 * (common/speculative.cpp). */
enum {
    SPEC_NONE, SPEC_DRAFT_SIMPLE, SPEC_DRAFT_EAGLE3, SPEC_DRAFT_MTP, SPEC_DRAFT_DFLASH,
    SPEC_DRAFT_DSPARK, SPEC_NGRAM_SIMPLE, SPEC_NGRAM_MAP_K, SPEC_NGRAM_MAP_K4V, SPEC_NGRAM_MOD,
    SPEC_NGRAM_CACHE, SPEC_COUNT
};
static const char *const spec_names[SPEC_COUNT] = {
    "none", "draft-simple", "draft-eagle3", "draft-mtp", "draft-dflash", "draft-dspark",
    "ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache",
};
#define SPEC_BIT(t) (1u << (t))
/* the types that run a draft context (common_params_speculative
 * need_n_rs_seq: they roll the target's recurrent state back) */
#define SPEC_CTX_TYPES (SPEC_BIT(SPEC_DRAFT_MTP) | SPEC_BIT(SPEC_DRAFT_EAGLE3) | \
                        SPEC_BIT(SPEC_DRAFT_DFLASH) | SPEC_BIT(SPEC_DRAFT_DSPARK))

/* The speculative flags of how many draft tokens a slot can verify at once,
 * as ggfit__spec_args repeats them (in the order of spec_size_m, which is
 * their landings' in common/llama_args.h). */
_Static_assert(GGFIT__AT_SPEC_MAP_K_SIZE_M == GGFIT__AT_SPEC_SIMPLE_SIZE_M + 1 &&
               GGFIT__AT_SPEC_MAP_K4V_SIZE_M == GGFIT__AT_SPEC_SIMPLE_SIZE_M + 2,
               "one landing per spec_size_m, in order");
static const char *const size_m_flags[3] = {
    "--spec-ngram-simple-size-m", "--spec-ngram-map-k-size-m", "--spec-ngram-map-k4v-size-m",
};

bool ggfit__draft_flag(const char *a)
{
    bool negated;
    ggfit__flag f;
    int row = ggfit__flag_find(a, &negated);
    return row >= 0 && ggfit__flag_row((size_t)row, &f) && f.scope == GGFIT_SCOPE_DRAFT &&
           f.lands != GGFIT__AT_NOTE;
}

void ggfit__spec_init(ggfit_request *r)
{
    /* common_params_speculative's defaults */
    r->spec_types = SPEC_BIT(SPEC_NONE);
    r->spec_draft_n_max = 3;
    r->spec_size_m[0] = r->spec_size_m[1] = r->spec_size_m[2] = 48;
    r->spec_mod_n_max = 64;
}

/* --spec-type a,b,...: every name known, else llama.cpp refuses the flag
 * ("unknown speculative type"); "none" among them adds nothing. */
static ggfit_status parse_types(ggfit_request *r, const char *v, char **err)
{
    while (*v) {
        size_t n = strcspn(v, ",");
        int t = 0;
        while (t < SPEC_COUNT && (strlen(spec_names[t]) != n || strncmp(v, spec_names[t], n)))
            t++;
        if (t == SPEC_COUNT)
            return ggfit__fail(err, GGFIT_EINVAL, "--spec-type: unknown speculative type: "
                               "%.*s%s (llama.cpp takes %s, %s, ...)", (int)(n > 40 ? 40 : n), v,
                               n > 40 ? "..." : "", spec_names[1],
                               spec_names[3]);
        r->spec_types |= SPEC_BIT(t);
        v += n + (v[n] == ',');
    }
    return GGFIT_OK;
}

static ggfit_status parse_int(const char *a, const char *v, int32_t lo, int32_t hi,
                              int32_t *out, char **err)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end != v && !*end && (errno == ERANGE || x > hi))
        return ggfit__fail(err, GGFIT_EINVAL, "%s: %.*s%s is too large (at most %d)", a,
                           GGFIT__CLIP(v), hi);
    if (end == v || *end || x < lo)
        return ggfit__fail(err, GGFIT_EINVAL, "%s: expected a number from %d to %d, got "
                           "'%.*s%s'", a, lo, hi, GGFIT__CLIP(v));
    *out = (int32_t)x;
    return GGFIT_OK;
}

ggfit_status ggfit__draft_set(ggfit_request *r, ggfit__flag_at at, const char *a, bool on,
                             const char *v, char **err)
{
    int32_t x;
    ggfit_status rc = GGFIT_OK;
    (void)on;
    switch (at) {
    case GGFIT__AT_DRAFT_MODEL:
        r->draft_model = v;
        break;
    case GGFIT__AT_SPEC_DEFAULT:
        r->spec_types |= SPEC_BIT(SPEC_NGRAM_MOD);   /* ngram-mod, n_max 64 */
        r->spec_mod_n_max = 64;
        break;
    case GGFIT__AT_SPEC_TYPE:
        rc = parse_types(r, v, err);
        break;
    case GGFIT__AT_SPEC_DRAFT_N_MAX:
        if (!(rc = parse_int(a, v, INT32_MIN, INT32_MAX, &x, err)))
            r->spec_draft_n_max = x;
        break;
    case GGFIT__AT_SPEC_MOD_N_MAX:
        if (!(rc = parse_int(a, v, 0, 1024, &x, err)))
            r->spec_mod_n_max = x;
        break;
    case GGFIT__AT_SPEC_SIMPLE_SIZE_M:
    case GGFIT__AT_SPEC_MAP_K_SIZE_M:
    case GGFIT__AT_SPEC_MAP_K4V_SIZE_M:
        if (!(rc = parse_int(a, v, 0, 65535, &x, err)))
            r->spec_size_m[at - GGFIT__AT_SPEC_SIMPLE_SIZE_M] = (uint32_t)x;
        break;
    case GGFIT__AT_DRAFT_DEVICE:
        if (strlen(v) >= sizeof r->draft_devices || !*v)
            rc = ggfit__fail(err, GGFIT_EINVAL, "%s: expected none or devices' names", a);
        else
            snprintf(r->draft_devices, sizeof r->draft_devices, "%s", v);
        break;
    default:
        break;
    }
    return rc;
}

/* common_speculative_n_max: the most tokens any type given drafts. */
static uint32_t spec_n_max(const ggfit_request *r)
{
    int32_t n = 0;
    for (int t = SPEC_DRAFT_SIMPLE; t < SPEC_COUNT; t++) {
        if (!(r->spec_types & SPEC_BIT(t)))
            continue;
        int32_t v = t <= SPEC_DRAFT_DSPARK ? r->spec_draft_n_max
                  : t == SPEC_NGRAM_MOD    ? r->spec_mod_n_max
                  : t == SPEC_NGRAM_CACHE  ? 8
                                           : (int32_t)r->spec_size_m[t - SPEC_NGRAM_SIMPLE];
        n = v > n ? v : n;
    }
    return (uint32_t)n;
}

bool ggfit__spec_has_draft(const ggfit_request *r)
{
    return r->draft_model || (r->spec_types & SPEC_BIT(SPEC_DRAFT_MTP));
}

void ggfit__spec_params(const ggfit_request *r, ggfit_params *p)
{
    /* server_n_outputs_max: one output per slot and draft token, at most
     * -b (with embeddings or a pooling ggfit_params_server's -b stays) */
    uint32_t n_max = spec_n_max(r);
    bool every = p->embeddings ||
                 (p->pooling != GGFIT_POOLING_UNSPECIFIED && p->pooling != GGFIT_POOLING_NONE);
    if (!every && n_max) {
        uint64_t n_out = (uint64_t)p->n_seq * (1 + n_max);
        p->n_outputs_max = n_out < p->n_batch ? (uint32_t)n_out : p->n_batch;
        if (p->n_outputs_max == 0)
            p->n_outputs_max = 1;
    }
    /* common_model_params_to_llama: load_mtp with draft-mtp among the
     * types; common_context_params_to_llama: n_rs_seq = need_n_rs_seq() */
    p->load_mtp = (r->spec_types & SPEC_BIT(SPEC_DRAFT_MTP)) != 0;
    p->n_rs_seq = (r->spec_types & SPEC_CTX_TYPES) && r->spec_draft_n_max > 0
                  ? (uint32_t)r->spec_draft_n_max : 0;
}

void ggfit__spec_notes(const ggfit_request *r, const ggfit_model *m, ggfit_plan *out)
{
    /* DeepSeek V4 rolls its compressed cache back too (n_rs_seq in
     * llama_kv_cache_dsv4), and its MTP context is an iSWA cache of the
     * NextN blocks: neither is reproduced */
    bool known;
    bool dsv4 = ggfit__model_arch(m, &known)->compress_ratio != NULL;
    out->spec_rollback = dsv4 && (r->spec_types & SPEC_CTX_TYPES);
    out->spec_n_rs_seq = r->spec_draft_n_max;
}

/* A string key of g, or "" (its bytes are not NUL-terminated). */
static void key_str(const ggfit_gguf *g, const char *key, char *out, size_t cap)
{
    ggfit_value v;
    int64_t k = ggfit_gguf_find_key(g, key);
    out[0] = '\0';
    if (k >= 0 && ggfit_gguf_value(g, (uint64_t)k, &v) && v.type == GGFIT_GGUF_STRING)
        snprintf(out, cap, "%.*s", (int)(v.n < cap ? v.n : cap - 1), v.str);
}

/* An integer or bool key of g, or dflt. */
static int64_t key_int(const ggfit_gguf *g, const char *key, int64_t dflt)
{
    ggfit_value v;
    int64_t k = ggfit_gguf_find_key(g, key);
    if (k < 0 || !ggfit_gguf_value(g, (uint64_t)k, &v) || v.type == GGFIT_GGUF_STRING ||
        v.type == GGFIT_GGUF_ARRAY)
        return dflt;
    return v.type == GGFIT_GGUF_INT8 || v.type == GGFIT_GGUF_INT16 ||
           v.type == GGFIT_GGUF_INT32 || v.type == GGFIT_GGUF_INT64 ? v.i : (int64_t)v.u;
}

void ggfit__spec_from_draft(ggfit_request *r)
{
    /* common_params_parse: --spec-type left at its default and -md given:
     * the type from the draft's first file (common_speculative_types_from_gguf) */
    uint32_t b = r->params.llama_build;
    if (r->spec_types != SPEC_BIT(SPEC_NONE) || !r->draft_model ||
        !ggfit__llama_has(b, LLAMA_CHANGE_SPEC_TYPE_DFLASH))
        return;
    ggfit_gguf *g = NULL;
    if (ggfit_gguf_open(r->draft_model, &g, NULL))
        return;   /* no header: nothing found (the draft's load says why) */
    char arch[64], key[96];
    key_str(g, "general.architecture", arch, sizeof arch);
    if (!strcmp(arch, "dflash")) {
        /* the Markov head tells draft-dspark from draft-dflash */
        r->spec_types = ggfit_gguf_find_tensor(g, "markov_w1.weight") >= 0
                        ? SPEC_BIT(SPEC_DRAFT_DSPARK) : SPEC_BIT(SPEC_DRAFT_DFLASH);
    } else if (arch[0] && ggfit__llama_has(b, LLAMA_CHANGE_SPEC_TYPE_MTP)) {
        /* an NextN head on the last block: draft-mtp on the draft's file */
        snprintf(key, sizeof key, "%s.block_count", arch);
        int64_t n = key_int(g, key, 0);
        char name[96];
        snprintf(name, sizeof name, "blk.%lld.nextn.eh_proj.weight", (long long)(n - 1));
        if (n > 0 && ggfit_gguf_find_tensor(g, name) >= 0)
            r->spec_types = SPEC_BIT(SPEC_DRAFT_MTP);
    }
    ggfit_gguf_close(g);
}

/* What llama_vocab reads of a file for the check below: the type
 * (tokenizer.ggml.model), add_bos/add_eos and the BOS/EOS ids, with the
 * defaults llama_vocab::impl::load gives each type when the file has no
 * key (a BPE vocabulary's add_bos depends on its pre-tokenizer: known only
 * from the key), and the tokens. Without a tokenizer ("none", "no_vocab")
 * it reads nothing more: no BOS/EOS, <arch>.vocab_size dummy tokens. */
typedef struct vocab {
    char model[32];
    bool none;                /* LLAMA_VOCAB_TYPE_NONE */
    int add_bos, add_eos;     /* -1: not known */
    int64_t bos, eos;
    ggfit_value tokens;
    bool has_tokens;
    uint64_t n_tokens;
} vocab;

static void vocab_of(const ggfit_model *m, vocab *v)
{
    const ggfit_gguf *g = ggfit_model_gguf(m);
    key_str(g, "tokenizer.ggml.model", v->model, sizeof v->model);
    const char *t = v->model;
    v->none = !strcmp(t, "none") || !strcmp(t, "no_vocab");
    if (v->none) {
        char key[160];
        snprintf(key, sizeof key, "%s.vocab_size", ggfit_model_hparams(m)->arch);
        v->add_bos = v->add_eos = 0;
        v->bos = v->eos = -1;
        v->has_tokens = false;
        v->n_tokens = (uint64_t)key_int(g, key, 0);
        return;
    }
    bool spm = !strcmp(t, "llama"), wpm = !strcmp(t, "bert"), bpe = !strcmp(t, "gpt2"),
         ugm = !strcmp(t, "t5");
    int add_bos = spm || wpm ? 1 : ugm || !strcmp(t, "rwkv") ? 0 : bpe ? -1 : 0;
    int add_eos = ugm ? 1 : bpe ? -1 : 0;
    int64_t bos = spm || !strcmp(t, "plamo2") ? 1 : wpm ? 101 : bpe ? 11 : -1;
    int64_t eos = spm || !strcmp(t, "plamo2") ? 2 : bpe ? 11 : ugm ? 1 : -1;
    v->add_bos = (int)key_int(g, "tokenizer.ggml.add_bos_token", add_bos);
    v->add_eos = (int)key_int(g, "tokenizer.ggml.add_eos_token", add_eos);
    v->bos = key_int(g, "tokenizer.ggml.bos_token_id", bos);
    v->eos = key_int(g, "tokenizer.ggml.eos_token_id", eos);
    int64_t k = ggfit_gguf_find_key(g, "tokenizer.ggml.tokens");
    v->has_tokens = k >= 0 && ggfit_gguf_value(g, (uint64_t)k, &v->tokens) &&
                    v->tokens.type == GGFIT_GGUF_ARRAY;
    v->n_tokens = v->has_tokens ? v->tokens.n : 0;
}

/* The first token from id 5 (SPEC_VOCAB_CHECK_START_TOKEN_ID) whose text
 * differs, or -1. */
static int64_t first_token_diff(const vocab *a, const vocab *b)
{
    ggfit_value_iter ia = {0}, ib = {0};
    ggfit_value ta, tb;
    for (int64_t id = 0; ggfit_value_next(&a->tokens, &ia, &ta) &&
                         ggfit_value_next(&b->tokens, &ib, &tb); id++)
        if (id >= 5 && (ta.n != tb.n || memcmp(ta.str, tb.str, ta.n)))
            return id;
    return -1;
}

/* common/speculative.cpp common_speculative_are_compatible, which the
 * draft-simple type runs once the draft is loaded (after the fit): why
 * the vocabularies are refused (GGFIT_VOCAB_SAME: compatible, or not
 * known: then unknown says what was not checked); aborts when the
 * comparison of the tokens' texts would assert (llama_vocab::token_get_text
 * on a file without a tokenizer). */
static void vocab_check(const ggfit_model *tgt, const ggfit_model *dft, ggfit_vocab_check *c)
{
    vocab t, d;
    vocab_of(tgt, &t);
    vocab_of(dft, &d);
    memset(c, 0, sizeof *c);
    c->checked = true;
    c->unknown = -1;
    if (strcmp(t.model, d.model)) {
        c->mismatch = GGFIT_VOCAB_TYPE;
        snprintf(c->type_target, sizeof c->type_target, "%s", t.model);
        snprintf(c->type_draft, sizeof c->type_draft, "%s", d.model);
        return;
    }
    for (int e = 0; e < 2; e++) {
        int at = e ? t.add_eos : t.add_bos, ad = e ? d.add_eos : d.add_bos;
        int64_t it = e ? t.eos : t.bos, id = e ? d.eos : d.bos;
        if (at < 0 || ad < 0) {
            c->unknown = e;
            continue;
        }
        if (at != ad || (at && it != id)) {
            c->mismatch = GGFIT_VOCAB_SPECIAL;
            c->eos = e;
            c->add_target = at;
            c->add_draft = ad;
            c->id_target = it;
            c->id_draft = id;
            return;
        }
    }
    uint64_t nt = t.n_tokens, nd = d.n_tokens;
    uint64_t diff = nt > nd ? nt - nd : nd - nt;
    if (diff > 128) {   /* SPEC_VOCAB_MAX_SIZE_DIFFERENCE */
        c->mismatch = GGFIT_VOCAB_SIZE;
        c->n_target = nt;
        c->n_draft = nd;
        c->n_apart = diff;
        return;
    }
    c->aborts = t.none && (nt < nd ? nt : nd) > 5;
    int64_t id = t.has_tokens && d.has_tokens ? first_token_diff(&t, &d) : -1;
    if (id >= 0) {
        c->mismatch = GGFIT_VOCAB_TOKEN;
        c->token = id;
    }
}

/* -devd: the draft's devices, by their names (an rpc device also by
 * "RPCn" without its endpoint), "none" for none; their index among the
 * target's in at[]. */
static ggfit_status draft_devices(const ggfit_request *r, const ggfit_plan *out,
                                  ggfit_device *devs, uint32_t *at, size_t *n, char **err)
{
    *n = 0;
    if (!strcmp(r->draft_devices, "none"))
        return GGFIT_OK;
    for (const char *v = r->draft_devices; *v;) {
        size_t len = strcspn(v, ","), j = 0;
        for (; j < out->n_devices; j++) {
            const char *name = out->devices[j].name;
            size_t nl = strcspn(name, "[");
            if ((strlen(name) == len || nl == len) && !strncmp(name, v, len))
                break;
        }
        if (j == out->n_devices || *n >= GGFIT_MAX_DEVICES)
            return ggfit__fail(err, GGFIT_EINVAL, "-devd: invalid device: %.*s", (int)len, v);
        at[*n] = (uint32_t)j;
        devs[(*n)++] = out->devices[j];
        v += len + (v[len] == ',');
    }
    return GGFIT_OK;
}

static void add_bytes(ggfit_plan *out, bool own_weights, bool fitted);

ggfit_status ggfit__draft_plan(const ggfit_request *r, const ggfit_model *target,
                               const ggfit_params *params, ggfit_plan *out, char **err)
{
    ggfit_model *dm = NULL;
    ggfit_status rc;
    bool mtp = (r->spec_types & SPEC_BIT(SPEC_DRAFT_MTP)) != 0;
    if (r->draft_model && (rc = ggfit_model_open(r->draft_model, &dm, err)))
        return rc;
    const ggfit_model *model = dm ? dm : target;
    /* an MTP context: on the target, or on -md's model (llama_init_from_model
     * refuses one on a model without NextN blocks; the server then fails
     * to start: "failed to create MTP context"; Granite Switch's one
     * NextN block is its router layer, no MTP head, refused as well) */
    bool known;
    bool router = ggfit__model_arch(model, &known)->router_layer;
    if (mtp && (!ggfit_model_hparams(model)->n_nextn || router)) {
        rc = ggfit__fail(err, GGFIT_EINVAL, "--spec-type draft-mtp: the %s has no NextN blocks "
                         "(%s%s): llama-server cannot create its MTP context and fails to "
                         "start", dm ? "draft model" : "model", ggfit_model_hparams(model)->arch,
                         router ? ": its one is the adapters' router layer"
                                : ".nextn_predict_layers");
        ggfit_model_free(dm);
        return rc;
    }
    /* common_base_params_to_speculative: the target's params; with a
     * draft model its -devd (empty: the same devices), -ngld (default -1,
     * llama.cpp's default placement), -otd (with -cmoed/-ncmoed, which
     * common/arg.cpp turns into the draft's overrides); always -ctkd/-ctvd
     * (F16 by default, not the target's -ctk/-ctv) and n_outputs_max =
     * n_parallel; load_model then makes n_rs_seq 0, and with draft-mtp
     * the context an MTP one. The context as given (the fit has not run
     * yet). */
    ggfit_params d = *params;
    if (dm) {
        d.n_gpu_layers = r->draft.n_gpu_layers;
        d.set_n_gpu_layers = r->draft.set_n_gpu_layers;
        memcpy(d.overrides, r->draft.overrides, sizeof d.overrides);
        d.n_overrides = r->draft.n_overrides;
        d.set_overrides = r->draft.set_overrides;
        d.cpu_moe = r->draft.cpu_moe;
        d.n_cpu_moe = r->draft.n_cpu_moe;
    }
    d.type_k = r->draft.type_k;
    d.type_v = r->draft.type_v;
    d.n_outputs_max = d.n_seq;
    uint32_t b = params->llama_build;
    if ((r->spec_types & (SPEC_BIT(SPEC_DRAFT_DFLASH) | SPEC_BIT(SPEC_DRAFT_DSPARK))) &&
        ggfit__llama_has(b, LLAMA_CHANGE_DRAFT_BLOCK_OUTPUTS)) {
        /* a block of n_max + 1 positions a slot, decoded in one pass */
        uint64_t per = r->spec_draft_n_max > 0 ? (uint64_t)r->spec_draft_n_max + 1 : 1,
                 n_out = (uint64_t)d.n_seq * per;
        d.n_outputs_max = n_out < UINT32_MAX ? (uint32_t)n_out : UINT32_MAX;
    }
    if (ggfit__llama_has(b, LLAMA_CHANGE_DRAFT_NO_EMBEDDINGS)) {
        /* the draft or MTP context never pools: plain logits */
        d.embeddings = false;
        d.pooling = GGFIT_POOLING_UNSPECIFIED;
    }
    d.n_rs_seq = 0;
    d.ctx_mtp = mtp;
    /* llama_init_from_model refuses different K and V types on an MLA
     * model (and DeepSeek V4): the measurement fails, then the load, and
     * llama-server does not start */
    const ggfit_hparams *dh = ggfit_model_hparams(model);
    bool mla = (dh->n_embd_head_k_mla && dh->n_embd_head_v_mla) ||
               ggfit__model_arch(model, &known)->same_kv_types;
    if (mla && d.type_k != d.type_v) {
        rc = ggfit__fail(err, GGFIT_EINVAL, "%s: the %s does not support different K (%s) "
                         "and V (%s) cache types (-ctkd, -ctvd): llama-server fails to create "
                         "it and does not start", dm ? "-md" : "--spec-type draft-mtp",
                         dm ? "draft model" : "MTP context", ggfit_type_name(d.type_k),
                         ggfit_type_name(d.type_v));
        ggfit_model_free(dm);
        return rc;
    }
    ggfit_device devs[GGFIT_MAX_DEVICES];
    uint32_t at[GGFIT_MAX_DEVICES];
    size_t n_devs = out->n_devices;
    for (size_t j = 0; j < n_devs; j++) {
        devs[j] = out->devices[j];
        at[j] = (uint32_t)j;
    }
    rc = dm && r->draft_devices[0] ? draft_devices(r, out, devs, at, &n_devs, err) : GGFIT_OK;
    if (!rc && (rc = ggfit_project(model, &d, devs, n_devs, &out->draft, NULL, err)) && err &&
        *err) {
        /* the server's measurement fails, then its load: it does not start */
        char *why = *err;
        *err = NULL;
        rc = ggfit__fail(err, rc, "%s: the %s cannot be made (llama-server does not start): "
                         "%s", dm ? "-md" : "--spec-type draft-mtp",
                         dm ? "draft model's context" : "MTP context", why);
        ggfit_free(why);
    }
    for (uint32_t j = 0; !rc && j < out->draft.n_devices; j++)
        out->draft.device_of[j] = at[out->draft.device_of[j]];   /* the target's indices */
    bool simple = (r->spec_types & SPEC_BIT(SPEC_DRAFT_SIMPLE)) != 0;
    if (!rc && dm && simple)
        vocab_check(target, dm, &out->draft_vocab);
    /* a type that runs the draft: draft-simple, or one with a draft context
     * (eagle3, dflash, dspark, mtp on -md's file) */
    out->draft_unused = !rc && dm && !simple && !(r->spec_types & SPEC_CTX_TYPES);
    if (!dm)   /* an MTP context's compute estimated: its architecture's */
        snprintf(out->draft_arch, sizeof out->draft_arch, "%s",
                 ggfit_model_hparams(model)->arch);
    bool rpc = false;
    for (size_t j = 0; j < out->n_devices; j++)
        rpc |= out->devices[j].kind == GGFIT_BACKEND_RPC;
    out->draft_rpc = !rc && rpc;
    bool own_weights = dm != NULL;
    if (rc) {
        ggfit_model_free(dm);
        return rc;
    }
    out->has_draft = true;
    out->draft_mtp = !r->draft_model;
    out->draft_model = r->draft_model ? r->draft_model : NULL;
    out->draft_params = d;
    if (ggfit__llama_has(b, LLAMA_CHANGE_FIT_N_STREAMS)) {
        /* fitted beside the target: its bytes come at the fitted context
         * (ggfit__draft_fitted) */
        ggfit_fit_extra *e = ggfit__malloc(sizeof *e);
        if (!e) {
            ggfit_model_free(dm);
            return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        }
        e->own = dm;
        ggfit__params_copy(&e->params, &d);
        e->n_devs = (uint32_t)n_devs;
        memcpy(e->at, at, sizeof e->at);
        e->shares_model = !own_weights;
        out->fit_options.extra = e;
        return GGFIT_OK;
    }
    ggfit_model_free(dm);
    add_bytes(out, own_weights, false);
    return GGFIT_OK;
}

ggfit_status ggfit__draft_fitted(const ggfit_model *target, uint32_t n_ctx, ggfit_plan *out,
                                 char **err)
{
    const ggfit_fit_extra *e = out->fit_options.extra;
    if (!e)
        return GGFIT_OK;
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n = 0;
    for (uint32_t j = 0; j < e->n_devs && j < GGFIT_MAX_DEVICES; j++)
        if (e->at[j] < out->n_devices)
            devs[n++] = out->devices[e->at[j]];
    ggfit__params_copy(&out->draft_params, &e->params);
    out->draft_params.n_ctx = n_ctx;
    ggfit_status rc = ggfit_project(e->own ? e->own : target, &out->draft_params, devs, n,
                                    &out->draft, NULL, err);
    if (rc)
        return rc;
    for (uint32_t j = 0; j < out->draft.n_devices; j++)
        out->draft.device_of[j] = e->at[out->draft.device_of[j]];
    add_bytes(out, !e->shares_model, true);
    return GGFIT_OK;
}

/* The draft's bytes (out->draft) into the fit options: its devices' at
 * their index among the target's, an MTP context's weights (the target's)
 * left out; the Host row for the verdict only. fitted: the extra model's,
 * which the fit measures itself (extra_in_used). */
static void add_bytes(ggfit_plan *out, bool own_weights, bool fitted)
{
    /* (on a GPU machine, the index in ggml's device list the server adds
     * them at) */
    for (uint32_t j = 0; j < out->draft.n_devices; j++) {
        const ggfit_mem *mm = &out->draft.devices[j];
        uint64_t bytes = (own_weights ? mm->model : 0) + mm->context + mm->compute;
        out->fit_options.extra_used[out->draft.device_of[j]] += bytes;
        if (fitted)
            out->fit_options.extra_in_used[out->draft.device_of[j]] += bytes;
    }
    const ggfit_mem *h = &out->draft.host, *c = &out->draft.cpu_extra;
    out->fit_options.extra_host += (own_weights ? h->model + c->model : 0) + h->context +
                                   h->compute + c->context + c->compute;
}

void ggfit__spec_args(const ggfit_request *r, char *out, size_t cap)
{
    size_t k = 0;
    out[0] = '\0';
    for (int t = SPEC_DRAFT_SIMPLE; t < SPEC_COUNT && k < cap; t++)
        if (r->spec_types & SPEC_BIT(t))
            k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? "," : "--spec-type ",
                                  spec_names[t]);
    if (r->spec_draft_n_max != 3 && k < cap)
        k += (size_t)snprintf(out + k, cap - k, "%s--spec-draft-n-max %d", k ? " " : "",
                              r->spec_draft_n_max);
    if (r->spec_mod_n_max != 64 && k < cap)
        k += (size_t)snprintf(out + k, cap - k, "%s--spec-ngram-mod-n-max %d", k ? " " : "",
                              r->spec_mod_n_max);
    for (int j = 0; j < 3 && k < cap; j++)
        if (r->spec_size_m[j] != 48)
            k += (size_t)snprintf(out + k, cap - k, "%s%s %u", k ? " " : "", size_m_flags[j],
                                  r->spec_size_m[j]);
    if (r->draft_model && r->draft_devices[0] && k < cap)
        snprintf(out + k, cap - k, "%s-devd %s", k ? " " : "", r->draft_devices);
}
