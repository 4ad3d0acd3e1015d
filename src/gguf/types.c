/*
 * types.c - ggml's tensor types: block size and bytes per block, as in
 * ggml_get_type_traits(). The table is indexed by id and holds every id up to
 * GGFIT_TYPE_COUNT, removed ones included so they can be named in errors.
 */
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "gguf/gguf.h"

const ggfit__type_traits ggfit__types[GGFIT_TYPE_COUNT] = {
    [GGFIT_TYPE_F32]     = { "F32",      1,   4 },
    [GGFIT_TYPE_F16]     = { "F16",      1,   2 },
    [GGFIT_TYPE_Q4_0]    = { "Q4_0",    32,  18 },
    [GGFIT_TYPE_Q4_1]    = { "Q4_1",    32,  20 },
    [4]                  = { "Q4_2",     0,   0 },
    [5]                  = { "Q4_3",     0,   0 },
    [GGFIT_TYPE_Q5_0]    = { "Q5_0",    32,  22 },
    [GGFIT_TYPE_Q5_1]    = { "Q5_1",    32,  24 },
    [GGFIT_TYPE_Q8_0]    = { "Q8_0",    32,  34 },
    [GGFIT_TYPE_Q8_1]    = { "Q8_1",    32,  36 },
    [GGFIT_TYPE_Q2_K]    = { "Q2_K",   256,  84 },
    [GGFIT_TYPE_Q3_K]    = { "Q3_K",   256, 110 },
    [GGFIT_TYPE_Q4_K]    = { "Q4_K",   256, 144 },
    [GGFIT_TYPE_Q5_K]    = { "Q5_K",   256, 176 },
    [GGFIT_TYPE_Q6_K]    = { "Q6_K",   256, 210 },
    [GGFIT_TYPE_Q8_K]    = { "Q8_K",   256, 292 },
    [GGFIT_TYPE_IQ2_XXS] = { "IQ2_XXS", 256,  66 },
    [GGFIT_TYPE_IQ2_XS]  = { "IQ2_XS", 256,  74 },
    [GGFIT_TYPE_IQ3_XXS] = { "IQ3_XXS", 256,  98 },
    [GGFIT_TYPE_IQ1_S]   = { "IQ1_S",  256,  50 },
    [GGFIT_TYPE_IQ4_NL]  = { "IQ4_NL",  32,  18 },
    [GGFIT_TYPE_IQ3_S]   = { "IQ3_S",  256, 110 },
    [GGFIT_TYPE_IQ2_S]   = { "IQ2_S",  256,  82 },
    [GGFIT_TYPE_IQ4_XS]  = { "IQ4_XS", 256, 136 },
    [GGFIT_TYPE_I8]      = { "I8",       1,   1 },
    [GGFIT_TYPE_I16]     = { "I16",      1,   2 },
    [GGFIT_TYPE_I32]     = { "I32",      1,   4 },
    [GGFIT_TYPE_I64]     = { "I64",      1,   8 },
    [GGFIT_TYPE_F64]     = { "F64",      1,   8 },
    [GGFIT_TYPE_IQ1_M]   = { "IQ1_M",  256,  56 },
    [GGFIT_TYPE_BF16]    = { "BF16",     1,   2 },
    [31]                 = { "Q4_0_4_4", 0,   0 },
    [32]                 = { "Q4_0_4_8", 0,   0 },
    [33]                 = { "Q4_0_8_8", 0,   0 },
    [GGFIT_TYPE_TQ1_0]   = { "TQ1_0",  256,  54 },
    [GGFIT_TYPE_TQ2_0]   = { "TQ2_0",  256,  66 },
    [36]                 = { "IQ4_NL_4_4", 0, 0 },
    [37]                 = { "IQ4_NL_4_8", 0, 0 },
    [38]                 = { "IQ4_NL_8_8", 0, 0 },
    [GGFIT_TYPE_MXFP4]   = { "MXFP4",   32,  17 },
    [GGFIT_TYPE_NVFP4]   = { "NVFP4",   64,  36 },
    [GGFIT_TYPE_Q1_0]    = { "Q1_0",   128,  18 },
    [GGFIT_TYPE_Q2_0]    = { "Q2_0",    64,  18 },
    /* 43..63: upstream's next types, not known yet (NULL, 0, 0) */
    /* Unsloth's (unslothai/llama.cpp e7099161e): IQ1_S's block, d (2) +
     * qs (32) + the index's high bits (8, 0 or 4) */
    [GGFIT_TYPE_IQ1_XS]  = { "IQ1_XS",  256,  46 },
    [GGFIT_TYPE_IQ1_XXS] = { "IQ1_XXS", 256,  42 },
    [GGFIT_TYPE_IQ1_XXXS] = { "IQ1_XXXS", 256, 38 },
};
/* The table is sized by the enum; this catches an id added to ggfit_type
 * without a row (its name would be NULL) at compile time for the last one. */
_Static_assert(sizeof ggfit__types / sizeof ggfit__types[0] == GGFIT_TYPE_COUNT,
               "ggfit__types[] must have one row per ggfit_type id");
_Static_assert(GGFIT_TYPE_IQ1_XXXS == GGFIT_TYPE_COUNT - 1,
               "a new ggfit_type needs a row in ggfit__types[]");
/* upstream's ids stop below Unsloth's, which start at 64 */
_Static_assert(GGFIT_TYPE_Q2_0 < 64 && GGFIT_TYPE_IQ1_XS == 64,
               "Unsloth's ids are 64 on, upstream's below");

const char *ggfit_type_name(uint32_t type)
{
    return type < GGFIT_TYPE_COUNT ? ggfit__types[type].name : NULL;
}

bool ggfit_type_unsloth(uint32_t type)
{
    return type >= GGFIT_TYPE_IQ1_XS && type <= GGFIT_TYPE_IQ1_XXXS;
}

bool ggfit_type_valid(uint32_t type)
{
    return type < GGFIT_TYPE_COUNT && ggfit__types[type].blck != 0;
}

uint32_t ggfit_type_block_size(uint32_t type)
{
    return type < GGFIT_TYPE_COUNT ? ggfit__types[type].blck : 0;
}

uint32_t ggfit_type_block_bytes(uint32_t type)
{
    return type < GGFIT_TYPE_COUNT ? ggfit__types[type].bytes : 0;
}

bool ggfit_type_is_quantized(uint32_t type)
{
    return ggfit_type_block_size(type) > 1;
}

int ggfit_type_from_name(const char *name)
{
    for (uint32_t t = 0; t < GGFIT_TYPE_COUNT; t++)
        if (ggfit__types[t].blck && ggfit__types[t].name &&
            strcasecmp(ggfit__types[t].name, name) == 0)
            return (int)t;
    return -1;
}

uint64_t ggfit_row_bytes(uint32_t type, uint64_t n)
{
    uint32_t blck = ggfit_type_block_size(type);
    if (blck == 0 || n % blck != 0)
        return 0;
    return n / blck * ggfit__types[type].bytes;
}
