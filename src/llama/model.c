/*
 * model.c - the model description: hyperparameters as llama.cpp reads them
 * from "<arch>.*" keys, and each tensor's layer and role.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "llama/arch.h"
#include "llama/model.h"
#include "llama/patterns.h"

#define MAX_LAYERS GGFIT_MAX_LAYERS

struct ggfit_model {
    ggfit_gguf *g;
    uint64_t serial;            /* this model's number in the program: the
                                   kept graphs and memos name their model by
                                   it, never by its address, which a model
                                   opened later may have (their cache passes
                                   on to it: graph_cache.c) */
    ggfit_hparams hp;
    ggfit_layer_info *layers;   /* hp.n_layer entries */
    ggfit_tensor *tensors;
    uint64_t n_tensors;
    int64_t *block_first;       /* per layer: its first tensor, -1 */
    int64_t *block_next;        /* per tensor: the next of its layer, -1 */
    uint32_t *block_rest;       /* per tensor of a block: where its name goes
                                   on past "blk.N." (its rest) */
    uint32_t *rest_id;          /* per tensor of a block: its rest's number,
                                   which lookups compare */
    uint32_t *rest_tensor;      /* per rest number: a tensor it is the rest of */
    uint32_t n_rests, rest_cap;
    uint32_t *rest_slot;        /* hash set of the rests: number + 1, 0 empty */
    uint64_t rest_mask;
    int32_t *rest_at;           /* [block * n_rests + rest]: the last tensor of
                                   that block and rest, -1; NULL: the chains */
    uint32_t rest_rows;         /* blocks in rest_at */
    uint16_t *facts;            /* per tensor: GGFIT_TFACT_* (placement) */
    uint8_t *recurrent;         /* attention.recurrent_layers per layer, NULL */
    uint8_t swa_form;           /* attention.sliding_window_pattern's form:
                                   GGFIT_KEY_* (model.h) */
    bool swa_scalar_on;         /* a scalar pattern's value is not 0 */
    uint64_t swa_n;             /* an array pattern's length */
    uint64_t role_bytes[GGFIT_ROLE_COUNT];
    uint64_t input_bytes, output_bytes;
    struct model_cache *cache;  /* the last graph projected, shared by calls */
    uint32_t n_block_phys;      /* blocks in the file (< hp.n_layer: looped) */
    bool router;                /* the last layer is the router's (expand_router) */
    const struct ggfit_arch *row; /* the architecture's registry row, looked
                                   up once at load (the generic row for a
                                   name the registry does not know) */
    bool row_known;             /* the registry knows hp.arch */
};

/* What the model keeps for the projections (ggfit__model_keep_take). */
/* One per thread that projects the model at once (a batch's lines on
 * every CPU): a thread that found the only one taken built its graphs from
 * nothing again. */
#define MODEL_KEPT 4
struct model_cache {
    pthread_mutex_t lock;
    void *kept[MODEL_KEPT];        /* n_kept of them, the last given last */
    uint32_t n_kept;
    void (*free_kept)(void *);
};
static const char *const role_names[GGFIT_ROLE_COUNT] = {
    [GGFIT_ROLE_TOKEN_EMBD] = "token_embd",
    [GGFIT_ROLE_OUTPUT] = "output",
    [GGFIT_ROLE_OUTPUT_NORM] = "output_norm",
    [GGFIT_ROLE_ATTENTION] = "attention",
    [GGFIT_ROLE_FFN] = "ffn",
    [GGFIT_ROLE_EXPERTS] = "experts",
    [GGFIT_ROLE_SHARED_EXPERTS] = "shared_experts",
    [GGFIT_ROLE_ROUTER] = "router",
    [GGFIT_ROLE_NORM] = "norm",
    [GGFIT_ROLE_RECURRENT] = "recurrent",
    [GGFIT_ROLE_NEXTN] = "nextn",
    [GGFIT_ROLE_OTHER] = "other",
};

const char *ggfit_role_name(int role)
{
    return role >= 0 && role < GGFIT_ROLE_COUNT ? role_names[role] : NULL;
}

/* ---- reading keys --------------------------------------------------------- */

typedef struct loader {
    ggfit_model *m;
    const char *path;
    char **err;
} loader;

/* Finds "<arch>.<suffix>" (or the plain key when suffix starts with '!'). */
static bool find(const loader *l, const char *suffix, ggfit_value *v, char *key,
                 size_t keylen)
{
    if (suffix[0] == '!') {
        ggfit__str_put(key, keylen, 0, suffix + 1);
    } else {
        size_t at = ggfit__str_put(key, keylen, 0, l->m->hp.arch);
        at = ggfit__str_put(key, keylen, at, ".");
        ggfit__str_put(key, keylen, at, suffix);
    }
    int64_t i = ggfit_gguf_find_key(l->m->g, key);
    return i >= 0 && ggfit_gguf_value(l->m->g, (uint64_t)i, v);
}

static bool is_int_type(uint32_t t)
{
    switch (t) {
    case GGFIT_GGUF_UINT8: case GGFIT_GGUF_INT8: case GGFIT_GGUF_UINT16:
    case GGFIT_GGUF_INT16: case GGFIT_GGUF_UINT32: case GGFIT_GGUF_INT32:
    case GGFIT_GGUF_UINT64: case GGFIT_GGUF_INT64: case GGFIT_GGUF_BOOL:
        return true;
    default:
        return false;
    }
}

static ggfit_status bad_u32(const loader *l, const char *key, const ggfit_value *v)
{
    return ggfit__fail(l->err, GGFIT_EFORMAT,
                       "%s: key '%s' must be an integer from 0 to 4294967295 "
                       "(it is %s %lld)",
                       l->path, key, ggfit_gguf_type_name(v->type),
                       (long long)v->i);
}

/* Reads an optional scalar integer key into *out (left alone if absent). */
static ggfit_status get_u32(const loader *l, const char *suffix, uint32_t *out)
{
    char key[256];
    ggfit_value v;
    if (!find(l, suffix, &v, key, sizeof key))
        return GGFIT_OK;
    if (!is_int_type(v.type) || v.i < 0 || v.u > UINT32_MAX)
        return bad_u32(l, key, &v);
    *out = (uint32_t)v.u;
    return GGFIT_OK;
}

/* attention.recurrent_layers: which layers are recurrent, one integer (or
 * bool) per layer or one for all (llama.cpp's get_key_or_arr into
 * hparams.is_recr_impl); m->recurrent stays NULL when the key is absent.
 * Only the architectures that read the key check it (their arr_keys,
 * llama/arch.h), as llama.cpp's do: another one loads a file whatever its
 * length, so the entries are kept as far as they go, and none is refused
 * here. */
static ggfit_status get_recurrent_layers(const loader *l)
{
    char key[256];
    ggfit_value v, e;
    ggfit_model *m = l->m;
    if (!find(l, "attention.recurrent_layers", &v, key, sizeof key))
        return GGFIT_OK;
    bool arr = v.type == GGFIT_GGUF_ARRAY;
    if (arr ? !is_int_type(v.elem_type) : !is_int_type(v.type))
        return GGFIT_OK;
    m->recurrent = ggfit__calloc(m->hp.n_layer ? m->hp.n_layer : 1, 1);
    if (!m->recurrent)
        return ggfit__fail(l->err, GGFIT_ENOMEM, "%s: out of memory", l->path);
    if (!arr) {
        for (uint32_t il = 0; il < m->hp.n_layer; il++)
            m->recurrent[il] = v.u != 0;
        return GGFIT_OK;
    }
    ggfit_value_iter it = {0};
    for (uint32_t il = 0; il < m->hp.n_layer && ggfit_value_next(&v, &it, &e); il++)
        m->recurrent[il] = e.u != 0;
    return GGFIT_OK;
}

/* attention.sliding_window_pattern as the file gives it. What it means
 * is the architecture's (llama/arch.h, swa_key): a period, one value per
 * layer, or nothing when the architecture reads no such key; so it is
 * recorded here, the layers' swa flags set from an array as far as it
 * goes, and checked where the architecture is known (project/arch_keys.c). */
static void get_swa_pattern(const loader *l)
{
    char key[256];
    ggfit_value v, e;
    ggfit_model *m = l->m;
    if (!find(l, "attention.sliding_window_pattern", &v, key, sizeof key))
        return;
    if (v.type != GGFIT_GGUF_ARRAY) {
        bool ok = is_int_type(v.type) && v.i >= 0 && v.u <= UINT32_MAX;
        m->swa_form = ok ? GGFIT_KEY_SCALAR : GGFIT_KEY_BAD;
        m->hp.swa_pattern = ok ? (uint32_t)v.u : 0;
        m->swa_scalar_on = ok && v.u != 0;
        return;
    }
    m->swa_form = GGFIT_KEY_ARRAY;
    m->swa_n = v.n;
    m->hp.has_swa_layers = true;
    if (!is_int_type(v.elem_type))
        return;
    ggfit_value_iter it = {0};
    for (uint32_t il = 0; il < m->hp.n_layer && ggfit_value_next(&v, &it, &e); il++)
        m->layers[il].swa = e.u != 0;
}

/* llama.cpp reads these keys as uint32 (GGUFMeta::GKV<uint32_t>), which
 * refuses a key of another type ("key ... has wrong type"). */
static ggfit_status not_uint32(const loader *l, const char *key, uint32_t type)
{
    return ggfit__fail(l->err, GGFIT_EFORMAT,
                       "%s: key '%s' has type %s; llama.cpp reads it as a uint32 and refuses "
                       "the file", l->path, key, ggfit_gguf_type_name(type));
}

/* Reads a key that is a scalar for every layer or an array with one integer
 * per layer, into the uint32_t at byte offset `field` of each layer, as
 * llama_model_loader::get_key_or_arr reads it into a per-layer array for
 * block_count layers: a uint32 scalar, or an array of exactly that many
 * uint32, int32 or bool (get_arr's element types; a float or string array
 * is an assertion, any other a refusal). */
static ggfit_status get_per_layer(const loader *l, const char *suffix, size_t field)
{
    char key[256];
    ggfit_value v, e;
    ggfit_model *m = l->m;
    if (!find(l, suffix, &v, key, sizeof key))
        return GGFIT_OK;
    if (v.type != GGFIT_GGUF_ARRAY) {
        if (v.type != GGFIT_GGUF_UINT32)
            return not_uint32(l, key, v.type);
        for (uint32_t il = 0; il < m->hp.n_layer; il++)
            *(uint32_t *)((char *)&m->layers[il] + field) = (uint32_t)v.u;
        return GGFIT_OK;
    }
    bool int_elems = v.elem_type == GGFIT_GGUF_UINT32 || v.elem_type == GGFIT_GGUF_INT32 ||
                     v.elem_type == GGFIT_GGUF_BOOL;
    if (!int_elems || v.n != m->hp.n_layer)
        return ggfit__fail(l->err, GGFIT_EFORMAT,
                           "%s: key '%s' is an array of %llu %s, expected %u integers "
                           "(one per layer); llama.cpp refuses it",
                           l->path, key, (unsigned long long)v.n,
                           ggfit_gguf_type_name(v.elem_type), m->hp.n_layer);
    ggfit_value_iter it = {0};
    for (uint32_t il = 0; ggfit_value_next(&v, &it, &e); il++) {
        if (e.i < 0)
            return bad_u32(l, key, &e);
        *(uint32_t *)((char *)&m->layers[il] + field) = (uint32_t)e.u;
    }
    return GGFIT_OK;
}

static ggfit_status get_string(const loader *l, const char *key, char *out, size_t n,
                      bool required)
{
    ggfit_value v;
    char k[256];
    if (!find(l, key, &v, k, sizeof k)) {
        if (required)
            return ggfit__fail(l->err, GGFIT_EFORMAT, "%s: key '%s' is missing",
                               l->path, k);
        return GGFIT_OK;
    }
    if (v.type != GGFIT_GGUF_STRING)
        return ggfit__fail(l->err, GGFIT_EFORMAT, "%s: key '%s' must be a string, it is a %s",
                           l->path, k, ggfit_gguf_type_name(v.type));
    if (required && (v.n == 0 || v.n >= n || memchr(v.str, 0, (size_t)v.n)))
        return ggfit__fail(l->err, GGFIT_EFORMAT,
                           "%s: key '%s' must be 1 to %zu bytes without NUL", l->path,
                           k, n - 1);
    size_t len = v.n < n ? (size_t)v.n : n - 1;
    /* Cut a long name at a character boundary, not inside a UTF-8 sequence. */
    if (len < v.n)
        while (len > 0 && ((unsigned char)v.str[len] & 0xC0) == 0x80)
            len--;
    memcpy(out, v.str, len);
    out[len] = '\0';
    return GGFIT_OK;
}

static uint32_t max_field(const ggfit_model *m, size_t field)
{
    uint32_t mx = 0;
    for (uint32_t il = 0; il < m->hp.n_layer; il++) {
        uint32_t v = *(const uint32_t *)((const char *)&m->layers[il] + field);
        if (v > mx)
            mx = v;
    }
    return mx;
}

static ggfit_status read_hparams(loader *l)
{
    ggfit_model *m = l->m;
    ggfit_hparams *hp = &m->hp;
    ggfit_status rc;

    if ((rc = get_string(l, "!general.architecture", hp->arch, sizeof hp->arch, true)) ||
        (rc = get_string(l, "!general.name", hp->name, sizeof hp->name, false)) ||
        (rc = get_u32(l, "!general.file_type", &hp->file_type)))
        return rc;

    char key[256];
    ggfit_value v;
    if (!find(l, "block_count", &v, key, sizeof key))
        return ggfit__fail(l->err, GGFIT_EFORMAT, "%s: key '%s' is missing", l->path, key);
    if (v.type != GGFIT_GGUF_UINT32)
        return not_uint32(l, key, v.type);
    hp->n_layer = (uint32_t)v.u;
    /* load_hparams asserts 0 < block_count <= LLAMA_MAX_LAYERS: its
     * per-layer arrays hold that many. */
    if (hp->n_layer == 0 || hp->n_layer > MAX_LAYERS)
        return ggfit__fail(l->err, GGFIT_ELIMIT,
                           "%s: %s is %u; llama.cpp loads 1 to %d blocks (LLAMA_MAX_LAYERS)",
                           l->path, key, hp->n_layer, MAX_LAYERS);
    m->layers = ggfit__calloc(hp->n_layer ? hp->n_layer : 1, sizeof *m->layers);
    if (!m->layers)
        return ggfit__fail(l->err, GGFIT_ENOMEM, "%s: out of memory", l->path);

#define LAYER_FIELD(f) offsetof(ggfit_layer_info, f)
    if ((rc = get_per_layer(l, "attention.head_count", LAYER_FIELD(n_head))) ||
        (rc = get_per_layer(l, "attention.head_count_kv", LAYER_FIELD(n_head_kv))) ||
        (rc = get_per_layer(l, "feed_forward_length", LAYER_FIELD(n_ff))))
        return rc;
    /* head_count_kv defaults to head_count, as in llama.cpp. */
    if (!find(l, "attention.head_count_kv", &v, key, sizeof key))
        for (uint32_t il = 0; il < hp->n_layer; il++)
            m->layers[il].n_head_kv = m->layers[il].n_head;
    hp->n_head_max = max_field(m, LAYER_FIELD(n_head));
    hp->n_head_kv_max = max_field(m, LAYER_FIELD(n_head_kv));
    hp->n_ff_max = max_field(m, LAYER_FIELD(n_ff));
#undef LAYER_FIELD

    /* load_hparams requires these two of every architecture ("key not
     * found in model"). */
    static const char *const required[] = { "context_length", "embedding_length" };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!find(l, required[i], &v, key, sizeof key))
            return ggfit__fail(l->err, GGFIT_EFORMAT,
                               "%s: key '%s' is missing; llama.cpp refuses the file", l->path,
                               key);
    static const struct { const char *key; size_t off; } scalars[] = {
        { "context_length", offsetof(ggfit_hparams, n_ctx_train) },
        { "embedding_length", offsetof(ggfit_hparams, n_embd) },
        { "vocab_size", offsetof(ggfit_hparams, n_vocab) },
        { "nextn_predict_layers", offsetof(ggfit_hparams, n_nextn) },
        { "attention.key_length", offsetof(ggfit_hparams, n_embd_head_k) },
        { "attention.value_length", offsetof(ggfit_hparams, n_embd_head_v) },
        { "attention.key_length_swa", offsetof(ggfit_hparams, n_embd_head_k_swa) },
        { "attention.value_length_swa", offsetof(ggfit_hparams, n_embd_head_v_swa) },
        { "rope.dimension_count", offsetof(ggfit_hparams, n_rot) },
        { "expert_count", offsetof(ggfit_hparams, n_expert) },
        { "expert_used_count", offsetof(ggfit_hparams, n_expert_used) },
        { "expert_shared_count", offsetof(ggfit_hparams, n_expert_shared) },
        { "expert_feed_forward_length", offsetof(ggfit_hparams, n_ff_exp) },
        { "expert_shared_feed_forward_length", offsetof(ggfit_hparams, n_ff_shexp) },
        { "leading_dense_block_count", offsetof(ggfit_hparams, n_layer_dense_lead) },
        { "attention.sliding_window", offsetof(ggfit_hparams, n_swa) },
        { "attention.q_lora_rank", offsetof(ggfit_hparams, n_lora_q) },
        { "attention.kv_lora_rank", offsetof(ggfit_hparams, n_lora_kv) },
        { "attention.key_length_mla", offsetof(ggfit_hparams, n_embd_head_k_mla) },
        { "attention.value_length_mla", offsetof(ggfit_hparams, n_embd_head_v_mla) },
        { "ssm.conv_kernel", offsetof(ggfit_hparams, ssm_d_conv) },
        { "ssm.inner_size", offsetof(ggfit_hparams, ssm_d_inner) },
        { "ssm.state_size", offsetof(ggfit_hparams, ssm_d_state) },
        { "ssm.time_step_rank", offsetof(ggfit_hparams, ssm_dt_rank) },
        { "ssm.group_count", offsetof(ggfit_hparams, ssm_n_group) },
        { "full_attention_interval", offsetof(ggfit_hparams, full_attn_interval) },
        { "shortconv.l_cache", offsetof(ggfit_hparams, shortconv_l_cache) },
        { "wkv.head_size", offsetof(ggfit_hparams, wkv_head_size) },
        { "token_shift_count", offsetof(ggfit_hparams, token_shift_count) },
        { "kda.head_dim", offsetof(ggfit_hparams, n_embd_head_kda) },
    };
    hp->token_shift_count = 2;   /* llama_hparams' default */
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
        if ((rc = get_u32(l, scalars[i].key, (uint32_t *)((char *)hp + scalars[i].off))))
            return rc;
    if ((rc = get_recurrent_layers(l)))
        return rc;
    if (hp->n_nextn > hp->n_layer)
        return ggfit__fail(l->err, GGFIT_EFORMAT,
                           "%s: %s.nextn_predict_layers is %u, more than the %u blocks",
                           l->path, hp->arch, hp->n_nextn, hp->n_layer);
    for (uint32_t il = hp->n_layer - hp->n_nextn; il < hp->n_layer; il++)
        m->layers[il].nextn = true;

    get_swa_pattern(l);

    /* Defaults llama.cpp applies. */
    uint32_t n_head0 = hp->n_layer ? m->layers[0].n_head : 0;
    if (!hp->n_embd_head_k && n_head0)
        hp->n_embd_head_k = hp->n_embd / n_head0;
    if (!hp->n_embd_head_v && n_head0)
        hp->n_embd_head_v = hp->n_embd / n_head0;
    if (!hp->n_embd_head_k_swa)
        hp->n_embd_head_k_swa = hp->n_embd_head_k;
    if (!hp->n_embd_head_v_swa)
        hp->n_embd_head_v_swa = hp->n_embd_head_v;
    if (!hp->n_vocab && find(l, "!tokenizer.ggml.tokens", &v, key, sizeof key) &&
        v.type == GGFIT_GGUF_ARRAY && v.n <= UINT32_MAX)
        hp->n_vocab = (uint32_t)v.n;
    return GGFIT_OK;
}

/* ---- tensor roles ------------------------------------------------------- */

static bool starts(const char *s, const char *prefix)
{
    /* strncmp(s, prefix, strlen(prefix)) == 0, without the calls: the
     * roles test a dozen prefixes on each of hundreds of names */
    for (; *prefix; s++, prefix++)
        if (*s != *prefix)
            return false;
    return true;
}

/* Role of a block tensor from the part of its name after "blk.N.". */
static ggfit_role block_role(const char *rest)
{
    if (starts(rest, "nextn."))
        return GGFIT_ROLE_NEXTN;
    if (strstr(rest, "_exps") || strstr(rest, "_chexps"))
        return GGFIT_ROLE_EXPERTS;
    if (strstr(rest, "_shexp"))
        return GGFIT_ROLE_SHARED_EXPERTS;
    if (starts(rest, "ffn_gate_inp") || starts(rest, "exp_probs_b") ||
        starts(rest, "ffn_exp_probs_b"))
        return GGFIT_ROLE_ROUTER;
    if (starts(rest, "ssm_") || starts(rest, "shortconv") ||
        starts(rest, "time_mix_") || starts(rest, "channel_mix_") ||
        starts(rest, "conv1d"))
        return GGFIT_ROLE_RECURRENT;
    if (strstr(rest, "norm"))
        return GGFIT_ROLE_NORM;
    if (starts(rest, "attn_"))
        return GGFIT_ROLE_ATTENTION;
    if (starts(rest, "ffn_"))
        return GGFIT_ROLE_FFN;
    return GGFIT_ROLE_OTHER;
}

/* Role of a tensor outside the blocks; *output tells whether llama.cpp puts
 * it in the output layer. */
static ggfit_role global_role(const char *name, bool *output)
{
    *output = false;
    if (starts(name, "output_norm")) {
        *output = true;
        return GGFIT_ROLE_OUTPUT_NORM;
    }
    if (starts(name, "output.") || starts(name, "cls")) {
        *output = true;
        return GGFIT_ROLE_OUTPUT;
    }
    /* AltUp's projections (altup_*) are output-layer tensors in llama.cpp. */
    if (starts(name, "altup_proj.") || starts(name, "altup_unembd_proj.")) {
        *output = true;
        return GGFIT_ROLE_OTHER;
    }
    if (strstr(name, "norm"))
        return GGFIT_ROLE_NORM;
    if (starts(name, "token_embd") || starts(name, "pos_embd") ||
        starts(name, "token_types") || starts(name, "per_layer_token_embd"))
        return GGFIT_ROLE_TOKEN_EMBD;
    return GGFIT_ROLE_OTHER;
}

/* Block index of "blk.N.<rest>", or -1; *rest points after the dot. */
static int64_t block_index(const char *name, const char **rest)
{
    if (!starts(name, "blk."))
        return -1;
    const char *p = name + 4;
    int64_t n = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (*p - '0');
        if (n > MAX_LAYERS)
            return MAX_LAYERS;
    }
    if (*p != '.')
        return -1;
    *rest = p + 1;
    return n;
}

/* ---- tensor facts for placement ------------------------------------------ */

/* The part of a block tensor's name after "blk.N." (past an "enc." or
 * "dec." prefix). */
static const char *block_rest(const char *name)
{
    const char *blk = strstr(name, "blk.");
    const char *dot = strchr((blk ? blk : name) + 4, '.');
    return dot ? dot + 1 : name;
}

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
        name_has(n, "conv.weight") || name_has(n, "conv1d") ||
        (name_has(n, "ssm_a") && !name_has(n, "ssm_alpha")) ||
        name_has(n, "ssm_d.") ||
        name_has(n, "attn_sinks"))
        return OP_OTHER;
    if (t->role == GGFIT_ROLE_EXPERTS && t->info->n_dims == 3)
        return OP_MUL_MAT_ID;
    if (t->info->n_dims == 2)
        return OP_MUL_MAT;
    return OP_OTHER;
}

_Static_assert((int)OP_OTHER <= (int)GGFIT_TFACT_OP && GGFIT_TFACT_FFN_SHIFT + GGFIT_FFN_KIND_COUNT <= 8,
               "weight ops and FFN kinds fit their bits of GGFIT_TFACT_*");

/* What weight placement (project/weights.c, override.c) would otherwise work
 * out from the name on every projection. */
static uint16_t tensor_facts(const ggfit_tensor *t)
{
    const char *n = t->info->name;
    uint16_t f = (uint16_t)tensor_op(t);
    if (t->layer >= 0) {
        f |= (uint16_t)(ggfit__ffn_kinds(block_rest(n)) << GGFIT_TFACT_FFN_SHIFT);
    }
    if (!strcmp(n, "token_embd.weight"))
        f |= GGFIT_TFACT_TOKEN_EMBD;
    if (!strcmp(n, "output.weight"))
        f |= GGFIT_TFACT_OUTPUT;
    return f;
}

/* ---- the rests of block tensors' names ------------------------------------- */

/* Each distinct rest (the name past "blk.N.") has a number, so that a
 * lookup by layer and rest hashes the rest once and then reads a table or
 * compares numbers along the layer's chain instead of strings, and so that
 * what the name decides (role, facts) is worked out once per rest, not once
 * per layer. A model has a few dozen rests: the set starts small and
 * doubles. */

/* What classify works out from a block tensor's name, per rest: its role
 * (block_role reads the rest alone) and its facts for the last prefix kind
 * ("blk.", "enc.blk.", "dec.blk.") and dimension count seen with it. The
 * facts depend on nothing else: tensor_op and tensor_facts read the whole
 * name, but none of the strings they look for holds a digit, so no match
 * can take in the block number, and what lies before it is the kind's. */
typedef struct rest_memo {
    uint8_t role;             /* ggfit_role */
    uint8_t kind;
    uint8_t n_dims;           /* at most 4 (the reader refuses more) */
    bool has_facts;
    uint16_t facts;
} rest_memo;

static const char *rest_of(const ggfit_model *m, uint64_t i)
{
    return m->tensors[i].info->name + m->block_rest[i];
}

/* The slot of rest: the one holding its number + 1, or the empty one where
 * it belongs. */
static uint64_t rest_slot(const ggfit_model *m, const char *rest)
{
    uint64_t h = ggfit__hash(rest, strlen(rest)) & m->rest_mask;
    while (m->rest_slot[h] && strcmp(rest_of(m, m->rest_tensor[m->rest_slot[h] - 1]), rest))
        h = (h + 1) & m->rest_mask;
    return h;
}

/* Room for one more rest: the per-rest arrays (and *memo) double when full,
 * the hash set when it would be more than half full. False when out of
 * memory, with everything as it was. */
static bool rest_room(ggfit_model *m, rest_memo **memo)
{
    if (m->n_rests == m->rest_cap) {
        uint32_t cap = m->rest_cap ? 2 * m->rest_cap : 32;
        uint32_t *t = ggfit__realloc(m->rest_tensor, cap * sizeof *t);
        if (!t)
            return false;
        m->rest_tensor = t;
        rest_memo *r = ggfit__realloc(*memo, cap * sizeof *r);
        if (!r)
            return false;
        *memo = r;
        m->rest_cap = cap;
    }
    uint64_t slots = m->rest_mask + 1;
    if (2 * ((uint64_t)m->n_rests + 1) <= slots)
        return true;
    uint32_t *slot = ggfit__calloc((size_t)(2 * slots), sizeof *slot);
    if (!slot)
        return false;
    free(m->rest_slot);
    m->rest_slot = slot;
    m->rest_mask = 2 * slots - 1;
    for (uint32_t id = 0; id < m->n_rests; id++) {
        const char *rest = rest_of(m, m->rest_tensor[id]);
        uint64_t h = ggfit__hash(rest, strlen(rest)) & m->rest_mask;
        while (m->rest_slot[h])
            h = (h + 1) & m->rest_mask;
        m->rest_slot[h] = id + 1;
    }
    return true;
}

/* The tensor of each block and rest in one table, when the blocks share
 * their rests as they do (a few dozen rests, each in every block): a lookup
 * then reads it instead of walking the block's chain. The last tensor of a
 * block and rest is the one the chain, newest first, would find. Without
 * the memory (or where the table would be large) the chains serve. */
static void table_rests(ggfit_model *m)
{
    uint64_t cells = (uint64_t)m->hp.n_layer * m->n_rests;
    if (!cells || cells > 4 * m->n_tensors + 1024)
        return;
    if (!(m->rest_at = ggfit__malloc((size_t)cells * sizeof *m->rest_at)))
        return;
    for (uint64_t k = 0; k < cells; k++)
        m->rest_at[k] = -1;
    for (uint64_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].layer >= 0)
            m->rest_at[(uint64_t)m->tensors[i].layer * m->n_rests + m->rest_id[i]] = (int32_t)i;
    m->rest_rows = m->hp.n_layer;
}

/* A block tensor's rest number, role and facts (from the rest's memo, or
 * worked out and kept there). */
static ggfit_status classify_block(loader *l, uint64_t i, const char *rest, uint8_t kind,
                                   rest_memo **memo)
{
    ggfit_model *m = l->m;
    ggfit_tensor *t = &m->tensors[i];
    uint64_t h = rest_slot(m, rest);
    if (!m->rest_slot[h]) {
        if (!rest_room(m, memo))
            return ggfit__fail(l->err, GGFIT_ENOMEM, "%s: out of memory", l->path);
        h = rest_slot(m, rest);   /* the set may have grown */
        m->rest_tensor[m->n_rests] = (uint32_t)i;
        (*memo)[m->n_rests] = (rest_memo){ .role = (uint8_t)block_role(rest) };
        m->rest_slot[h] = ++m->n_rests;
    }
    uint32_t id = m->rest_id[i] = m->rest_slot[h] - 1;
    rest_memo *r = &(*memo)[id];
    t->role = (ggfit_role)r->role;
    if (!r->has_facts || r->kind != kind || r->n_dims != t->info->n_dims) {
        r->facts = tensor_facts(t);
        r->kind = kind;
        r->n_dims = (uint8_t)t->info->n_dims;
        r->has_facts = true;
    }
    m->facts[i] = r->facts;
    return GGFIT_OK;
}

static ggfit_status classify(loader *l)
{
    ggfit_model *m = l->m;
    m->n_tensors = ggfit_gguf_n_tensors(m->g);
    if (m->n_tensors > INT32_MAX)
        return ggfit__fail(l->err, GGFIT_ELIMIT, "%s: %llu tensors, more than ggfit's limit "
                           "of %d", l->path, (unsigned long long)m->n_tensors, INT32_MAX);
    size_t n1 = (size_t)(m->n_tensors ? m->n_tensors : 1);
    m->tensors = ggfit__calloc(n1, sizeof *m->tensors);
    m->block_first = ggfit__malloc((size_t)(m->hp.n_layer ? m->hp.n_layer : 1) *
                                   sizeof *m->block_first);
    m->block_next = ggfit__malloc(n1 * sizeof *m->block_next);
    m->block_rest = ggfit__malloc(n1 * sizeof *m->block_rest);
    m->facts = ggfit__malloc(n1 * sizeof *m->facts);
    m->rest_id = ggfit__malloc(n1 * sizeof *m->rest_id);
    m->rest_slot = ggfit__calloc(64, sizeof *m->rest_slot);
    m->rest_mask = 63;
    if (!m->tensors || !m->block_first || !m->block_next || !m->block_rest || !m->facts ||
        !m->rest_id || !m->rest_slot)
        return ggfit__fail(l->err, GGFIT_ENOMEM, "%s: out of memory", l->path);
    rest_memo *memo = NULL;
    ggfit_status rc = GGFIT_OK;
    for (uint32_t il = 0; il < m->hp.n_layer; il++)
        m->block_first[il] = -1;
    for (uint64_t i = 0; i < m->n_tensors && !rc; i++) {
        ggfit_tensor *t = &m->tensors[i];
        const char *rest = NULL;
        t->info = ggfit_gguf_tensor(m->g, i);
        /* An encoder's or decoder's blocks are "enc.blk.N." and "dec.blk.N."
         * (llama-arch.cpp's LLM_TENSOR_ENC_* and _DEC_* names): block N too. */
        const char *bname = t->info->name;
        uint8_t kind = starts(bname, "enc.blk.") ? 1 : starts(bname, "dec.blk.") ? 2 : 0;
        if (kind)
            bname += 4;
        int64_t il = block_index(bname, &rest);
        if (il >= (int64_t)m->hp.n_layer) {
            rc = ggfit__fail(l->err, GGFIT_EFORMAT,
                             "%s: tensor '%s' belongs to block %lld but %s.block_count is %u",
                             l->path, t->info->name, (long long)il, m->hp.arch,
                             m->hp.n_layer);
            break;
        }
        t->layer = (int32_t)il;
        uint64_t nb = t->info->n_bytes;
        m->block_next[i] = -1;
        if (il >= 0) {
            /* Chain the layer's tensors, newest first. */
            m->block_next[i] = m->block_first[il];
            m->block_first[il] = (int64_t)i;
            m->block_rest[i] = (uint32_t)(rest - t->info->name);
            if ((rc = classify_block(l, i, rest, kind, &memo)))
                break;
            m->layers[il].n_bytes += nb;
            m->layers[il].role_bytes[t->role] += nb;
        } else {
            m->rest_id[i] = UINT32_MAX;
            t->role = global_role(t->info->name, &t->output_layer);
            if (t->output_layer)
                m->output_bytes += nb;
            else
                m->input_bytes += nb;
            m->facts[i] = tensor_facts(t);
        }
        m->role_bytes[t->role] += nb;
    }
    free(memo);
    if (rc)
        return rc;
    table_rests(m);
    /* Without a vocab key or tokenizer, the embedding's rows give it. */
    if (!m->hp.n_vocab) {
        int64_t te = ggfit_gguf_find_tensor(m->g, "token_embd.weight");
        if (te >= 0 && ggfit_gguf_tensor(m->g, (uint64_t)te)->ne[1] <= UINT32_MAX)
            m->hp.n_vocab = (uint32_t)ggfit_gguf_tensor(m->g, (uint64_t)te)->ne[1];
    }
    return GGFIT_OK;
}

/* ---- public interface --------------------------------------------------- */

/* num_loops, for the architectures whose loader reads it (the row's
 * num_loops): the file's blocks run num_loops times, each pass a layer of
 * its own (n_layer_all = blocks * loops: its own KV cells and its own
 * device), all passes reading the weights of the file's block il % blocks.
 * The layers past the file's blocks hold no tensors. */
static ggfit_status expand_loops(loader *l)
{
    ggfit_model *m = l->m;
    ggfit_hparams *hp = &m->hp;
    uint32_t n = hp->n_layer, loops = 1;
    ggfit_status rc;
    m->n_block_phys = n;
    if (!m->row->num_loops)
        return GGFIT_OK;
    if ((rc = get_u32(l, "num_loops", &loops)))
        return rc;
    if (loops <= 1 || n == 0)
        return GGFIT_OK;
    if ((uint64_t)n * loops > MAX_LAYERS)
        return ggfit__fail(l->err, GGFIT_ELIMIT,
                           "%s: %s.num_loops %u times %u blocks is more than the %d layers "
                           "llama.cpp loads (LLAMA_MAX_LAYERS)", l->path, hp->arch, loops, n,
                           MAX_LAYERS);
    uint32_t all = n * loops;
    ggfit_layer_info *layers = ggfit__calloc(all, sizeof *layers);
    int64_t *first = ggfit__malloc(all * sizeof *first);
    if (!layers || !first) {
        free(layers);
        free(first);
        return ggfit__fail(l->err, GGFIT_ENOMEM, "%s: out of memory", l->path);
    }
    for (uint32_t il = 0; il < all; il++) {
        layers[il] = m->layers[il % n];
        first[il] = il < n ? m->block_first[il] : -1;
        if (il >= n) {
            layers[il].n_bytes = 0;
            memset(layers[il].role_bytes, 0, sizeof layers[il].role_bytes);
        }
    }
    free(m->layers);
    free(m->block_first);
    m->layers = layers;
    m->block_first = first;
    hp->n_layer = all;
    return GGFIT_OK;
}

/* The router layer of the architectures whose loader appends one (the
 * row's router_layer): layer n_layer after the file's blocks, the one
 * NextN block (nextn_predict_layers is set to 1 whatever the file says),
 * with one head and one KV head, no FFN and no tensors of its own. */
static ggfit_status expand_router(loader *l)
{
    ggfit_model *m = l->m;
    ggfit_hparams *hp = &m->hp;
    uint32_t n = hp->n_layer;
    if (!m->row->router_layer)
        return GGFIT_OK;
    if (n >= MAX_LAYERS)
        return ggfit__fail(l->err, GGFIT_ELIMIT,
                           "%s: %s: block count %u leaves no room for the router layer "
                           "(LLAMA_MAX_LAYERS %d); llama.cpp refuses the file", l->path, hp->arch,
                           n, MAX_LAYERS);
    ggfit_layer_info *layers = ggfit__realloc(m->layers, (n + 1) * sizeof *layers);
    if (layers)
        m->layers = layers;
    int64_t *first = layers ? ggfit__realloc(m->block_first, (n + 1) * sizeof *first) : NULL;
    if (!first)
        return ggfit__fail(l->err, GGFIT_ENOMEM, "%s: out of memory", l->path);
    m->block_first = first;
    if (m->recurrent) {   /* attention.recurrent_layers: the router attends */
        uint8_t *rec = ggfit__realloc(m->recurrent, n + 1);
        if (!rec)
            return ggfit__fail(l->err, GGFIT_ENOMEM, "%s: out of memory", l->path);
        m->recurrent = rec;
        m->recurrent[n] = 0;
    }
    for (uint32_t il = 0; il < n; il++)
        m->layers[il].nextn = false;
    m->layers[n] = (ggfit_layer_info){ .n_head = 1, .n_head_kv = 1, .nextn = true };
    m->block_first[n] = -1;
    m->router = true;
    hp->n_layer = n + 1;
    hp->n_nextn = 1;
    return GGFIT_OK;
}

const struct ggfit_arch *ggfit__model_arch(const ggfit_model *m, bool *known)
{
    *known = m->row_known;
    return m->row;
}

uint32_t ggfit__model_block_of(const ggfit_model *m, uint32_t il)
{
    if (m->router && il == m->hp.n_layer - 1)
        return UINT32_MAX;   /* the router layer runs no block's weights */
    return m->n_block_phys && il >= m->n_block_phys ? il % m->n_block_phys : il;
}

ggfit_status ggfit__model_load(ggfit_gguf *g, ggfit__arch_lookup row_of, ggfit_model **out,
                               char **err)
{
    if (err)
        *err = NULL;
    if (!out || !g || !row_of) {
        ggfit_gguf_close(g);
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_model_from_gguf: NULL argument");
    }
    *out = NULL;
    ggfit_model *m = ggfit__calloc(1, sizeof *m);
    if (!m) {
        ggfit_status rc = ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory",
                             ggfit_gguf_shard_path(g, 0));
        ggfit_gguf_close(g);
        return rc;
    }
    m->g = g;
    static _Atomic uint64_t serials;
    m->serial = atomic_fetch_add(&serials, 1) + 1;
    m->cache = ggfit__calloc(1, sizeof *m->cache);
    if (!m->cache || pthread_mutex_init(&m->cache->lock, NULL) != 0) {
        free(m->cache);
        free(m);
        ggfit_status rc = ggfit__fail(err, GGFIT_ENOMEM, "%s: out of memory",
                             ggfit_gguf_shard_path(g, 0));
        ggfit_gguf_close(g);
        return rc;
    }
    loader l = { .m = m, .path = ggfit_gguf_shard_path(g, 0), .err = err };
    ggfit_status rc = read_hparams(&l);
    if (!rc)
        m->row = row_of(m->hp.arch, &m->row_known);
    if (!rc)
        rc = classify(&l);
    if (!rc)
        rc = expand_loops(&l);
    if (!rc)
        rc = expand_router(&l);
    if (rc) {
        ggfit_model_free(m);
        return rc;
    }
    *out = m;
    return GGFIT_OK;
}

void ggfit_model_free(ggfit_model *m)
{
    if (!m)
        return;
    ggfit_gguf_close(m->g);
    if (m->cache) {
        pthread_mutex_destroy(&m->cache->lock);
        for (uint32_t k = 0; k < m->cache->n_kept; k++)
            m->cache->free_kept(m->cache->kept[k]);
        free(m->cache);
    }
    free(m->layers);
    free(m->tensors);
    free(m->block_first);
    free(m->block_next);
    free(m->block_rest);
    free(m->rest_id);
    free(m->rest_tensor);
    free(m->rest_slot);
    free(m->rest_at);
    free(m->facts);
    free(m->recurrent);
    free(m);
}

uint64_t ggfit__model_serial(const ggfit_model *m)
{
    return m->serial;
}

void *ggfit__model_keep_take(const ggfit_model *m)
{
    struct model_cache *c = m->cache;
    pthread_mutex_lock(&c->lock);
    void *p = c->n_kept ? c->kept[--c->n_kept] : NULL;
    pthread_mutex_unlock(&c->lock);
    return p;
}

void ggfit__model_keep_give(const ggfit_model *m, void *p, void (*free_fn)(void *))
{
    if (!p)
        return;
    struct model_cache *c = m->cache;
    pthread_mutex_lock(&c->lock);
    bool kept = c->n_kept < MODEL_KEPT;
    if (kept) {
        c->kept[c->n_kept++] = p;
        c->free_kept = free_fn;
    }
    pthread_mutex_unlock(&c->lock);
    if (!kept)
        free_fn(p);   /* as many threads as kept gave theirs back first */
}

const uint16_t *ggfit__model_facts(const ggfit_model *m)
{
    return m->facts;
}

const ggfit_tensor *ggfit__model_tensors(const ggfit_model *m)
{
    return m->tensors;
}

int ggfit__model_recurrent(const ggfit_model *m, uint32_t il)
{
    return m->recurrent && il < m->hp.n_layer ? m->recurrent[il] : -1;
}

int ggfit__model_swa_key(const ggfit_model *m, uint64_t *n)
{
    *n = m->swa_n;
    return m->swa_form;
}

bool ggfit__model_swa_layer(const ggfit_model *m, uint32_t il, uint32_t n)
{
    if (il >= n || il >= m->hp.n_layer)
        return false;
    if (m->swa_form == GGFIT_KEY_SCALAR)
        return m->swa_scalar_on;
    return m->swa_form == GGFIT_KEY_ARRAY && il < m->swa_n && m->layers[il].swa;
}

uint32_t ggfit__model_rest_id(const ggfit_model *m, const char *rest)
{
    uint32_t id = m->rest_slot[rest_slot(m, rest)];
    return id ? id - 1 : UINT32_MAX;   /* 0: no block has a tensor of that rest */
}

const char *ggfit__model_rest_name(const ggfit_model *m, uint32_t id)
{
    return id < m->n_rests ? rest_of(m, m->rest_tensor[id]) : NULL;
}

int64_t ggfit__model_block_tensor_of(const ggfit_model *m, uint32_t il, uint32_t id)
{
    if (il >= m->hp.n_layer || id >= m->n_rests)
        return -1;
    if (m->rest_at)
        return il < m->rest_rows ? m->rest_at[(uint64_t)il * m->n_rests + id] : -1;
    for (int64_t i = m->block_first[il]; i >= 0; i = m->block_next[i])
        if (m->rest_id[i] == id)
            return i;
    return -1;
}

int64_t ggfit__model_find_block_tensor(const ggfit_model *m, uint32_t il, const char *rest)
{
    if (il >= m->hp.n_layer)
        return -1;
    return ggfit__model_block_tensor_of(m, il, ggfit__model_rest_id(m, rest));
}

const ggfit_gguf *ggfit_model_gguf(const ggfit_model *m) { return m->g; }
const ggfit_hparams *ggfit_model_hparams(const ggfit_model *m) { return &m->hp; }
uint64_t ggfit_model_n_tensors(const ggfit_model *m) { return m->n_tensors; }
uint64_t ggfit_model_input_bytes(const ggfit_model *m) { return m->input_bytes; }
uint64_t ggfit_model_output_bytes(const ggfit_model *m) { return m->output_bytes; }

const ggfit_layer_info *ggfit_model_layer(const ggfit_model *m, uint32_t il)
{
    return il < m->hp.n_layer ? &m->layers[il] : NULL;
}

const ggfit_tensor *ggfit_model_tensor(const ggfit_model *m, uint64_t i)
{
    return i < m->n_tensors ? &m->tensors[i] : NULL;
}

uint64_t ggfit_model_role_bytes(const ggfit_model *m, ggfit_role role)
{
    return (unsigned)role < GGFIT_ROLE_COUNT ? m->role_bytes[role] : 0;
}
