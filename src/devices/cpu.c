/*
 * cpu.c - the CPU a plan is for, by its features or by name (--cpu
 * sapphire-rapids, --cpu avx2,avx512,amx): the features are what decide
 * the CPU's extra buffer types (project/buft.c), as a build made on that CPU
 * (-march=native) has them.
 *
 * A class's features are those of the instruction sets its vendor lists
 * for it (Intel ARK, AMD's product pages, Arm's Neoverse and Cortex
 * manuals, Apple's ARM feature registers as hw.optional.arm.FEAT_* reports
 * them). Only the features ggfit models are written: a Zen 4 has AVX-512
 * but no AMX; Alder Lake's AVX-512 is fused off; the M1 has no i8mm.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"

/* The feature names, in the order they are printed; each brings what a
 * compiler enables with it: -mavx512f enables AVX2, and ggml builds its
 * AMX buffer type only with AVX512-VNNI too (amx.cpp), so a build with AMX
 * has the other two, and CPU_REPACK's x86 rules see them. */
static const struct {
    uint32_t bit;
    const char *name;
    uint32_t brings;
} features[] = {
    { GGFIT_CPU_AVX2, "avx2", 0 },
    { GGFIT_CPU_AVX512, "avx512", GGFIT_CPU_AVX2 },
    { GGFIT_CPU_AMX, "amx", GGFIT_CPU_AVX512 | GGFIT_CPU_AVX2 },
    { GGFIT_CPU_NEON_DOTPROD, "dotprod", 0 },
    { GGFIT_CPU_NEON_I8MM, "i8mm", 0 },
};
#define N_FEATURES (sizeof features / sizeof features[0])

enum {
    X86_AVX2 = GGFIT_CPU_AVX2,
    X86_AVX512 = GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512,
    X86_AMX = GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512 | GGFIT_CPU_AMX,
    ARM_DOT = GGFIT_CPU_NEON_DOTPROD,
    ARM_I8MM = GGFIT_CPU_NEON_DOTPROD | GGFIT_CPU_NEON_I8MM,
};

static const ggfit_cpu_class classes[] = {
    { "skylake", "Intel Core 6th to 10th gen desktop (Skylake to Comet Lake)", X86_AVX2 },
    { "alder-lake", "Intel Core 12th to 14th gen, Core Ultra (AVX-512 off)", X86_AVX2 },
    { "skylake-sp", "Intel Xeon Scalable 1st/2nd gen (Skylake-SP, Cascade Lake)", X86_AVX512 },
    { "ice-lake-sp", "Intel Xeon Scalable 3rd gen (Ice Lake-SP)", X86_AVX512 },
    { "sapphire-rapids", "Intel Xeon Scalable 4th gen (Sapphire Rapids)", X86_AMX },
    { "emerald-rapids", "Intel Xeon Scalable 5th gen (Emerald Rapids)", X86_AMX },
    { "granite-rapids", "Intel Xeon 6 with P-cores (Granite Rapids)", X86_AMX },
    { "zen2", "AMD Zen 2 (Ryzen 3000, EPYC 7002)", X86_AVX2 },
    { "zen3", "AMD Zen 3 (Ryzen 5000, EPYC 7003)", X86_AVX2 },
    { "zen4", "AMD Zen 4 (Ryzen 7000, EPYC 9004)", X86_AVX512 },
    { "zen5", "AMD Zen 5 (Ryzen 9000, Ryzen AI Max, EPYC 9005)", X86_AVX512 },
    { "apple-m1", "Apple M1", ARM_DOT },
    { "apple-m2", "Apple M2", ARM_I8MM },
    { "apple-m3", "Apple M3", ARM_I8MM },
    { "apple-m4", "Apple M4", ARM_I8MM },
    { "graviton2", "AWS Graviton2, Ampere Altra (Neoverse N1)", ARM_DOT },
    { "graviton3", "AWS Graviton3 (Neoverse V1)", ARM_I8MM },
    { "graviton4", "AWS Graviton4 (Neoverse V2)", ARM_I8MM },
    { "grace", "NVIDIA Grace (Neoverse V2)", ARM_I8MM },
    { "gb10", "NVIDIA GB10, DGX Spark (Cortex-X925, Cortex-A725)", ARM_I8MM },
};
#define N_CLASSES (sizeof classes / sizeof classes[0])

size_t ggfit_cpu_class_count(void)
{
    return N_CLASSES;
}

const ggfit_cpu_class *ggfit_cpu_class_get(size_t i)
{
    return i < N_CLASSES ? &classes[i] : NULL;
}

const char *ggfit_cpu_feature_name(uint32_t bit)
{
    for (size_t i = 0; i < N_FEATURES; i++)
        if (features[i].bit == bit)
            return features[i].name;
    return NULL;
}

/* The features of one name (n bytes at s): a feature with what it brings,
 * a class, or none; false when unknown. */
static bool name_features(const char *s, size_t n, uint32_t *out)
{
    if (n == 4 && !strncasecmp(s, "none", 4)) {
        *out = 0;
        return true;
    }
    for (size_t i = 0; i < N_FEATURES; i++)
        if (strlen(features[i].name) == n && !strncasecmp(s, features[i].name, n)) {
            *out = features[i].bit | features[i].brings;
            return true;
        }
    for (size_t i = 0; i < N_CLASSES; i++)
        if (strlen(classes[i].id) == n && !strncasecmp(s, classes[i].id, n)) {
            *out = classes[i].features;
            return true;
        }
    return false;
}

/* The known name closest to s[0..n), within half its length; NULL if none. */
static const char *closest(const char *s, size_t n)
{
    const char *best = NULL;
    size_t best_d = (n > 4 ? n : 4) / 2 + 1;
    for (size_t i = 0; i < N_FEATURES + N_CLASSES; i++) {
        const char *c = i < N_FEATURES ? features[i].name : classes[i - N_FEATURES].id;
        size_t d = ggfit__edit_distance(s, n, c, strlen(c));
        if (d < best_d) {
            best = c;
            best_d = d;
        }
    }
    return best;
}

ggfit_status ggfit_cpu_parse(const char *spec, uint32_t *out, char **err)
{
    if (err)
        *err = NULL;
    if (!spec || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_cpu_parse: NULL argument");
    uint32_t f = 0;
    const char *s = spec;
    do {
        size_t n = strcspn(s, ",");
        uint32_t one;
        if (n == 0)
            return ggfit__fail(err, GGFIT_EINVAL, "--cpu: an empty item in '%s' (a CPU such "
                               "as sapphire-rapids, or features such as avx2,avx512)", spec);
        if (!name_features(s, n, &one)) {
            const char *near = closest(s, n);
            if (near)
                return ggfit__fail(err, GGFIT_EINVAL, "--cpu: unknown CPU or feature '%.*s'; "
                                   "did you mean %s?", (int)n, s, near);
            return ggfit__fail(err, GGFIT_EINVAL, "--cpu: unknown CPU or feature '%.*s' (a "
                               "CPU such as sapphire-rapids, zen4, apple-m2, or features: "
                               "avx2, avx512, amx, dotprod, i8mm, none)", (int)n, s);
        }
        f |= one;
        s += n;
    } while (*s++ == ',');
    *out = f;
    return GGFIT_OK;
}
