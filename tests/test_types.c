/*
 * test_types.c - the ggml type table against ggml's enum and traits.
 */
#include "test_util.h"

static void test_every_id_has_a_row(void **state)
{
    (void)state;
    static const uint32_t removed[] = { 4, 5, 31, 32, 33, 36, 37, 38 };
    for (uint32_t t = 0; t < GGFIT_TYPE_COUNT; t++) {
        bool is_removed = false;
        for (size_t k = 0; k < sizeof removed / sizeof removed[0]; k++)
            is_removed |= removed[k] == t;
        if (t > GGFIT_TYPE_Q2_0 && t < 64) {
            /* left for upstream's next types: unknown, as past the end */
            assert_null(ggfit_type_name(t));
            assert_false(ggfit_type_valid(t));
            assert_int_equal(ggfit_type_block_size(t), 0);
            assert_int_equal(ggfit_row_bytes(t, 256), 0);
            continue;
        }
        assert_int_equal(ggfit_type_unsloth(t), t >= 64);
        assert_non_null(ggfit_type_name(t));
        assert_int_equal(ggfit_type_valid(t), !is_removed);
        if (!is_removed) {
            assert_true(ggfit_type_block_size(t) > 0);
            assert_true(ggfit_type_block_bytes(t) > 0);
            assert_int_equal(ggfit_type_from_name(ggfit_type_name(t)), (int)t);
        } else {
            assert_int_equal(ggfit_type_from_name(ggfit_type_name(t)), -1);
        }
    }
    assert_int_equal(GGFIT_TYPE_COUNT, 67);
    assert_null(ggfit_type_name(GGFIT_TYPE_COUNT));
    assert_false(ggfit_type_valid(GGFIT_TYPE_COUNT));
    assert_false(ggfit_type_valid(UINT32_MAX));
}

static void test_traits_match_ggml(void **state)
{
    (void)state;
    static const struct { uint32_t id; const char *name; uint32_t blck, bytes; } want[] = {
        { 0, "F32", 1, 4 },       { 1, "F16", 1, 2 },       { 2, "Q4_0", 32, 18 },
        { 3, "Q4_1", 32, 20 },    { 6, "Q5_0", 32, 22 },    { 7, "Q5_1", 32, 24 },
        { 8, "Q8_0", 32, 34 },    { 9, "Q8_1", 32, 36 },    { 10, "Q2_K", 256, 84 },
        { 11, "Q3_K", 256, 110 }, { 12, "Q4_K", 256, 144 }, { 13, "Q5_K", 256, 176 },
        { 14, "Q6_K", 256, 210 }, { 15, "Q8_K", 256, 292 }, { 16, "IQ2_XXS", 256, 66 },
        { 17, "IQ2_XS", 256, 74 },{ 18, "IQ3_XXS", 256, 98 },{ 19, "IQ1_S", 256, 50 },
        { 20, "IQ4_NL", 32, 18 }, { 21, "IQ3_S", 256, 110 },{ 22, "IQ2_S", 256, 82 },
        { 23, "IQ4_XS", 256, 136 },{ 24, "I8", 1, 1 },      { 25, "I16", 1, 2 },
        { 26, "I32", 1, 4 },      { 27, "I64", 1, 8 },      { 28, "F64", 1, 8 },
        { 29, "IQ1_M", 256, 56 }, { 30, "BF16", 1, 2 },     { 34, "TQ1_0", 256, 54 },
        { 35, "TQ2_0", 256, 66 }, { 39, "MXFP4", 32, 17 },  { 40, "NVFP4", 64, 36 },
        { 41, "Q1_0", 128, 18 },  { 42, "Q2_0", 64, 18 },
        /* Unsloth's (unslothai/llama.cpp e7099161e, gguf-py's
         * GGML_QUANT_SIZES: 2 + QK_K/8 + QK_K/32 + QK_K/64 and so on) */
        { 64, "IQ1_XS", 256, 46 }, { 65, "IQ1_XXS", 256, 42 }, { 66, "IQ1_XXXS", 256, 38 },
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        assert_string_equal(ggfit_type_name(want[k].id), want[k].name);
        assert_int_equal(ggfit_type_block_size(want[k].id), want[k].blck);
        assert_int_equal(ggfit_type_block_bytes(want[k].id), want[k].bytes);
        assert_int_equal(ggfit_type_is_quantized(want[k].id), want[k].blck > 1);
    }
    assert_string_equal(ggfit_type_name(31), "Q4_0_4_4");
    assert_string_equal(ggfit_type_name(38), "IQ4_NL_8_8");
}

static void test_row_bytes(void **state)
{
    (void)state;
    assert_int_equal(ggfit_row_bytes(GGFIT_TYPE_Q4_K, 5120), 5120 / 256 * 144);
    assert_int_equal(ggfit_row_bytes(GGFIT_TYPE_F16, 7), 14);
    assert_int_equal(ggfit_row_bytes(GGFIT_TYPE_MXFP4, 2880), 2880 / 32 * 17);
    assert_int_equal(ggfit_row_bytes(GGFIT_TYPE_Q4_K, 100), 0);   /* not a whole block */
    assert_int_equal(ggfit_row_bytes(31, 256), 0);                /* removed */
    assert_int_equal(ggfit_type_from_name("q8_0"), GGFIT_TYPE_Q8_0);
    assert_int_equal(ggfit_type_from_name("nope"), -1);
    /* Unsloth's: a 1.1875 bpw row of 4096 */
    assert_int_equal(ggfit_row_bytes(GGFIT_TYPE_IQ1_XXXS, 4096), 4096 / 256 * 38);
    assert_int_equal(ggfit_row_bytes(GGFIT_TYPE_IQ1_XS, 4096), 16 * 46);
    assert_int_equal(ggfit_type_from_name("iq1_xxs"), GGFIT_TYPE_IQ1_XXS);
    assert_false(ggfit_type_unsloth(GGFIT_TYPE_IQ1_S));
    assert_false(ggfit_type_unsloth(67));
}

static void test_status_names(void **state)
{
    (void)state;
    for (int s = 0; s < GGFIT_STATUS_COUNT; s++)
        assert_non_null(ggfit_status_str(s));
    assert_string_equal(ggfit_status_str(GGFIT_OK), "ok");
    assert_string_equal(ggfit_status_str(-1), "unknown status");
    assert_string_equal(ggfit_gguf_type_name(GGFIT_GGUF_FLOAT64), "float64");
    assert_null(ggfit_gguf_type_name(GGFIT_GGUF_TYPE_COUNT));
    ggfit_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_id_has_a_row),
        cmocka_unit_test(test_traits_match_ggml),
        cmocka_unit_test(test_row_bytes),
        cmocka_unit_test(test_status_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
