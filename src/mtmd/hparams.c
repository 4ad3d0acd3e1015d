/*
 * hparams.c - the small readers and rules of clip.cpp's load_hparams that
 * the projector types' hooks (mm_<type>.c) share with clip.c: a key's
 * value, clip_hparams::set_limit_image_tokens and set_warmup_n_tokens.
 * Apart from clip.c, which holds the registry of types, so that the types
 * do not call back into it.
 */
#include <stdint.h>

#include "mtmd/clip.h"
#include "versions/version.h"

bool ggfit__clip_key_value(const clip_model *m, const char *key, ggfit_value *v)
{
    int64_t i = ggfit_gguf_find_key(m->g, key);
    return i >= 0 && ggfit_gguf_value(m->g, (uint64_t)i, v);
}

void ggfit__clip_u32(const clip_model *m, const char *key, int32_t *out)
{
    ggfit_value v;
    if (ggfit__clip_key_value(m, key, &v))
        *out = (int32_t)(v.type == GGFIT_GGUF_INT32 || v.type == GGFIT_GGUF_INT64 ? v.i
                                                                                  : (int64_t)v.u);
}

/* (int)std::sqrt(n) of a non-negative int: the integer square root */
int32_t ggfit__clip_isqrt(int64_t n)
{
    int64_t r = 0;
    while ((r + 1) * (r + 1) <= n)
        r++;
    return (int32_t)r;
}

/* llama.cpp's int products, kept in range whatever a header says */
int32_t ggfit__clip_clamp32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* The same for a product of several: worked out in double, exact while it
 * stays in int32 range (far inside the 2^53 a double holds), so that a
 * header's patch size and merge, each up to 2^31, cannot overflow the
 * int64_t they would be multiplied in before the checks (clip.c) see
 * them. */
static int32_t clamp32_product(double v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

void ggfit__clip_limit_image_tokens(clip_hparams *hp, int n_min, int n_max)
{
    double area = (double)hp->patch_size * hp->patch_size * hp->n_merge * hp->n_merge;
    int64_t lo = hp->custom_image_min_tokens > 0 ? hp->custom_image_min_tokens : n_min;
    int64_t hi = hp->custom_image_max_tokens > 0 ? hp->custom_image_max_tokens : n_max;
    hp->image_min_pixels = clamp32_product((double)lo * area);
    hp->image_max_pixels = clamp32_product((double)hi * area);
    hp->warmup_image_size = ggfit__clip_isqrt(hp->image_max_pixels);
}

void ggfit__clip_custom_image_tokens(clip_model *m)
{
    clip_hparams *hp = &m->hp;
    if (!ggfit__llama_has(m->llama_build, LLAMA_CHANGE_MTMD_LONGEST_EDGE_LIMITS))
        return;
    double area = (double)hp->patch_size * hp->patch_size * hp->n_merge * hp->n_merge;
    if (hp->custom_image_min_tokens > 0)
        hp->image_min_pixels = clamp32_product((double)hp->custom_image_min_tokens * area);
    if (hp->custom_image_max_tokens > 0)
        hp->image_max_pixels = clamp32_product((double)hp->custom_image_max_tokens * area);
}

void ggfit__clip_warmup_n_tokens(clip_hparams *hp, int n_tokens)
{
    int64_t side = ggfit__clip_isqrt(n_tokens);
    hp->warmup_image_size = clamp32_product((double)side * hp->patch_size * hp->n_merge);
}
