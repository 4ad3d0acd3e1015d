/*
 * test_catalog.c - the catalog of GPUs and Macs (data/gpus.tsv), the Metal
 * working-set rule, and --gpu by catalog id.
 */
#include <ctype.h>
#include <strings.h>

#include "test_util.h"
#include "base/base.h"
#include "devices/catalog.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void test_counts_and_fields(void **state)
{
    (void)state;
    size_t n = ggfit_catalog_count(), gpus = 0, macs = 0;
    assert_null(ggfit_catalog_get(n));
    for (size_t i = 0; i < n; i++) {
        const ggfit_catalog_entry *e = ggfit_catalog_get(i);
        assert_non_null(e);
        if (e->system_memory && e->kind == GGFIT_BACKEND_METAL) {
            macs++;
            assert_true(e->memory < e->system_memory);
        } else if (e->system_memory) {
            gpus++;   /* a unified GPU (APU, DGX Spark): at most the system's */
            assert_true(e->memory <= e->system_memory);
        } else {
            gpus++;
            assert_int_not_equal(e->kind, GGFIT_BACKEND_CPU);
            assert_int_not_equal(e->kind, GGFIT_BACKEND_RPC);
        }
        assert_true(e->memory >= GiB);
        assert_true(e->bandwidth_gbs > 0);
        assert_true(e->name[0] != '\0');
        assert_non_null(strstr(e->source, "specification"));
        /* ids: a lowercase letter, then [a-z0-9-]; unique */
        assert_true(islower((unsigned char)e->id[0]));
        for (const char *c = e->id; *c; c++)
            assert_true(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '-');
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(ggfit_catalog_get(j)->id, e->id);
        assert_ptr_equal(ggfit_catalog_find(e->id), e);
    }
    assert_true(gpus >= 30);
    assert_true(macs >= 10);
}

static void test_find(void **state)
{
    (void)state;
    const ggfit_catalog_entry *e = ggfit_catalog_find("RTX-3090");
    assert_non_null(e);
    assert_string_equal(e->id, "rtx-3090");
    assert_int_equal(e->kind, GGFIT_BACKEND_CUDA);
    assert_int_equal(e->memory, 24 * GiB);
    assert_int_equal(e->system_memory, 0);
    assert_true(e->bandwidth_gbs == 936.0);
    assert_ptr_equal(ggfit_catalog_find("Rtx-4060-Ti-16GB"), ggfit_catalog_find("rtx-4060-ti-16gb"));
    assert_int_equal(ggfit_catalog_find("rx-7900-xtx")->kind, GGFIT_BACKEND_ROCM);
    assert_int_equal(ggfit_catalog_find("arc-b580")->kind, GGFIT_BACKEND_VULKAN);
    assert_null(ggfit_catalog_find("rtx-9999"));
    assert_null(ggfit_catalog_find(""));
    assert_null(ggfit_catalog_find(NULL));
}

/* The figures llama.cpp users report, in the MiB llama.cpp prints (floor). */
static void test_metal_working_set(void **state)
{
    (void)state;
    /* macOS 15: 12,288 MiB on 18 GB (reported as 12,287 MiB free: less what
     * Metal already held), 21,845 on 32 GB; 5,461 on 8 GB, 27,648 on 36 GB */
    assert_int_equal(ggfit__metal_working_set(18 * GiB, 0, 15) / MiB, 12288);
    assert_int_equal(ggfit__metal_working_set(32 * GiB, 0, 15) / MiB, 21845);
    assert_int_equal(ggfit__metal_working_set(32 * GiB, 0, 15), 22906503168ull);
    assert_int_equal(ggfit__metal_working_set(8 * GiB, 0, 14) / MiB, 5461);
    assert_int_equal(ggfit__metal_working_set(36 * GiB, 0, 15) / MiB, 27648);
    /* macOS 26: 18,186 MiB on 24 GB, to the byte; 128 and 256 GiB too */
    assert_int_equal(ggfit__metal_working_set(24 * GiB, 0, 26), 19069665280ull);
    assert_int_equal(ggfit__metal_working_set(24 * GiB, 0, 0) / MiB, 18186);
    assert_int_equal(ggfit__metal_working_set(128 * GiB, 0, 26), 115448725504ull);
    assert_int_equal(ggfit__metal_working_set(256 * GiB, 0, 26), 239143780352ull);
    static const struct { unsigned gib, mib; } tahoe[] = {
        { 8, 5461 }, { 16, 12124 }, { 32, 25559 }, { 36, 28753 }, { 48, 38338 },
        { 64, 53084 }, { 96, 79626 }, { 128, 110100 },
    };
    for (size_t i = 0; i < sizeof tahoe / sizeof tahoe[0]; i++)
        assert_int_equal(ggfit__metal_working_set(tahoe[i].gib * GiB, 0, 26) / MiB,
                         tahoe[i].mib);
    /* iogpu.wired_limit_mb, when set, is what Metal reports; capped at memory */
    assert_int_equal(ggfit__metal_working_set(128 * GiB, 114688, 26), 112 * GiB);
    assert_int_equal(ggfit__metal_working_set(16 * GiB, 999999, 15), 16 * GiB);
    assert_int_equal(ggfit__metal_working_set(0, 0, 0), 0);
    assert_int_equal(ggfit__metal_working_set(UINT64_MAX, 0, 0), 0);

    /* the catalog's Macs are sized by the same rule (as macOS 26) */
    const ggfit_catalog_entry *m = ggfit_catalog_find("m4-pro-24gb");
    assert_non_null(m);
    assert_int_equal(m->system_memory, 24 * GiB);
    assert_int_equal(m->memory / MiB, 18186);
    for (size_t i = 0; i < ggfit_catalog_count(); i++) {
        const ggfit_catalog_entry *e = ggfit_catalog_get(i);
        if (e->system_memory && e->kind == GGFIT_BACKEND_METAL)
            assert_int_equal(e->memory, ggfit__metal_working_set(e->system_memory, 0, 0));
    }
}

static void test_gpu_ids(void **state)
{
    (void)state;
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n;
    char *err = NULL;
    assert_int_equal(ggfit_devices_parse("rtx-3090,RTX-4060-TI-16GB,24GiB", d, GGFIT_MAX_DEVICES,
                                         &n, &err), GGFIT_OK);
    assert_int_equal(n, 3);
    assert_string_equal(d[0].name, "CUDA0");
    assert_int_equal(d[0].kind, GGFIT_BACKEND_CUDA);
    assert_int_equal(d[0].total, 24 * GiB);
    assert_int_equal(d[0].free, 24077 * MiB);   /* what a real 3090 reports */
    assert_string_equal(d[0].description, "NVIDIA GeForce RTX 3090");
    assert_true(d[0].bandwidth_gbs == 936.0);
    assert_false(d[0].unified);
    assert_string_equal(d[1].name, "CUDA1");
    assert_int_equal(d[1].total, 16 * GiB);
    assert_true(d[1].bandwidth_gbs == 288.0);
    assert_string_equal(d[2].name, "CUDA2");
    assert_string_equal(d[2].description, "");
    assert_true(d[2].bandwidth_gbs == 0);

    /* a Mac: Metal, unified, the working set as its memory */
    assert_int_equal(ggfit_devices_parse("m3-pro-18gb", d, GGFIT_MAX_DEVICES, &n, &err),
                     GGFIT_OK);
    assert_int_equal(n, 1);
    assert_string_equal(d[0].name, "Metal");
    assert_int_equal(d[0].kind, GGFIT_BACKEND_METAL);
    assert_true(d[0].unified);
    assert_int_equal(d[0].total, ggfit__metal_working_set(18 * GiB, 0, 0));
    assert_string_equal(d[0].description, "Apple M3 Pro (18 GB)");

    /* KIND: overrides the backend; /FREE still applies; names count per kind */
    assert_int_equal(ggfit_devices_parse("vulkan:rtx-3090,rx-7900-xtx/20GiB,rpc:h100-sxm,"
                                         "vulkan:rx-7900-xtx", d, GGFIT_MAX_DEVICES, &n, &err),
                     GGFIT_OK);
    assert_int_equal(n, 4);
    assert_string_equal(d[0].name, "Vulkan0");
    assert_int_equal(d[0].kind, GGFIT_BACKEND_VULKAN);
    assert_int_equal(d[0].total, 24 * GiB);
    assert_string_equal(d[1].name, "ROCm0");
    assert_int_equal(d[1].free, 20 * GiB);
    assert_string_equal(d[2].name, "RPC0");
    assert_int_equal(d[2].total, 80 * GiB);
    assert_string_equal(d[3].name, "Vulkan1");

    /* unknown ids name close ones */
    static const struct { const char *spec, *want; } bad[] = {
        { "rtx-390", "did you mean rtx-3090" },
        { "rtx-4060-ti", "rtx-4060-ti-8gb" },
        { "cuda:m3-pro-19gb", "m3-pro-18gb" },
        { "zzzzzzzzzzzzzzzzzz", "data/gpus.tsv" },
        { "rtx-3090/30GiB", "FREE <= TOTAL" },
        { "rtx-3090/abc", "bad free size" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(ggfit_devices_parse(bad[k].spec, d, GGFIT_MAX_DEVICES, &n, &err),
                         GGFIT_EINVAL);
        if (!strstr(err, bad[k].want))
            fail_msg("'%s': '%s' lacks '%s'", bad[k].spec, err, bad[k].want);
        assert_non_null(strstr(err, "--gpu"));
        ggfit_free(err);
        err = NULL;
    }
    char near[16];
    assert_int_equal(ggfit__catalog_suggest("rtx-3090x", near, sizeof near) > 0, 1);
    assert_true(strlen(near) < sizeof near);
    assert_int_equal(ggfit__catalog_suggest("rtx-3090x", near, 0) > 0, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_fields),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_metal_working_set),
        cmocka_unit_test(test_gpu_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
