/*
 * discover.c - this machine: system memory, CPU features and the GPUs
 * llama.cpp's backends would see.
 *
 * Every probe reads files under a sysroot (ggfit_probe_options.sysroot, else
 * $GGFIT_SYSROOT, else "/"), so the tests run each probe against a fake root:
 *   <root>/proc/meminfo              MemTotal, MemAvailable (kB)
 *   <root>/proc/self/cgroup          "0::/path" (v2) or "N:memory:/path" (v1)
 *   <root>/sys/fs/cgroup/<path>/memory.max, memory.current          (v2)
 *   <root>/sys/fs/cgroup/memory/<path>/memory.limit_in_bytes,
 *                                      memory.usage_in_bytes           (v1)
 *   <root>/proc/cpuinfo              flags / Features, model name
 *   <root>/sys/class/drm/cardN/device/vendor, mem_info_vram_{total,used},
 *                                      mem_info_gtt_{total,used}
 * NVIDIA GPUs come from NVML, loaded with dlopen (no CUDA at build time);
 * Apple silicon from sysctl and Metal (macOS only, see the end of the file).
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "ggml/backend.h"
#include "devices/catalog.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)
#define GiB (1024ull * 1024ull * 1024ull)

static const char *root_of(const ggfit_probe_options *o)
{
    if (o && o->sysroot)
        return o->sysroot;
    const char *e = getenv("GGFIT_SYSROOT");
    return e ? e : "";
}

/* Reads <root><path> into buf (NUL-terminated, truncated to size-1 bytes).
 * Returns 0, or -1 with errno set when the file cannot be read. */
static int read_text(const char *root, const char *path, char *buf, size_t size)
{
    char full[PATH_MAX];
    if ((size_t)snprintf(full, sizeof full, "%s%s", root, path) >= sizeof full) {
        errno = ENAMETOOLONG;
        return -1;
    }
    FILE *f = fopen(full, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        errno = EIO;
        return -1;
    }
    buf[n] = '\0';
    return 0;
}

/* A file holding one unsigned number (sysfs, cgroup). False when the file is
 * missing or holds something else ("max"). */
static bool read_u64(const char *root, const char *path, uint64_t *v)
{
    char buf[64], *end;
    if (read_text(root, path, buf, sizeof buf))
        return false;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 0);
    if (end == buf || errno || (*end && !isspace((unsigned char)*end)))
        return false;
    *v = x;
    return true;
}

/* The value of "key:  N kB" in meminfo text, in bytes. */
static bool meminfo_field(const char *text, const char *key, uint64_t *bytes)
{
    size_t len = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, key, len) || l[len] != ':')
            continue;
        char *end;
        unsigned long long kb = strtoull(l + len + 1, &end, 10);
        if (end == l + len + 1 || kb > UINT64_MAX / KiB)
            return false;
        *bytes = kb * KiB;
        return true;
    }
    return false;
}

/* ---- cgroups ------------------------------------------------------------- */

/* Bytes the cgroup at dir (and every ancestor, whose limits also apply) may
 * still allocate: the smallest limit - usage. UINT64_MAX when none is set. */
static uint64_t cgroup_room(const char *root, const char *base, const char *cg,
                            const char *max_file, const char *cur_file)
{
    char dir[PATH_MAX], path[PATH_MAX];
    uint64_t room = UINT64_MAX;
    if ((size_t)snprintf(dir, sizeof dir, "%s", cg) >= sizeof dir)
        return room;
    for (;;) {
        size_t dl = strlen(dir);
        while (dl > 1 && dir[dl - 1] == '/')
            dir[--dl] = '\0';
        uint64_t limit, usage = 0;
        snprintf(path, sizeof path, "%s%s/%s", base, dl > 1 ? dir : "", max_file);
        if (read_u64(root, path, &limit)) {   /* "max" or missing: no limit */
            snprintf(path, sizeof path, "%s%s/%s", base, dl > 1 ? dir : "", cur_file);
            if (!read_u64(root, path, &usage))
                usage = 0;
            uint64_t r = usage < limit ? limit - usage : 0;
            if (r < room)
                room = r;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || dl <= 1)
            break;
        slash[slash == dir ? 1 : 0] = '\0';
    }
    return room;
}

/* The room the process's cgroup leaves, v2 first, then v1's memory
 * controller. In a container without a cgroup namespace the path named in
 * /proc/self/cgroup may not exist under the mount; its ancestors (down to
 * the mount's root, the container's own group) are read instead. */
static uint64_t cgroup_available(const char *root)
{
    char text[4096];
    uint64_t room = UINT64_MAX;
    if (read_text(root, "/proc/self/cgroup", text, sizeof text))
        return room;
    /* strtok_r: a batch probes the host on every thread at once */
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        uint64_t r = UINT64_MAX;
        if (!strncmp(l, "0::", 3))
            r = cgroup_room(root, "/sys/fs/cgroup", c2 + 1, "memory.max", "memory.current");
        else if ((size_t)(c2 - c1 - 1) == strlen("memory") && !strncmp(c1 + 1, "memory", 6))
            r = cgroup_room(root, "/sys/fs/cgroup/memory", c2 + 1, "memory.limit_in_bytes",
                            "memory.usage_in_bytes");
        if (r < room)
            room = r;
    }
    return room;
}

/* ---- the host ------------------------------------------------------------ */

#ifdef __APPLE__
static ggfit_status apple_host(ggfit_host_info *h, char **err);
#endif

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || isspace((unsigned char)p[-1])) && (!p[n] || isspace((unsigned char)p[n])))
            return true;
    return false;
}

/* The rest of the first line "key<spaces>: value", NUL-terminated into out. */
static bool cpuinfo_field(const char *text, const char *key, char *out, size_t size)
{
    size_t len = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, key, len))
            continue;
        const char *p = l + len;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, "\n");
        snprintf(out, size, "%.*s", (int)n, p);
        return true;
    }
    return false;
}

static void probe_cpu(const char *root, ggfit_host_info *h)
{
    /* cpuinfo is large on many-core machines; the first processor's block
     * carries everything read here. */
    char text[16 * 1024];
    char flags[8192];
    if (read_text(root, "/proc/cpuinfo", text, sizeof text))
        return;   /* no cpuinfo: no features assumed */
    if (cpuinfo_field(text, "flags", flags, sizeof flags)) {
        if (has_word(flags, "avx2"))
            h->cpu_features |= GGFIT_CPU_AVX2;
        if (has_word(flags, "avx512f"))
            h->cpu_features |= GGFIT_CPU_AVX512;
        /* ggml's AMX buffer type needs AMX-INT8 and AVX512-VNNI, and the
         * tile data the kernel grants (ggml_amx_init); a kernel that
         * cannot enable it clears amx_tile. (Kernels 5.11 to 5.15 list the
         * flags without granting the tiles: taken as granting them.) */
        if (has_word(flags, "amx_int8") && has_word(flags, "amx_tile") &&
            has_word(flags, "avx512_vnni"))
            h->cpu_features |= GGFIT_CPU_AMX;
    }
    if (cpuinfo_field(text, "Features", flags, sizeof flags)) {
        if (has_word(flags, "asimddp"))
            h->cpu_features |= GGFIT_CPU_NEON_DOTPROD;
        if (has_word(flags, "i8mm"))
            h->cpu_features |= GGFIT_CPU_NEON_I8MM;
    }
    if (!cpuinfo_field(text, "model name", h->cpu_name, sizeof h->cpu_name))
        cpuinfo_field(text, "Hardware", h->cpu_name, sizeof h->cpu_name);
}

ggfit_status ggfit_host_probe(const ggfit_probe_options *o, ggfit_host_info *host, char **err)
{
    if (!host)
        return ggfit__fail(err, GGFIT_EINVAL, "host probe: no output given");
    memset(host, 0, sizeof *host);
#ifdef __APPLE__
    (void)o;
    return apple_host(host, err);
#else
    const char *root = root_of(o);
    char text[8192];
    if (read_text(root, "/proc/meminfo", text, sizeof text))
        return ggfit__fail(err, GGFIT_EIO, "%s/proc/meminfo: cannot read: %s", root,
                           strerror(errno));
    if (!meminfo_field(text, "MemTotal", &host->total))
        return ggfit__fail(err, GGFIT_EFORMAT, "%s/proc/meminfo: no MemTotal line", root);
    /* Kernels before 3.14 have no MemAvailable; MemFree undercounts. */
    if (!meminfo_field(text, "MemAvailable", &host->available) &&
        !meminfo_field(text, "MemFree", &host->available))
        return ggfit__fail(err, GGFIT_EFORMAT, "%s/proc/meminfo: no MemAvailable line", root);
    uint64_t room = cgroup_available(root);
    if (room < host->available)
        host->available = room;
    probe_cpu(root, host);
    return GGFIT_OK;
#endif
}

/* ---- NVIDIA: NVML -------------------------------------------------------- */

/* NVML's ABI (nvml.h), declared here so that the build needs no CUDA. */
typedef int nvmlReturn_t;                   /* NVML_SUCCESS = 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlMemory_st {
    unsigned long long total, free, used;   /* bytes */
} nvmlMemory_t;
typedef struct nvmlProcessInfo_st {         /* _v2 and _v3 calls */
    unsigned int pid;
    unsigned long long usedGpuMemory;       /* bytes, or NVML_VALUE_NOT_AVAILABLE */
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_CLOCK_MEM 2
#define NVML_NAME_BUFFER 96                 /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NVML_MAX_PROCS 256

typedef nvmlReturn_t (*nvml_procs_fn)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);

typedef struct nvml_api {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
    nvml_procs_fn compute_procs, graphics_procs;               /* optional */
    nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned int *); /* optional */
    nvmlReturn_t (*bus_width)(nvmlDevice_t, unsigned int *);      /* optional */
} nvml_api;

/* Adds the memory of the processes in one list that are not in seen yet.
 * False when NVML cannot tell (no function, no permission, no figures). */
static bool nvml_procs(nvml_procs_fn fn, nvmlDevice_t dev, unsigned int *seen, unsigned int *n_seen,
                       uint64_t *held)
{
    nvmlProcessInfo_t procs[NVML_MAX_PROCS];
    unsigned int n = NVML_MAX_PROCS;
    if (!fn || fn(dev, &n, procs) != NVML_SUCCESS || n > NVML_MAX_PROCS)
        return false;
    for (unsigned int i = 0; i < n; i++) {
        if (procs[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE)
            return false;
        bool dup = false;
        for (unsigned int j = 0; j < *n_seen; j++)
            dup |= seen[j] == procs[i].pid;
        if (dup)
            continue;   /* a process can be in both lists with the same memory */
        if (*n_seen < 2 * NVML_MAX_PROCS)
            seen[(*n_seen)++] = procs[i].pid;
        *held += procs[i].usedGpuMemory;
    }
    return true;
}

/* The NVML library asked for: the option's, GGFIT_NVML, else the driver's. */
static const char *nvml_path(const ggfit_probe_options *o)
{
    const char *path = o && o->nvml_path ? o->nvml_path : getenv("GGFIT_NVML");
    return path ? path : "libnvidia-ml.so.1";
}

/* Whether dlopen could give NVML: a path that is there, or the driver's
 * library where the NVIDIA kernel driver is loaded (NVML starts nowhere
 * else). Asked only in a statically linked program, which cannot load it
 * (base/linking.c): there the GPUs are then this program's to miss. */
static bool nvml_may_load(const ggfit_probe_options *o)
{
    const char *path = nvml_path(o);
    return strchr(path, '/') ? access(path, F_OK) == 0
                             : access("/proc/driver/nvidia/version", F_OK) == 0;
}

static void discover_nvml(const ggfit_probe_options *o, ggfit_device *out, size_t max, size_t *n)
{
    const char *path = nvml_path(o);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;   /* no NVIDIA driver: no NVIDIA GPUs */
    nvml_api api;
    /* POSIX guarantees that a dlsym result converts to a function pointer;
     * ISO C does not, hence the copy through memcpy. */
#define NVML_SYM(field, sym)                                                  \
    do {                                                                      \
        void *s_ = dlsym(lib, sym);                                           \
        memcpy(&api.field, &s_, sizeof s_);                                   \
    } while (0)
    NVML_SYM(init, "nvmlInit_v2");
    NVML_SYM(shutdown, "nvmlShutdown");
    NVML_SYM(count, "nvmlDeviceGetCount_v2");
    NVML_SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
    NVML_SYM(name, "nvmlDeviceGetName");
    NVML_SYM(memory, "nvmlDeviceGetMemoryInfo");
    NVML_SYM(compute_procs, "nvmlDeviceGetComputeRunningProcesses_v3");
    NVML_SYM(graphics_procs, "nvmlDeviceGetGraphicsRunningProcesses_v3");
    NVML_SYM(max_clock, "nvmlDeviceGetMaxClockInfo");
    NVML_SYM(bus_width, "nvmlDeviceGetMemoryBusWidth");
#undef NVML_SYM
    unsigned int count = 0;
    if (!api.init || !api.shutdown || !api.count || !api.handle || !api.memory ||
        api.init() != NVML_SUCCESS) {
        dlclose(lib);
        return;
    }
    if (api.count(&count) != NVML_SUCCESS)
        count = 0;
    /* NVML numbers GPUs in PCI bus order; CUDA does too with
     * CUDA_DEVICE_ORDER=PCI_BUS_ID (its default orders fastest first). */
    unsigned int idx = 0;
    for (unsigned int i = 0; i < count && *n < max; i++) {
        nvmlDevice_t dev;
        nvmlMemory_t mem;
        if (api.handle(i, &dev) != NVML_SUCCESS || api.memory(dev, &mem) != NVML_SUCCESS)
            continue;
        ggfit_device *d = &out[(*n)++];
        memset(d, 0, sizeof *d);
        d->kind = GGFIT_BACKEND_CUDA;
        snprintf(d->name, sizeof d->name, "%s%u", ggfit__backend(d->kind)->device_prefix, idx++);
        d->total = mem.total;
        d->free = mem.free < mem.total ? mem.free : mem.total;
        char name[NVML_NAME_BUFFER] = "";
        if (api.name && api.name(dev, name, sizeof name) == NVML_SUCCESS) {
            name[sizeof name - 1] = '\0';
            snprintf(d->description, sizeof d->description, "%s", name);
        }
        /* NVML's free already excludes what others hold; say how much that
         * is: the processes' own figures, else everything in use (which
         * then includes the driver's reservation). */
        unsigned int seen[2 * NVML_MAX_PROCS], n_seen = 0;
        uint64_t held = 0;
        if (nvml_procs(api.compute_procs, dev, seen, &n_seen, &held) &&
            nvml_procs(api.graphics_procs, dev, seen, &n_seen, &held))
            d->held_by_others = held;
        else
            d->held_by_others = mem.used;
        /* Peak bandwidth: memory clock (MHz) x 2 transfers x bus bytes; this
         * gives the data-sheet figure for GDDR6/6X and HBM alike. */
        unsigned int mhz = 0, bits = 0;
        if (api.max_clock && api.bus_width && api.max_clock(dev, NVML_CLOCK_MEM, &mhz) == NVML_SUCCESS &&
            api.bus_width(dev, &bits) == NVML_SUCCESS)
            d->bandwidth_gbs = (double)mhz * 1e6 * 2.0 * (double)bits / 8.0 / 1e9;
    }
    api.shutdown();
    dlclose(lib);
}

/* ---- AMD and Intel: sysfs ------------------------------------------------- */

/* An AMD APU's VRAM is a small carve-out of system memory, the rest comes
 * through GTT (system pages the GPU maps). sysfs has no "integrated" flag,
 * so a card with at most this much VRAM and more GTT than VRAM is taken for
 * an APU; no discrete GPU ROCm supports has so little. */
#define APU_MAX_VRAM (2 * GiB)

static int card_number(const char *name)
{
    if (strncmp(name, "card", 4) || !isdigit((unsigned char)name[4]))
        return -1;
    char *end;
    long v = strtol(name + 4, &end, 10);
    return *end || v > 4096 ? -1 : (int)v;   /* "card0-DP-1" is a connector */
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* AMD cards become ROCm devices (ROCm0, ROCm1, ... in card order), as the
 * HIP build of llama.cpp names them; Intel cards become Vulkan devices,
 * Intel's usual llama.cpp backend (SYCL names them differently). Both
 * count only cards whose driver reports VRAM in sysfs (amdgpu does; Intel's
 * xe driver with the same files); Intel's integrated GPUs have none and are
 * left out. */
static void discover_drm(const char *root, const ggfit_host_info *host, ggfit_device *out,
                         size_t max, size_t *n)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/sys/class/drm", root);
    DIR *dir = opendir(path);
    if (!dir)
        return;
    int cards[64];
    size_t n_cards = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && n_cards < 64) {
        int c = card_number(e->d_name);
        if (c >= 0)
            cards[n_cards++] = c;
    }
    closedir(dir);
    qsort(cards, n_cards, sizeof cards[0], cmp_int);
    unsigned int n_rocm = 0, n_vulkan = 0;
    for (size_t i = 0; i < n_cards && *n < max; i++) {
        char base[64];
        uint64_t vendor, device = 0, vram_total, vram_used = 0, gtt_total = 0, gtt_used = 0;
        snprintf(base, sizeof base, "/sys/class/drm/card%d/device", cards[i]);
#define DRM_FILE(file, var) \
    (snprintf(path, sizeof path, "%s/" file, base), read_u64(root, path, var))
        if (!DRM_FILE("vendor", &vendor) || (vendor != 0x1002 && vendor != 0x8086) ||
            !DRM_FILE("mem_info_vram_total", &vram_total) || vram_total == 0)
            continue;
        if (!DRM_FILE("mem_info_vram_used", &vram_used))
            vram_used = 0;   /* unknown: all free */
        if (vram_used > vram_total)
            vram_used = vram_total;
        DRM_FILE("device", &device);
        DRM_FILE("mem_info_gtt_total", &gtt_total);
        DRM_FILE("mem_info_gtt_used", &gtt_used);
#undef DRM_FILE
        ggfit_device *d = &out[(*n)++];
        memset(d, 0, sizeof *d);
        bool amd = vendor == 0x1002;
        d->kind = amd ? GGFIT_BACKEND_ROCM : GGFIT_BACKEND_VULKAN;
        snprintf(d->name, sizeof d->name, "%s%u", ggfit__backend(d->kind)->device_prefix,
                 amd ? n_rocm++ : n_vulkan++);
        d->total = vram_total;
        d->free = vram_total - vram_used;
        d->held_by_others = vram_used;
        d->unified = amd && vram_total <= APU_MAX_VRAM && gtt_total > vram_total;
        if (d->unified) {
            /* The GPU reaches system memory through GTT; llama.cpp's HIP
             * build budgets an integrated GPU from MemAvailable. */
            uint64_t gtt_free = gtt_used < gtt_total ? gtt_total - gtt_used : 0;
            if (host && host->available < gtt_free)
                gtt_free = host->available;
            d->total = vram_total + gtt_total;
            d->free += gtt_free;
            d->held_by_others += gtt_used < gtt_total ? gtt_used : gtt_total;
        }
        snprintf(d->description, sizeof d->description, "%s %s %04llx:%04llx (card%d)",
                 amd ? "AMD" : "Intel", d->unified ? "APU" : "GPU", (unsigned long long)vendor,
                 (unsigned long long)device, cards[i]);
    }
}

#ifdef __APPLE__
/* ---- Apple silicon: macOS only (cannot be built on Linux) ------------------
 * sysctl for hw.memsize and iogpu.wired_limit_mb; Metal through the
 * Objective-C runtime from C, loaded with dlopen so the build links no
 * framework. When Metal cannot be asked, the portable rule of catalog.c
 * (ggfit__metal_working_set, tested there with users' figures) stands in. */
#include <objc/message.h>
#include <objc/runtime.h>
#include <sys/sysctl.h>

static uint64_t sysctl_u64(const char *name)
{
    uint64_t v = 0;
    size_t len = sizeof v;
    if (sysctlbyname(name, &v, &len, NULL, 0) != 0)
        return 0;
    if (len == sizeof(uint32_t)) {
        uint32_t v32;
        memcpy(&v32, &v, sizeof v32);
        return v32;
    }
    return v;
}

static ggfit_status apple_host(ggfit_host_info *h, char **err)
{
    h->total = sysctl_u64("hw.memsize");
    if (!h->total)
        return ggfit__fail(err, GGFIT_EIO, "sysctl hw.memsize: %s", strerror(errno));
    h->available = h->total;   /* unified: the GPU's budget is the limit */
    size_t len = sizeof h->cpu_name;
    if (sysctlbyname("machdep.cpu.brand_string", h->cpu_name, &len, NULL, 0) != 0)
        h->cpu_name[0] = '\0';
    if (sysctl_u64("hw.optional.arm.FEAT_DotProd"))
        h->cpu_features |= GGFIT_CPU_NEON_DOTPROD;
    if (sysctl_u64("hw.optional.arm.FEAT_I8MM"))
        h->cpu_features |= GGFIT_CPU_NEON_I8MM;
    return GGFIT_OK;
}

/* The major version of macOS ("26.0.1" -> 26); 0 when unknown (newest). */
static unsigned macos_major(void)
{
    char v[32] = "";
    size_t len = sizeof v - 1;
    if (sysctlbyname("kern.osproductversion", v, &len, NULL, 0) != 0)
        return 0;
    return (unsigned)strtoul(v, NULL, 10);
}

static void discover_metal(ggfit_device *out, size_t max, size_t *n)
{
    if (*n >= max)
        return;
    uint64_t memsize = sysctl_u64("hw.memsize");
    uint64_t limit = ggfit__metal_working_set(memsize, sysctl_u64("iogpu.wired_limit_mb"),
                                              macos_major());
    uint64_t used = 0;
    char name[128] = "Apple GPU";
    void *metal = dlopen("/System/Library/Frameworks/Metal.framework/Metal", RTLD_LAZY);
    void *create = metal ? dlsym(metal, "MTLCreateSystemDefaultDevice") : NULL;
    if (create) {
        id (*mtl_create)(void);
        memcpy(&mtl_create, &create, sizeof create);
        id dev = mtl_create();
        if (dev) {
            uint64_t (*msg_u64)(id, SEL) = (uint64_t(*)(id, SEL))objc_msgSend;
            id (*msg_id)(id, SEL) = (id(*)(id, SEL))objc_msgSend;
            const char *(*msg_str)(id, SEL) = (const char *(*)(id, SEL))objc_msgSend;
            limit = msg_u64(dev, sel_registerName("recommendedMaxWorkingSetSize"));
            used = msg_u64(dev, sel_registerName("currentAllocatedSize"));
            id ns = msg_id(dev, sel_registerName("name"));
            const char *s = ns ? msg_str(ns, sel_registerName("UTF8String")) : NULL;
            if (s)
                snprintf(name, sizeof name, "%s", s);
            msg_id(dev, sel_registerName("release"));
        }
    }
    if (!limit)
        return;
    ggfit_device *d = &out[(*n)++];
    memset(d, 0, sizeof *d);
    d->kind = GGFIT_BACKEND_METAL;
    snprintf(d->name, sizeof d->name, "Metal");
    snprintf(d->description, sizeof d->description, "%s", name);
    d->total = limit;
    d->free = used < limit ? limit - used : 0;
    d->unified = true;
}
#endif

/* ---- discovery ----------------------------------------------------------- */

ggfit_status ggfit_devices_discover(const ggfit_probe_options *o, ggfit_device *out, size_t max,
                                    size_t *n, char **err)
{
    if (!n || (max && !out))
        return ggfit__fail(err, GGFIT_EINVAL, "device discovery: no output given");
    *n = 0;
#ifdef __APPLE__
    discover_metal(out, max, n);
#endif
    if (ggfit__static_program() && nvml_may_load(o))
        return ggfit__fail(err, GGFIT_ESTATIC, "finding NVIDIA GPUs needs NVML (%s), which a "
                           "statically linked program cannot load", nvml_path(o));
    ggfit_host_info host;
    bool have_host = ggfit_host_probe(o, &host, NULL) == GGFIT_OK;
    discover_nvml(o, out, max, n);
    discover_drm(root_of(o), have_host ? &host : NULL, out, max, n);
    return GGFIT_OK;
}
