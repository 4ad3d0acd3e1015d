/*
 * test_catalog.c - the catalog of GPUs and Macs (data/gpus.tsv), the Metal
 * working-set rule, and --gpu by catalog id.
 */
#include <ctype.h>
#include <strings.h>

#include <jansson.h>

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

/* The laptop parts: NVIDIA's reference memory, bus width x data rate. */
static void test_laptops(void **state)
{
    (void)state;
    static const struct { const char *id; unsigned gib; double gbs; } want[] = {
        { "rtx-3060-laptop", 6, 336 },   /* 192-bit x 14 Gbps */
        { "rtx-3070-laptop", 8, 448 },   /* 256-bit x 14 Gbps */
        { "rtx-3070-ti-laptop", 8, 448 },
        { "rtx-3080-laptop-8gb", 8, 448 },
        { "rtx-3080-laptop-16gb", 16, 448 },
        { "rtx-3080-ti-laptop", 16, 512 },   /* 256-bit x 16 Gbps */
        { "rtx-4050-laptop", 6, 192 },   /*  96-bit x 16 Gbps */
        { "rtx-4060-laptop", 8, 256 },   /* 128-bit x 16 Gbps */
        { "rtx-4070-laptop", 8, 256 },
        { "rtx-4080-laptop", 12, 432 },  /* 192-bit x 18 Gbps */
        { "rtx-4090-laptop", 16, 576 },  /* 256-bit x 18 Gbps */
        { "rtx-5060-laptop", 8, 384 },   /* 128-bit x 24 Gbps */
        { "rtx-5070-laptop", 8, 384 },
        { "rtx-5080-laptop", 16, 896 },  /* 256-bit x 28 Gbps */
        { "rtx-5090-laptop", 24, 896 },
    };
    size_t n_want = sizeof want / sizeof want[0];
    assert_int_equal(ggfit_catalog_list("-laptop", NULL, 0), n_want);
    for (size_t i = 0; i < n_want; i++) {
        const ggfit_catalog_entry *e = ggfit_catalog_find(want[i].id);
        if (!e)
            fail_msg("%s is not in the catalog", want[i].id);
        assert_int_equal(e->kind, GGFIT_BACKEND_CUDA);
        assert_int_equal(e->memory, want[i].gib * GiB);
        assert_int_equal(e->system_memory, 0);
        assert_true(e->bandwidth_gbs == want[i].gbs);
        assert_non_null(strstr(e->name, "Laptop GPU"));
        assert_non_null(strstr(e->source, "Gbps"));   /* the data rate's source */
    }
    /* a laptop part is never taken for the desktop card of its name */
    assert_true(ggfit_catalog_find("rtx-4090-laptop")->memory <
                ggfit_catalog_find("rtx-4090")->memory);
}

static bool contains_nocase(const char *hay, const char *needle)
{
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, strlen(needle)) == 0)
            return true;
    return false;
}

static void test_list(void **state)
{
    (void)state;
    size_t n = ggfit_catalog_count();
    assert_int_equal(ggfit_catalog_list(NULL, NULL, 0), n);
    assert_int_equal(ggfit_catalog_list("", NULL, 0), n);
    const ggfit_catalog_entry *rows[256];
    assert_true(n <= 256);
    assert_int_equal(ggfit_catalog_list(NULL, rows, 256), n);
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(rows[i], ggfit_catalog_get(i));   /* the catalog's order */

    /* by id or name, ignoring case */
    size_t n_laptops = ggfit_catalog_list("LAPTOP", rows, 256), k = n_laptops;
    assert_true(k >= 15);
    for (size_t i = 0; i < k; i++)
        assert_non_null(strstr(rows[i]->id, "-laptop"));
    k = ggfit_catalog_list("radeon", rows, 256);   /* names only: RX, PRO, 8060S */
    assert_true(k >= 3);
    for (size_t i = 0; i < k; i++)
        assert_true(contains_nocase(rows[i]->name, "radeon"));
    assert_int_equal(ggfit_catalog_list("rtx-3090", rows, 256), 2);   /* and -ti */
    assert_string_equal(rows[0]->id, "rtx-3090");
    assert_string_equal(rows[1]->id, "rtx-3090-ti");
    assert_int_equal(ggfit_catalog_list("no such device", rows, 256), 0);

    /* a short out: the count is still every match; the rest untouched */
    rows[1] = NULL;
    assert_int_equal(ggfit_catalog_list("laptop", rows, 1), n_laptops);
    assert_string_equal(rows[0]->id, "rtx-3060-laptop");
    assert_null(rows[1]);
}

static void test_render(void **state)
{
    (void)state;
    const ggfit_catalog_entry *rows[256];
    size_t n = ggfit_catalog_list(NULL, rows, 256);
    char *text = ggfit_catalog_text(rows, n);
    assert_non_null(text);
    size_t lines = 0;
    for (char *l = text, *end; *l; l = end + 1, lines++) {
        end = strchr(l, '\n');
        assert_non_null(end);
        if (end - l > 80)
            fail_msg("wider than 80 columns: %.*s", (int)(end - l), l);
    }
    assert_int_equal(lines, n + 3);   /* the heading, the rows, two lines of notes */
    assert_true(strncmp(text, "id ", 3) == 0);
    /* ids past 20 characters push their row right; a name that would pass
     * 80 columns is cut */
    assert_non_null(strstr(text, "\nrtx-3090              cuda    24.0  936  NVIDIA GeForce RTX 3090\n"));
    assert_non_null(strstr(text, "\nrtx-3080-laptop-16gb  cuda    16.0  448  NVIDIA GeForce RTX 3080"
                                 " Laptop GPU 16GB\n"));
    assert_non_null(strstr(text, "\nryzen-ai-max-395-128gb  vulkan  96.0  256  AMD Ryzen AI"));
    assert_non_null(strstr(text, "...\n"));
    ggfit_free(text);

    /* the filtered table narrows its id column */
    size_t k = ggfit_catalog_list("laptop", rows, 256);
    text = ggfit_catalog_text(rows, k);
    assert_non_null(strstr(text, "\nrtx-4060-laptop       cuda     8.0  256  NVIDIA GeForce RTX 4060"
                                 " Laptop GPU\n"));
    k = ggfit_catalog_list("ultra", rows, 256);   /* ids of 14 characters at most */
    ggfit_free(text);
    text = ggfit_catalog_text(rows, k);
    assert_non_null(strstr(text, "\nm3-ultra-512gb  metal  445.4  819  Apple M3 Ultra (512 GB)\n"));
    ggfit_free(text);
    text = ggfit_catalog_text(rows, 0);
    assert_non_null(strstr(text, "0 of "));
    ggfit_free(text);

    /* JSON: bytes and the source, whole */
    n = ggfit_catalog_list("m3-pro-18gb", rows, 256);
    assert_int_equal(n, 1);
    text = ggfit_catalog_json(rows, n);
    assert_non_null(text);
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    assert_non_null(root);
    json_t *devs = json_object_get(root, "devices");
    assert_int_equal(json_array_size(devs), 1);
    json_t *d = json_array_get(devs, 0);
    assert_string_equal(json_string_value(json_object_get(d, "id")), "m3-pro-18gb");
    assert_string_equal(json_string_value(json_object_get(d, "backend")), "metal");
    assert_int_equal(json_integer_value(json_object_get(d, "memory")), rows[0]->memory);
    assert_int_equal(json_integer_value(json_object_get(d, "system_memory")), 18 * GiB);
    assert_true(json_real_value(json_object_get(d, "bandwidth_gbs")) == 150.0);
    assert_string_equal(json_string_value(json_object_get(d, "source")), rows[0]->source);
    json_decref(root);
    ggfit_free(text);
}

/* Unknown ids name the closest ones, best first, by token-aware distance. */
static void test_suggest(void **state)
{
    (void)state;
    static const struct { const char *typed, *first, *also, *not; } cases[] = {
        /* a letter off the laptop part: it, then the desktop card */
        { "rtx-4060-laptopp", "rtx-4060-laptop, rtx-4060, ", NULL, "rtx-3060-ti" },
        { "rtx-4060-laptp", "rtx-4060-laptop, rtx-4060, ", NULL, "rtx-3060-ti" },
        /* a variant the catalog lacks: the card, then its laptop part */
        { "rtx-4060-mobile", "rtx-4060, rtx-4060-laptop", NULL, "rtx-3060" },
        /* typed short: the ids that go on from it, before one digit off */
        { "rtx-4060-ti", "rtx-4060-ti-8gb, rtx-4060-ti-16gb", NULL, "rtx-3060-ti" },
        { "a100", "a100-40gb, a100-80gb", NULL, NULL },
        /* a model number mistyped */
        { "rtx-390", "rtx-3090", NULL, NULL },
        { "m3-pro-19gb", "m3-pro-18gb", NULL, NULL },
        { "rtx-3090x", "rtx-3090", NULL, NULL },
        /* dashes left out */
        { "rtx4090", "rtx-4090", NULL, NULL },
        { "RTX-4090-LAPTOPP", "rtx-4090-laptop", "rtx-4090", NULL },
        /* nothing related */
        { "zzzzzzzzzzzzzzzzzz", NULL, NULL, NULL },
        { "qwerty-uiop", NULL, NULL, NULL },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char near[160];
        size_t n = ggfit__catalog_suggest(cases[k].typed, near, sizeof near);
        if (!cases[k].first) {
            if (n)
                fail_msg("'%s' suggests '%s'", cases[k].typed, near);
            assert_string_equal(near, "");
            continue;
        }
        assert_true(n >= 1 && n <= 3);
        if (strncmp(near, cases[k].first, strlen(cases[k].first)) != 0)
            fail_msg("'%s' suggests '%s', not '%s' first", cases[k].typed, near, cases[k].first);
        if (cases[k].also && !strstr(near, cases[k].also))
            fail_msg("'%s' suggests '%s', without '%s'", cases[k].typed, near, cases[k].also);
        if (cases[k].not && strstr(near, cases[k].not))
            fail_msg("'%s' suggests '%s', with '%s'", cases[k].typed, near, cases[k].not);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_fields),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_metal_working_set),
        cmocka_unit_test(test_gpu_ids),
        cmocka_unit_test(test_laptops),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_suggest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
