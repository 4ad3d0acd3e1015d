/*
 * fake_nvml.c - a stand-in for libnvidia-ml.so with NVML's real interface
 * (the entry points and structs of nvml.h that ggfit calls), so that the
 * device tests load it with dlopen exactly as they would load NVML.
 *
 * Two GPUs:
 *   0  "NVIDIA GeForce RTX 4090"  total 24564 MiB, used 1564 MiB; compute
 *      process 100 holds 1000 MiB and is also in the graphics list, graphics
 *      process 200 holds 300 MiB; memory clock 10501 MHz, 384-bit bus
 *   1  "NVIDIA GeForce RTX 3090"  total 24576 MiB, used 2048 MiB; process
 *      lists refused (NVML_ERROR_NO_PERMISSION); no clock or bus width
 * FAKE_NVML_FAIL_INIT=1 makes nvmlInit_v2 fail as with no driver loaded.
 */
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlMemory_st {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct nvmlProcessInfo_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

enum {
    NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_DRIVER_NOT_LOADED = 9,
};

#define MiB (1024ull * 1024ull)

struct nvmlDevice_st {
    const char *name;
    unsigned long long total, used;
    int n_compute, n_graphics;     /* -1: the list is refused */
    nvmlProcessInfo_t compute[2], graphics[2];
    unsigned int mem_mhz, bus_bits;
};

static struct nvmlDevice_st gpus[2] = {
    {"NVIDIA GeForce RTX 4090", 24564 * MiB, 1564 * MiB, 1, 2,
     {{100, 1000 * MiB, 0, 0}}, {{100, 1000 * MiB, 0, 0}, {200, 300 * MiB, 0, 0}}, 10501, 384},
    {"NVIDIA GeForce RTX 3090", 24576 * MiB, 2048 * MiB, -1, -1, {{0}}, {{0}}, 0, 0},
};

static int n_init;

/* Not part of NVML: how many nvmlInit_v2 calls are not shut down yet. */
int fake_nvml_open_count(void);
int fake_nvml_open_count(void)
{
    return n_init;
}

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit_v2(void)
{
    const char *f = getenv("FAKE_NVML_FAIL_INIT");
    if (f && *f == '1')
        return NVML_ERROR_DRIVER_NOT_LOADED;
    n_init++;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlShutdown(void)
{
    if (n_init == 0)
        return NVML_ERROR_UNINITIALIZED;
    n_init--;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!n_init)
        return NVML_ERROR_UNINITIALIZED;
    *count = 2;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *dev);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *dev)
{
    if (!n_init)
        return NVML_ERROR_UNINITIALIZED;
    if (i >= 2 || !dev)
        return NVML_ERROR_INVALID_ARGUMENT;
    *dev = &gpus[i];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int length)
{
    if (!dev || !name)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(dev->name) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(name, dev->name);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem)
{
    if (!dev || !mem)
        return NVML_ERROR_INVALID_ARGUMENT;
    mem->total = dev->total;
    mem->used = dev->used;
    mem->free = dev->total - dev->used;
    return NVML_SUCCESS;
}

/* As NVML: with too small a buffer, the count needed and INSUFFICIENT_SIZE. */
static nvmlReturn_t procs(int n, const nvmlProcessInfo_t *src, unsigned int *count,
                          nvmlProcessInfo_t *infos)
{
    if (n < 0)
        return NVML_ERROR_NO_PERMISSION;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (*count < (unsigned)n) {
        *count = (unsigned)n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = (unsigned)n;
    if (n)
        memcpy(infos, src, (size_t)n * sizeof *src);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count,
                                                     nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count,
                                                     nvmlProcessInfo_t *infos)
{
    return procs(dev->n_compute, dev->compute, count, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count,
                                                      nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count,
                                                      nvmlProcessInfo_t *infos)
{
    return procs(dev->n_graphics, dev->graphics, count, infos);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type, unsigned int *clock);
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type, unsigned int *clock)
{
    if (type != 2 /* NVML_CLOCK_MEM */ || !dev->mem_mhz)
        return NVML_ERROR_NOT_SUPPORTED;
    *clock = dev->mem_mhz;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t dev, unsigned int *bits);
nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t dev, unsigned int *bits)
{
    if (!dev->bus_bits)
        return NVML_ERROR_NOT_SUPPORTED;
    *bits = dev->bus_bits;
    return NVML_SUCCESS;
}
