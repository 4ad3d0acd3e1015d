/*
 * speed_constants.c - the constants of the speed model, each with its
 * source. Bandwidth comes with the device (data/gpus.tsv, --gpu, NVML);
 * what is here is how much of it llama.cpp reaches, the fixed cost of a
 * token, compute throughput for prompt processing, and the host's and
 * links' defaults. Every value can be overridden from the command line
 * (ggfit_speed_options: --efficiency, --fixed-ms, --host-bw, --link-bw,
 * --tflops, --host-tflops, --pp-efficiency).
 */
#include <string.h>

#include "speed/speed.h"

/* Per backend: fraction of peak bandwidth reached in generation, fixed ms
 * per token per layer on the device (kernel launches; the worked example's
 * 0.74 ms per token is 0.021 ms per layer of gpt-oss-120b's 36), and
 * fraction of the dense FP16 TFLOPS reached in prompt processing.
 * CUDA/ROCm/Vulkan and Metal: chosen on ../shared/speed/calibration.csv by
 * tools/speedcheck.py --fit (one value per backend over all its rows: the
 * median absolute error is minimised, not each row; see README "How
 * fast?"). Metal's and the HBM cards' generation constants come from a
 * full grid over the three (the coordinate descent had stopped at a
 * corner): big matrices reach about 70% of the peak there, and each layer
 * costs a fixed 0.14 ms (Metal's command encoding, the datacenter cards'
 * launches), which is why a 70B model ran 25-40% faster than the old
 * constants said while an 8B one was right. Metal's fit trades the M1 Max
 * rows (now over-predicted: its GPU reaches less of its 400 GB/s) for the
 * M1, M2 Ultra and M3 Max ones. The starting point was the worked example's "fitted consumer
 * CUDA" 79% + 0.74 ms (shared/background/002: gpt-oss-120b on an RTX
 * 3090); the fit's CUDA values, 78% + 0.020 ms x 36 layers = 0.72 ms, land
 * beside it. Median absolute errors on the rows (tools/speedcheck.py):
 * CUDA tg 5.8% pp 16.2% (255 rows), CUDA HBM tg 5.6% pp 19.2% (84), Metal
 * tg 7.5% pp 5.0% (43). ROCm and Vulkan have no rows: CUDA's values, an assumption. RPC:
 * the remote device's own backend is unknown, CUDA's values assumed. */
static const ggfit__speed_backend backends[GGFIT_BACKEND_COUNT] = {
    [GGFIT_BACKEND_CPU] = { 1.00, 1.00, 0.00, 1.00, 1.00, 1.00 },  /* host leg: see HOST_* below */
    /* eff, eff float, ms/layer, pp eff, pp eff float, pp eff attention */
    [GGFIT_BACKEND_CUDA] = { 0.78, 0.80, 0.020, 0.385, 0.415, 0.105 },   /* 255 rows */
    [GGFIT_BACKEND_ROCM] = { 0.78, 0.80, 0.020, 0.385, 0.415, 0.105 },   /* CUDA's */
    [GGFIT_BACKEND_VULKAN] = { 0.78, 0.80, 0.020, 0.385, 0.415, 0.105 }, /* CUDA's */
    [GGFIT_BACKEND_METAL] = { 0.70, 0.82, 0.144, 0.625, 0.74, 0.295 }, /* 43 rows */
    [GGFIT_BACKEND_RPC] = { 0.78, 0.80, 0.020, 0.385, 0.415, 0.105 },    /* CUDA's */
};

/* Datacenter GPUs with HBM (A100, H100, H200, B200, Instinct): llama.cpp's
 * generation kernels reach a smaller share of their much larger bandwidth
 * (an A100 SXM's 2039 GB/s gives Llama-3 8B Q4_K_M about the tg of an RTX
 * 4090's 1008 in calibration.csv). Chosen on the A100 and H100 rows of
 * calibration.csv the same way as the backends' values. */
static const ggfit__speed_backend hbm = { 0.68, 0.52, 0.140, 0.30, 0.46, 0.10 }; /* 84 rows */
static const char *const hbm_names[] = { "A100", "H100", "H200", "B200", "Instinct" };

const ggfit__speed_backend *ggfit__speed_backend_of(ggfit_backend kind, const char *description,
                                                    const char **klass)
{
    if (kind == GGFIT_BACKEND_CUDA || kind == GGFIT_BACKEND_ROCM)
        for (size_t i = 0; description && i < sizeof hbm_names / sizeof hbm_names[0]; i++)
            if (strstr(description, hbm_names[i])) {
                if (klass)
                    *klass = "hbm";
                return &hbm;
            }
    if (klass)
        *klass = kind == GGFIT_BACKEND_CPU ? "host" : "default";
    return &backends[(unsigned)kind < GGFIT_BACKEND_COUNT ? kind : GGFIT_BACKEND_CUDA];
}

/* Dense FP16 tensor (matrix) throughput in TFLOPS, matched on the device's
 * description (the longest name contained in it wins). Sources: the
 * vendors' whitepapers and datasheets (NVIDIA Turing, Ampere GA102, Ada
 * AD102 and Blackwell GB20x whitepapers: GeForce FP16 tensor with FP16
 * accumulate, dense, which is SMs x 1024 FLOP per clock x boost clock;
 * A100/H100/H200/L40S/L40/A40/RTX A6000/RTX 6000 Ada datasheets: dense FP16
 * tensor, half the "with sparsity" figure; Apple: GPU FP32 TFLOPS, FP16
 * runs at the same rate). Checked against published tables (issue 15):
 * H100 SXM and H200 989.4 dense (glennklockwood.com/garden/processors/h100;
 * itkb.uw.cz "NVIDIA H200 vs B300"), RTX PRO 6000 Blackwell 503.8
 * (hmc-tech.com), and two corrected: RTX 3060 12GB 50.9 (28 SMs at a
 * 1777 MHz boost, sysrqmts.com; 51.2 before) and DGX Spark (GB10) 124.1 FP16
 * with FP16 accumulate (hmc-tech.com's GB10 table; with FP32 accumulate and
 * BF16 it is half, 62.1; 125.0 before, derived from 1 PFLOPS FP4 sparse).
 * Apple publishes no TFLOPS for the M3 and M4 GPUs: those rows take 128 FP32
 * lanes per core at an assumed clock, and third-party tables disagree by
 * about 15% (M3 Max 40-core: 16.4 at 1600 MHz on radargit.com, 14.3 at
 * 1398 MHz on hmc-tech.com); kept as they were, an assumption.
 * A device not listed gets bandwidth x DEFAULT_FLOP_PER_BYTE. */
static const struct { const char *name; double tflops; } tflops_table[] = {
    { "RTX 2080 Ti", 107.6 },   /* Turing whitepaper, FP16 acc */
    { "RTX 3060 12GB", 50.9 },  /* GA106: 28 SMs x 1024 x 1.777 GHz */
    { "RTX 3060 Ti", 64.8 },    /* GA104 */
    { "RTX 3070", 81.3 },       /* GA102/GA104 whitepaper */
    { "RTX 3080 10GB", 119.0 },
    { "RTX 3080 12GB", 122.0 },
    { "RTX 3080 Ti", 136.0 },
    { "RTX 3090", 142.0 },
    { "RTX 3090 Ti", 160.0 },
    { "RTX 4060", 60.6 },       /* Ada whitepaper family figures */
    { "RTX 4060 Ti", 88.4 },
    { "RTX 4070", 116.8 },
    { "RTX 4070 SUPER", 141.9 },
    { "RTX 4070 Ti", 160.4 },
    { "RTX 4070 Ti SUPER", 176.4 },
    { "RTX 4080", 194.9 },
    { "RTX 4080 SUPER", 208.9 },
    { "RTX 4090", 330.3 },
    { "RTX 5060 Ti", 94.9 },    /* Blackwell GB20x whitepaper, FP16 acc dense */
    { "RTX 5070", 123.5 },
    { "RTX 5070 Ti", 175.8 },
    { "RTX 5080", 225.1 },
    { "RTX 5090", 419.0 },
    { "RTX A6000", 154.8 },     /* datasheet, FP16 tensor dense */
    { "RTX 6000 Ada", 364.2 },
    { "RTX PRO 6000", 503.8 },
    { "A40", 149.7 },
    { "L40S", 362.1 },
    { "L40", 181.0 },
    { "A100", 312.0 },
    { "H100 PCIe", 756.0 },
    { "H100 SXM", 989.0 },
    { "H200", 989.0 },
    { "DGX Spark", 124.1 },     /* GB10: FP16 acc dense; 1 PFLOPS is FP4 sparse */
    { "Apple M1 (", 2.6 },      /* Apple: GPU FP32 TFLOPS */
    { "Apple M1 Pro", 5.2 },
    { "Apple M1 Max", 10.4 },
    { "Apple M1 Ultra", 20.8 },
    { "Apple M2 (", 3.6 },
    { "Apple M2 Pro", 6.8 },
    { "Apple M2 Max", 13.6 },
    { "Apple M2 Ultra", 27.2 },
    { "Apple M3 (", 4.1 },
    { "Apple M3 Pro", 7.4 },
    { "Apple M3 Max 30-core", 12.3 },
    { "Apple M3 Max 40-core", 16.4 },
    { "Apple M3 Ultra", 32.8 },
    { "Apple M4 (", 4.3 },
    { "Apple M4 Pro", 9.2 },
    { "Apple M4 Max 32-core", 14.7 },
    { "Apple M4 Max 40-core", 18.4 },
};

double ggfit__speed_tflops(const char *description, double bandwidth_gbs, bool *from_table)
{
    size_t best = 0;
    double t = 0;
    for (size_t i = 0; i < sizeof tflops_table / sizeof tflops_table[0]; i++) {
        size_t len = strlen(tflops_table[i].name);
        if (len > best && description && strstr(description, tflops_table[i].name)) {
            best = len;
            t = tflops_table[i].tflops;
        }
    }
    *from_table = best > 0;
    return best ? t : bandwidth_gbs * GGFIT__SPEED_FLOP_PER_BYTE / 1000.0;
}
