/*
 * test_devices.c - the host probe and device discovery against fake roots
 * (meminfo, cgroups, cpuinfo, drm cards) written here, NVML through
 * tests/fake_nvml.c (built as libfake-nvml.so next to this binary) and the
 * renderers. (The Metal working-set rule is tested in test_catalog.c.)
 */
#include "test_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>

#include <jansson.h>

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)

static char fake_nvml[PATH_MAX];

/* ---- fake roots -------------------------------------------------------- */

static void mkdirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

/* Writes text to <root>/<rel>, creating directories. */
static void put(const char *root, const char *rel, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdirs(path);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A new empty root under the test's temporary directory. */
static const char *new_root(const char *name)
{
    static char roots[32][PATH_MAX];
    static int n;
    assert_true(n < 32);
    char *r = roots[n++];
    snprintf(r, PATH_MAX, "%s/%s", tmp_dir(), name);
    mkdirs(r);
    return r;
}

static const char meminfo[] = "MemTotal:       33554432 kB\n"
                              "MemFree:         1048576 kB\n"
                              "MemAvailable:   20971520 kB\n"
                              "Buffers:           1024 kB\n";

static const char cpuinfo_x86[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU\n"
    "flags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw avx512_vnni\n\n"
    "processor\t: 1\nflags\t\t: fpu\n";

static const char cpuinfo_avx2_only[] =
    "processor\t: 0\nmodel name\t: AMD Ryzen 7 5800X\nflags\t\t: fpu avx avx2 avx512bw_fake\n";

/* A Sapphire Rapids Xeon: AMX-INT8 with its tiles and AVX512-VNNI. */
static const char cpuinfo_amx[] =
    "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
    "flags\t\t: fpu avx2 avx512f avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8\n";

/* AMX-INT8 without the tile state a kernel grants: no AMX. */
static const char cpuinfo_amx_no_tile[] =
    "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_vnni amx_int8\n";

static const char cpuinfo_arm[] = "processor\t: 0\nBogoMIPS\t: 48.00\n"
                                  "Features\t: fp asimd evtstrm aes asimddp sha512 i8mm bf16\n"
                                  "CPU implementer\t: 0x41\n";

static ggfit_probe_options opts(const char *root)
{
    ggfit_probe_options o = {root, "/nonexistent/libnvidia-ml.so.1"};
    return o;
}

static ggfit_host_info probe_ok(const char *root)
{
    ggfit_probe_options o = opts(root);
    ggfit_host_info h;
    char *err = NULL;
    int rc = ggfit_host_probe(&o, &h, &err);
    if (rc)
        fail_msg("host probe of %s: %s", root, err ? err : "?");
    return h;
}

/* ---- the host ----------------------------------------------------------- */

static void test_host_no_cgroup(void **state)
{
    (void)state;
    const char *r = new_root("host-plain");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/cpuinfo", cpuinfo_x86);
    ggfit_host_info h = probe_ok(r);
    assert_int_equal(h.total, 32 * GiB);
    assert_int_equal(h.available, 20 * GiB);
    assert_int_equal(h.cpu_features, GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512);
    assert_string_equal(h.cpu_name, "Intel(R) Xeon(R) Gold 6338 CPU");
}

static void test_host_cgroup_v2_limit(void **state)
{
    (void)state;
    const char *r = new_root("host-cg2");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/self/cgroup", "0::/user.slice/app.scope\n");
    put(r, "sys/fs/cgroup/user.slice/app.scope/memory.max", "8589934592\n");
    put(r, "sys/fs/cgroup/user.slice/app.scope/memory.current", "3221225472\n");
    put(r, "sys/fs/cgroup/user.slice/memory.max", "max\n");
    put(r, "sys/fs/cgroup/user.slice/memory.current", "9999999999\n");
    ggfit_host_info h = probe_ok(r);
    assert_int_equal(h.total, 32 * GiB);
    assert_int_equal(h.available, 5 * GiB);   /* 8 GiB limit - 3 GiB used */
    assert_int_equal(h.cpu_features, 0);      /* no cpuinfo: nothing assumed */
    assert_string_equal(h.cpu_name, "");
}

static void test_host_cgroup_v2_parent_limit(void **state)
{
    (void)state;
    const char *r = new_root("host-cg2-parent");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/self/cgroup", "0::/outer/inner\n");
    put(r, "sys/fs/cgroup/outer/inner/memory.max", "max\n");
    put(r, "sys/fs/cgroup/outer/memory.max", "4294967296\n");
    put(r, "sys/fs/cgroup/outer/memory.current", "3758096384\n");
    ggfit_host_info h = probe_ok(r);
    assert_int_equal(h.available, 512 * MiB);  /* the ancestor's limit applies */
}

static void test_host_cgroup_v2_max(void **state)
{
    (void)state;
    const char *r = new_root("host-cg2-max");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/self/cgroup", "0::/a\n");
    put(r, "sys/fs/cgroup/a/memory.max", "max\n");
    put(r, "sys/fs/cgroup/a/memory.current", "1073741824\n");
    assert_int_equal(probe_ok(r).available, 20 * GiB);
}

static void test_host_cgroup_missing_files(void **state)
{
    (void)state;
    const char *r = new_root("host-cg-missing");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/self/cgroup", "0::/gone/away\n");   /* no sys/fs/cgroup at all */
    assert_int_equal(probe_ok(r).available, 20 * GiB);
}

static void test_host_cgroup_over_limit(void **state)
{
    (void)state;
    const char *r = new_root("host-cg-over");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/self/cgroup", "0::/\n");
    put(r, "sys/fs/cgroup/memory.max", "1073741824\n");
    put(r, "sys/fs/cgroup/memory.current", "2147483648\n");
    assert_int_equal(probe_ok(r).available, 0);
}

static void test_host_cgroup_v1(void **state)
{
    (void)state;
    const char *r = new_root("host-cg1");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/self/cgroup", "5:cpu:/\n4:memory:/docker/abc\n0::/\n");
    put(r, "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "6442450944\n");
    put(r, "sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", "2147483648\n");
    put(r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    assert_int_equal(probe_ok(r).available, 4 * GiB);
}

static void test_host_cpu_features(void **state)
{
    (void)state;
    const char *r = new_root("host-arm");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/cpuinfo", cpuinfo_arm);
    ggfit_host_info h = probe_ok(r);
    assert_int_equal(h.cpu_features, GGFIT_CPU_NEON_DOTPROD | GGFIT_CPU_NEON_I8MM);

    r = new_root("host-avx2");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/cpuinfo", cpuinfo_avx2_only);
    h = probe_ok(r);
    assert_int_equal(h.cpu_features, GGFIT_CPU_AVX2);   /* whole words only */
    assert_string_equal(h.cpu_name, "AMD Ryzen 7 5800X");

    r = new_root("host-amx");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/cpuinfo", cpuinfo_amx);
    assert_int_equal(probe_ok(r).cpu_features,
                     GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512 | GGFIT_CPU_AMX);
    r = new_root("host-amx-no-tile");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/cpuinfo", cpuinfo_amx_no_tile);
    assert_int_equal(probe_ok(r).cpu_features, GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512);
}

static void test_host_errors(void **state)
{
    (void)state;
    char *err = NULL;
    ggfit_host_info h;

    const char *r = new_root("host-empty");
    ggfit_probe_options o = opts(r);
    assert_int_equal(ggfit_host_probe(&o, &h, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "/proc/meminfo: cannot read: No such file"));
    ggfit_free(err);
    err = NULL;

    /* unreadable: a directory where the file should be (chmod does not stop
     * root, which the tests may run as) */
    r = new_root("host-unreadable");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/proc/meminfo", r);
    mkdirs(dir);
    o = opts(r);
    assert_int_equal(ggfit_host_probe(&o, &h, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "/proc/meminfo: cannot read"));
    ggfit_free(err);
    err = NULL;

    r = new_root("host-garbled");
    put(r, "proc/meminfo", "MemFree: lots\n");
    o = opts(r);
    assert_int_equal(ggfit_host_probe(&o, &h, &err), GGFIT_EFORMAT);
    assert_non_null(strstr(err, "no MemTotal"));
    ggfit_free(err);
    err = NULL;

    /* old kernels: no MemAvailable, MemFree stands in */
    r = new_root("host-old");
    put(r, "proc/meminfo", "MemTotal: 1024 kB\nMemFree: 512 kB\n");
    assert_int_equal(probe_ok(r).available, 512 * 1024);

    /* garbage in the cgroup files is no limit, not a crash */
    r = new_root("host-cg-garbage");
    put(r, "proc/meminfo", meminfo);
    put(r, "proc/self/cgroup", "garbage\n0::\n0::/x\n");
    put(r, "sys/fs/cgroup/x/memory.max", "12abc\n");
    assert_int_equal(probe_ok(r).available, 20 * GiB);

    assert_int_equal(ggfit_host_probe(&o, NULL, NULL), GGFIT_EINVAL);
}

static void test_host_sysroot_from_env(void **state)
{
    (void)state;
    const char *r = new_root("host-env");
    put(r, "proc/meminfo", "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
    setenv("GGFIT_SYSROOT", r, 1);
    ggfit_host_info h;
    assert_int_equal(ggfit_host_probe(NULL, &h, NULL), GGFIT_OK);
    assert_int_equal(h.total, 2048 * 1024);
    ggfit_probe_options o = {NULL, NULL};
    assert_int_equal(ggfit_host_probe(&o, &h, NULL), GGFIT_OK);
    assert_int_equal(h.available, 1024 * 1024);
    unsetenv("GGFIT_SYSROOT");
}

/* ---- AMD and Intel through sysfs -------------------------------------- */

static void card(const char *r, int n, const char *vendor, const char *vram_total,
                 const char *vram_used, const char *gtt_total, const char *gtt_used)
{
    char rel[128];
#define CARD_FILE(file, text)                                                  \
    do {                                                                       \
        if (text) {                                                            \
            snprintf(rel, sizeof rel, "sys/class/drm/card%d/device/%s", n, file); \
            put(r, rel, text);                                                 \
        }                                                                      \
    } while (0)
    CARD_FILE("vendor", vendor);
    CARD_FILE("device", "0x744c\n");
    CARD_FILE("mem_info_vram_total", vram_total);
    CARD_FILE("mem_info_vram_used", vram_used);
    CARD_FILE("mem_info_gtt_total", gtt_total);
    CARD_FILE("mem_info_gtt_used", gtt_used);
#undef CARD_FILE
}

static void test_drm_cards(void **state)
{
    (void)state;
    const char *r = new_root("drm");
    put(r, "proc/meminfo", meminfo);   /* 20 GiB available */
    /* AMD discrete: 24 GiB VRAM, 1 GiB used */
    card(r, 0, "0x1002\n", "25769803776\n", "1073741824\n", "17179869184\n", "0\n");
    /* AMD APU: 512 MiB carve-out, 16 GiB GTT of which 1 GiB used */
    card(r, 1, "0x1002\n", "536870912\n", "104857600\n", "17179869184\n", "1073741824\n");
    /* Intel Arc: 16 GiB, no used file */
    card(r, 2, "0x8086\n", "17179869184\n", NULL, NULL, NULL);
    /* NVIDIA (NVML's business), an Intel iGPU without VRAM files, a card
     * without a vendor file, a connector */
    card(r, 3, "0x10de\n", "8589934592\n", "0\n", NULL, NULL);
    card(r, 4, "0x8086\n", NULL, NULL, NULL, NULL);
    card(r, 5, NULL, "8589934592\n", "0\n", NULL, NULL);
    put(r, "sys/class/drm/card0-DP-1/status", "connected\n");
    put(r, "sys/class/drm/renderD128/dev", "226:128\n");
    /* a later AMD card, numbered past 9: sorted as a number */
    card(r, 10, "0x1002\n", "8589934592\n", "garbage\n", NULL, NULL);

    ggfit_probe_options o = opts(r);
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n = 99;
    char *err = NULL;
    assert_int_equal(ggfit_devices_discover(&o, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(n, 4);

    assert_string_equal(d[0].name, "ROCm0");
    assert_int_equal(d[0].kind, GGFIT_BACKEND_ROCM);
    assert_int_equal(d[0].total, 24 * GiB);
    assert_int_equal(d[0].free, 23 * GiB);
    assert_int_equal(d[0].held_by_others, 1 * GiB);
    assert_false(d[0].unified);
    assert_non_null(strstr(d[0].description, "AMD GPU 1002:744c (card0)"));

    assert_string_equal(d[1].name, "ROCm1");
    assert_true(d[1].unified);
    assert_int_equal(d[1].total, 512 * MiB + 16 * GiB);
    assert_int_equal(d[1].free, 412 * MiB + 15 * GiB);   /* GTT free under 20 GiB available */
    assert_int_equal(d[1].held_by_others, 100 * MiB + 1 * GiB);
    assert_non_null(strstr(d[1].description, "APU"));

    assert_string_equal(d[2].name, "Vulkan0");
    assert_int_equal(d[2].kind, GGFIT_BACKEND_VULKAN);
    assert_int_equal(d[2].total, 16 * GiB);
    assert_int_equal(d[2].free, 16 * GiB);
    assert_false(d[2].unified);

    assert_string_equal(d[3].name, "ROCm2");
    assert_int_equal(d[3].total, 8 * GiB);
    assert_int_equal(d[3].free, 8 * GiB);   /* unreadable used: all free */

    /* room for fewer: the first ones */
    assert_int_equal(ggfit_devices_discover(&o, d, 2, &n, NULL), GGFIT_OK);
    assert_int_equal(n, 2);
    assert_string_equal(d[1].name, "ROCm1");
    assert_int_equal(ggfit_devices_discover(&o, NULL, 0, &n, NULL), GGFIT_OK);
    assert_int_equal(n, 0);
    assert_int_equal(ggfit_devices_discover(&o, d, 2, NULL, &err), GGFIT_EINVAL);
    ggfit_free(err);
}

static void test_drm_apu_capped_by_host(void **state)
{
    (void)state;
    const char *r = new_root("drm-apu-tight");
    put(r, "proc/meminfo", "MemTotal: 33554432 kB\nMemAvailable: 2097152 kB\n");   /* 2 GiB */
    card(r, 0, "0x1002\n", "536870912\n", "0\n", "17179869184\n", "0\n");
    ggfit_probe_options o = opts(r);
    ggfit_device d[2];
    size_t n;
    assert_int_equal(ggfit_devices_discover(&o, d, 2, &n, NULL), GGFIT_OK);
    assert_int_equal(n, 1);
    assert_true(d[0].unified);
    assert_int_equal(d[0].free, 512 * MiB + 2 * GiB);
}

static void test_no_devices(void **state)
{
    (void)state;
    const char *r = new_root("nothing");   /* no sys, no proc, no NVML */
    ggfit_probe_options o = opts(r);
    ggfit_device d[2];
    size_t n = 7;
    assert_int_equal(ggfit_devices_discover(&o, d, 2, &n, NULL), GGFIT_OK);
    assert_int_equal(n, 0);
}

/* ---- NVIDIA through NVML ---------------------------------------------- */

static void test_nvml(void **state)
{
    (void)state;
    const char *r = new_root("nvml");
    card(r, 0, "0x1002\n", "17179869184\n", "0\n", NULL, NULL);
    ggfit_probe_options o = {r, fake_nvml};
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n;
    char *err = NULL;
    assert_int_equal(ggfit_devices_discover(&o, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(n, 3);

    assert_string_equal(d[0].name, "CUDA0");
    assert_int_equal(d[0].kind, GGFIT_BACKEND_CUDA);
    assert_string_equal(d[0].description, "NVIDIA GeForce RTX 4090");
    assert_int_equal(d[0].total, 24564 * MiB);
    assert_int_equal(d[0].free, 23000 * MiB);
    /* pid 100 is in both lists and counts once */
    assert_int_equal(d[0].held_by_others, 1300 * MiB);
    assert_true(d[0].bandwidth_gbs > 1008.09 && d[0].bandwidth_gbs < 1008.10);
    assert_false(d[0].unified);

    assert_string_equal(d[1].name, "CUDA1");
    assert_string_equal(d[1].description, "NVIDIA GeForce RTX 3090");
    assert_int_equal(d[1].total, 24 * GiB);
    assert_int_equal(d[1].free, 22 * GiB);
    assert_int_equal(d[1].held_by_others, 2 * GiB);   /* no process figures: all used */
    assert_true(d[1].bandwidth_gbs == 0);

    assert_string_equal(d[2].name, "ROCm0");

    /* NVML is initialised and shut down in pairs */
    void *lib = dlopen(fake_nvml, RTLD_NOW);
    assert_non_null(lib);
    void *sym = dlsym(lib, "fake_nvml_open_count");
    assert_non_null(sym);
    int (*open_count)(void);
    memcpy(&open_count, &sym, sizeof sym);
    assert_int_equal(open_count(), 0);

    /* room for one: CUDA0 only */
    assert_int_equal(ggfit_devices_discover(&o, d, 1, &n, NULL), GGFIT_OK);
    assert_int_equal(n, 1);
    assert_string_equal(d[0].name, "CUDA0");
    assert_int_equal(open_count(), 0);

    /* the driver not loaded: no NVIDIA GPUs, not an error */
    setenv("FAKE_NVML_FAIL_INIT", "1", 1);
    assert_int_equal(ggfit_devices_discover(&o, d, GGFIT_MAX_DEVICES, &n, NULL), GGFIT_OK);
    assert_int_equal(n, 1);
    assert_string_equal(d[0].name, "ROCm0");
    unsetenv("FAKE_NVML_FAIL_INIT");
    dlclose(lib);

    /* the library named by GGFIT_NVML when the options name none */
    setenv("GGFIT_NVML", fake_nvml, 1);
    o.nvml_path = NULL;
    assert_int_equal(ggfit_devices_discover(&o, d, GGFIT_MAX_DEVICES, &n, NULL), GGFIT_OK);
    assert_int_equal(n, 3);
    assert_string_equal(d[1].name, "CUDA1");
    unsetenv("GGFIT_NVML");

    /* a library that is not NVML at all */
    o.nvml_path = "libm.so.6";
    assert_int_equal(ggfit_devices_discover(&o, d, GGFIT_MAX_DEVICES, &n, NULL), GGFIT_OK);
    assert_int_equal(n, 1);
}

/* ---- renderers ----------------------------------------------------------- */

static void test_render(void **state)
{
    (void)state;
    ggfit_host_info h = {32 * GiB, 20 * GiB, GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512, "Test CPU"};
    ggfit_device d[2] = {0};
    snprintf(d[0].name, sizeof d[0].name, "CUDA0");
    d[0].kind = GGFIT_BACKEND_CUDA;
    d[0].total = 24 * GiB;
    d[0].free = 23 * GiB;
    d[0].held_by_others = 1 * GiB;
    d[0].bandwidth_gbs = 1008.1;
    snprintf(d[0].description, sizeof d[0].description, "NVIDIA GeForce RTX 4090");
    snprintf(d[1].name, sizeof d[1].name, "ROCm0");
    d[1].kind = GGFIT_BACKEND_ROCM;
    d[1].total = 16 * GiB;
    d[1].free = 16 * GiB;
    d[1].unified = true;

    char *t = ggfit_devices_text(&h, d, 2);
    assert_non_null(t);
    assert_non_null(strstr(t, "host: Test CPU"));
    assert_non_null(strstr(t, "32768 MiB total, 20480 MiB available"));
    assert_non_null(strstr(t, "avx2 avx512"));
    assert_non_null(strstr(t, "CUDA0      cuda        24576     23552      1024     1008  NVIDIA"));
    assert_non_null(strstr(t, "(unified memory)"));
    ggfit_free(t);

    t = ggfit_devices_text(&h, NULL, 0);
    assert_non_null(strstr(t, "no GPUs found"));
    ggfit_free(t);
    h.cpu_features |= GGFIT_CPU_AMX;
    t = ggfit_devices_text(&h, NULL, 0);
    assert_non_null(strstr(t, "  cpu        avx2 avx512 amx (features that decide"));
    ggfit_free(t);
    h.cpu_features &= ~(uint32_t)GGFIT_CPU_AMX;

    char *js = ggfit_devices_json(&h, d, 2);
    assert_non_null(js);
    json_error_t je;
    json_t *root = json_loads(js, 0, &je);
    assert_non_null(root);
    json_t *host = json_object_get(root, "host");
    assert_int_equal(json_integer_value(json_object_get(host, "available")), 20 * GiB);
    assert_string_equal(json_string_value(json_array_get(json_object_get(host, "cpu_features"), 1)),
                        "avx512");
    json_t *dev = json_array_get(json_object_get(root, "devices"), 0);
    assert_string_equal(json_string_value(json_object_get(dev, "name")), "CUDA0");
    assert_int_equal(json_integer_value(json_object_get(dev, "held_by_others")), 1 * GiB);
    assert_true(json_is_true(json_object_get(json_array_get(json_object_get(root, "devices"), 1),
                                             "unified")));
    json_decref(root);
    ggfit_free(js);

    js = ggfit_devices_json(NULL, NULL, 0);
    assert_non_null(strstr(js, "\"devices\": []"));
    ggfit_free(js);
}

int main(int argc, char **argv)
{
    (void)argc;
    ggfit_text_set_columns(0);   /* whole lines: the phrases are checked, not the layout */
    const char *slash = strrchr(argv[0], '/');
    snprintf(fake_nvml, sizeof fake_nvml, "%.*s/libfake-nvml.so",
             slash ? (int)(slash - argv[0]) : 1, slash ? argv[0] : ".");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_no_cgroup),
        cmocka_unit_test(test_host_cgroup_v2_limit),
        cmocka_unit_test(test_host_cgroup_v2_parent_limit),
        cmocka_unit_test(test_host_cgroup_v2_max),
        cmocka_unit_test(test_host_cgroup_missing_files),
        cmocka_unit_test(test_host_cgroup_over_limit),
        cmocka_unit_test(test_host_cgroup_v1),
        cmocka_unit_test(test_host_cpu_features),
        cmocka_unit_test(test_host_errors),
        cmocka_unit_test(test_host_sysroot_from_env),
        cmocka_unit_test(test_drm_cards),
        cmocka_unit_test(test_drm_apu_capped_by_host),
        cmocka_unit_test(test_no_devices),
        cmocka_unit_test(test_nvml),
        cmocka_unit_test(test_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
