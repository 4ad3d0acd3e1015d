/*
 * check.c - the hyperparameter rules every architecture shares, and the
 * helpers the architectures' own rules are written with (check.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "base/base.h"
#include "llama/arch.h"
#include "llama/check.h"
#include "versions/version.h"

/* llama.cpp's limits (src/llama-hparams.h), which load_hparams asserts:
 * LLAMA_MAX_EXPERTS went from 512 to 1024 with Kimi-K3 (ad1de39e0). */
static int64_t max_experts(uint32_t llama_build)
{
    return ggfit__llama_has(llama_build, LLAMA_CHANGE_KIMI_K3) ? 1024 : 512;
}

hp_check ggfit__check_init(const ggfit_gguf *g, const char *path, const char *prefix,
                           char **err)
{
    return (hp_check){ .g = g, .path = path, .prefix = prefix, .err = err, .rc = GGFIT_OK };
}

bool hc_fail(hp_check *c, const char *fmt, ...)
{
    if (c->rc)
        return false;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->rc = ggfit__fail(c->err, GGFIT_EFORMAT, "%s: %s", c->path, msg);
    return false;
}

bool hc_nonzero(hp_check *c, const char *key, uint64_t v, const char *why)
{
    if (c->rc)
        return false;
    return v != 0 || hc_fail(c, "%s.%s is 0: %s", c->prefix, key, why);
}

bool hc_range(hp_check *c, const char *key, int64_t v, int64_t lo, int64_t hi,
              const char *why)
{
    if (c->rc)
        return false;
    return (v >= lo && v <= hi) ||
           hc_fail(c, "%s.%s is %lld, outside %lld..%lld: %s", c->prefix, key, (long long)v,
                   (long long)lo, (long long)hi, why);
}

bool hc_multiple(hp_check *c, const char *key, uint64_t v, const char *by_key, uint64_t by,
                 const char *why)
{
    if (c->rc || !hc_nonzero(c, by_key, by, why))
        return false;
    return v % by == 0 ||
           hc_fail(c, "%s.%s is %llu, not a multiple of %s.%s (%llu): %s", c->prefix, key,
                   (unsigned long long)v, c->prefix, by_key, (unsigned long long)by, why);
}

bool hc_layer_multiple(hp_check *c, uint32_t il, const char *key, uint64_t v,
                       const char *by_key, uint64_t by, const char *why)
{
    if (c->rc)
        return false;
    if (by == 0)
        return hc_fail(c, "%s.%s is 0 in layer %u: %s", c->prefix, by_key, il, why);
    return v % by == 0 ||
           hc_fail(c, "%s.%s is %llu in layer %u, not a multiple of %s.%s (%llu): %s",
                   c->prefix, key, (unsigned long long)v, il, c->prefix, by_key,
                   (unsigned long long)by, why);
}

/* The number under key as gb_key reads it (integers, bools, floats); false
 * when the file has none or it is not a number. */
static bool key_number(const hp_check *c, const char *key, double *out, char *full, size_t n)
{
    snprintf(full, n, "%s.%s", c->prefix, key);
    int64_t i = ggfit_gguf_find_key(c->g, full);
    ggfit_value v;
    if (i < 0 || !ggfit_gguf_value(c->g, (uint64_t)i, &v))
        return false;
    switch (v.type) {
    case GGFIT_GGUF_UINT8: case GGFIT_GGUF_UINT16: case GGFIT_GGUF_UINT32:
    case GGFIT_GGUF_UINT64: case GGFIT_GGUF_BOOL:
        *out = (double)v.u;
        return true;
    case GGFIT_GGUF_INT8: case GGFIT_GGUF_INT16: case GGFIT_GGUF_INT32: case GGFIT_GGUF_INT64:
        *out = (double)v.i;
        return true;
    case GGFIT_GGUF_FLOAT32: case GGFIT_GGUF_FLOAT64:
        *out = v.f;
        return true;
    default:
        return false;
    }
}

bool hc_key_int(hp_check *c, const char *key, int64_t lo, int64_t hi, int64_t def,
                int64_t *out, const char *why)
{
    if (out)
        *out = def;
    if (c->rc)
        return false;
    char full[160];
    double v;
    if (!key_number(c, key, &v, full, sizeof full))
        return true;
    /* Compared as doubles: lo and hi are far inside 2^63, so a value that
     * passes converts exactly. */
    if (!(v >= (double)lo && v <= (double)hi) || v != floor(v))
        return hc_fail(c, "%s is %g, not a whole number from %lld to %lld: %s", full, v,
                       (long long)lo, (long long)hi, why);
    if (out)
        *out = (int64_t)v;
    return true;
}

/* ---- the rules every architecture shares -------------------------------- */

/* ggfit's limits on the sizes a header declares, far above any model's
 * (embeddings of 16384, FFNs of 65536, heads of 512, vocabularies of
 * 262144), so that the graphs' products of a few sizes and the ubatch stay
 * within int64_t: past them the shapes would overflow, and no allocation
 * of such a size could be made anyway. The context (and so the KV cells)
 * is not limited: its products are unsigned. */
#define LIMIT_WIDTH (1u << 20)   /* an embedding, an FFN, a rank */
#define LIMIT_HEAD (1u << 16)    /* a head's size or count, a state's */
#define LIMIT_VOCAB (1u << 24)

static void sizes(hp_check *c)
{
    static const struct {
        const char *key;
        size_t off;
        uint32_t max;
    } limits[] = {
#define F(f) offsetof(ggfit_hparams, f)
        { "embedding_length", F(n_embd), LIMIT_WIDTH },
        { "vocab_size", F(n_vocab), LIMIT_VOCAB },
        { "feed_forward_length", F(n_ff_max), LIMIT_WIDTH },
        { "expert_feed_forward_length", F(n_ff_exp), LIMIT_WIDTH },
        { "expert_shared_feed_forward_length", F(n_ff_shexp), LIMIT_WIDTH },
        { "expert_shared_count", F(n_expert_shared), LIMIT_HEAD },
        { "attention.head_count", F(n_head_max), LIMIT_HEAD },
        { "attention.head_count_kv", F(n_head_kv_max), LIMIT_HEAD },
        { "attention.key_length", F(n_embd_head_k), LIMIT_HEAD },
        { "attention.value_length", F(n_embd_head_v), LIMIT_HEAD },
        { "attention.key_length_swa", F(n_embd_head_k_swa), LIMIT_HEAD },
        { "attention.value_length_swa", F(n_embd_head_v_swa), LIMIT_HEAD },
        { "attention.key_length_mla", F(n_embd_head_k_mla), LIMIT_HEAD },
        { "attention.value_length_mla", F(n_embd_head_v_mla), LIMIT_HEAD },
        { "attention.q_lora_rank", F(n_lora_q), LIMIT_WIDTH },
        { "attention.kv_lora_rank", F(n_lora_kv), LIMIT_WIDTH },
        { "rope.dimension_count", F(n_rot), LIMIT_HEAD },
        { "ssm.conv_kernel", F(ssm_d_conv), LIMIT_HEAD },
        { "ssm.inner_size", F(ssm_d_inner), LIMIT_WIDTH },
        { "ssm.state_size", F(ssm_d_state), LIMIT_HEAD },
        { "ssm.time_step_rank", F(ssm_dt_rank), LIMIT_HEAD },
        { "ssm.group_count", F(ssm_n_group), LIMIT_HEAD },
        { "shortconv.l_cache", F(shortconv_l_cache), LIMIT_HEAD },
        { "wkv.head_size", F(wkv_head_size), LIMIT_HEAD },
        { "token_shift_count", F(token_shift_count), LIMIT_HEAD },
        { "kda.head_dim", F(n_embd_head_kda), LIMIT_HEAD },
#undef F
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0] && !c->rc; i++) {
        uint32_t v = *(const uint32_t *)((const char *)c->hp + limits[i].off);
        if (v > limits[i].max)
            c->rc = ggfit__fail(c->err, GGFIT_ELIMIT, "%s: %s.%s is %u, more than ggfit's "
                                "limit of %u (no model has such a size)", c->path, c->prefix,
                                limits[i].key, v, limits[i].max);
    }
}

/* load_hparams' asserts on the experts and their groups, which the MoE
 * blocks then divide by (graph.c's group-limited routing reshapes the
 * experts into their groups); the gating function's number, which the
 * blocks convert to an int. */
static void experts(hp_check *c, const ggfit_arch *a, uint32_t llama_build)
{
    const ggfit_hparams *hp = c->hp;
    uint64_t n = hp->n_expert, used = hp->n_expert_used;
    int64_t groups, group_used;
    if (a->one_expert_dense && n <= 1)
        n = used = 0;   /* load_hparams: HunYuan's one expert is a dense FFN */
    const char *why = "llama.cpp's load_hparams asserts it";
    if (!hc_key_int(c, "expert_group_count", 0, UINT32_MAX, 0, &groups, why) ||
        !hc_key_int(c, "expert_group_used_count", 0, UINT32_MAX, 0, &group_used, why) ||
        !hc_key_int(c, "expert_gating_func", 0, INT32_MAX, 0, NULL,
                    "the MoE blocks read a gating function's number") ||
        !hc_range(c, "expert_count", (int64_t)n, 0, max_experts(llama_build),
                  "llama.cpp's load_hparams asserts at most LLAMA_MAX_EXPERTS"))
        return;
    if (used > n) {
        hc_fail(c, "%s.expert_used_count is %llu, more than the %llu experts (%s.expert_count): "
                "llama.cpp's load_hparams asserts it", c->prefix, (unsigned long long)used,
                (unsigned long long)n, c->prefix);
        return;
    }
    if (n == 0) {
        hc_range(c, "expert_group_count", groups, 0, 0,
                 "a model without experts has no expert groups (llama.cpp asserts it)");
        return;
    }
    if (!hc_nonzero(c, "expert_used_count", used,
                    "a model with experts uses some (llama.cpp asserts it)") ||
        !hc_range(c, "expert_group_count", groups, 0, (int64_t)n - 1,
                  "fewer groups than experts (llama.cpp asserts it)") ||
        groups <= 1)
        return;
    if (hc_multiple(c, "expert_count", n, "expert_group_count", (uint64_t)groups,
                    "each group holds as many experts (llama.cpp asserts it)"))
        hc_range(c, "expert_group_used_count", group_used, 1, groups - 1,
                 "some groups but not all are used (llama.cpp asserts it)");
}

/* Each KV head serves a whole group of query heads: ggml_mul_mat (and
 * flash attention) broadcast K and V over the query heads only when their
 * count divides it, and assert so. Layers without KV heads (recurrent
 * ones) aside, and those without query heads in the file (RWKV6-Qwen2
 * counts them from the head size; a builder that divides by the group
 * checks it has one). */
static void attention_groups(hp_check *c)
{
    for (uint32_t il = 0; il < c->hp->n_layer && !c->rc; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(c->m, il);
        if (li->n_head_kv)
            hc_layer_multiple(c, il, "attention.head_count", li->n_head,
                              "attention.head_count_kv", li->n_head_kv,
                              "each KV head serves a whole group of query heads "
                              "(ggml_mul_mat asserts it)");
    }
}

ggfit_status ggfit__check_model(const ggfit_model *m, const ggfit_arch *a, uint32_t llama_build,
                                char **err)
{
    const ggfit_gguf *g = ggfit_model_gguf(m);
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    hp_check c = ggfit__check_init(g, ggfit_gguf_shard_path(g, 0), hp->arch, err);
    c.m = m;
    c.hp = hp;
    /* the required keys and the block count are the loader's
     * (arch_keys.c, model.c), checked before this */
    sizes(&c);
    experts(&c, a, llama_build);
    attention_groups(&c);
    if (!c.rc && a->check)
        a->check(&c);
    return c.rc;
}

void hc_wkv_heads(hp_check *c)
{
    const char *why = "the time mix splits the embedding into heads of wkv.head_size "
                      "(llama.cpp's reshapes assert it)";
    if (hc_nonzero(c, "embedding_length", c->hp->n_embd, why))
        hc_multiple(c, "embedding_length", c->hp->n_embd, "wkv.head_size",
                    c->hp->wkv_head_size, why);
}
