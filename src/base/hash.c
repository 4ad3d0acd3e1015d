/*
 * hash.c - the string hash of the name indexes (a GGUF's keys and tensor
 * names, a model's block tensors by rest).
 */
#include <string.h>

#include "base/base.h"

static uint64_t load64(const char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

static uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

uint64_t ggfit__hash(const char *s, size_t n)
{
    /* Eight bytes a step, the last eight overlapping the step before:
     * names are tens of bytes, hashed at every lookup, where a byte a step
     * (FNV-1a) took a hundred instructions a name. */
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            h = mix(h, load64(s + i));
        h = mix(h, load64(s + n - 8));
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, sizeof a);
        memcpy(&b, s + n - 4, sizeof b);
        h = mix(h, (uint64_t)a << 32 | b);
    } else {
        uint64_t w = 0;
        for (size_t i = 0; i < n; i++)
            w = w << 8 | (unsigned char)s[i];
        h = mix(h, w);
    }
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}
