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

/* The CPU (llama.cpp's CPU backend, built for the machine): fractions of
 * its measured multiply-add peak (measure.c: single-precision FMAs at the
 * widest vectors, GFLOPS x the threads) that llama.cpp's kernels reach,
 * chosen on llama-bench b10587 run on this project's machine
 * (data/speed/local.csv: an Intel Xeon with AVX-512, 2 threads; random
 * weights, qwen3 0.6B F16 and Q4_K_M, gpt-oss-20b MXFP4).
 * Prompt: matrix products of quantized weights (activations quantized to
 * Q8_K or Q8_0 and integer dot products) and float ones (llamafile's
 * sgemm), the routed experts (mul_mat_id, each expert a small batch), and
 * attention with flash attention (the tiled kernel of a batch). Generation:
 * one row of activations against every weight; a quantized row costs its
 * unpacking, so with few threads it is compute-bound, not bound by the
 * memory's bandwidth; attention walks every cached row head by head,
 * converting F16 to F32. Without flash attention (-fa off) nothing was
 * measured: flash attention's figure, an assumption. Fitted with the
 * largest error over the rows (13% on generation, 15% on the prompt),
 * not row by row. */
#define HOST_ROW { 1.00, 1.00, 0.00, 0.62, 0.46, 0.26, 0.26, 0.22, 0.10, 0.07, 16100 }

/* Per backend: fraction of peak bandwidth reached in generation, fixed ms
 * per token per layer on the device (kernel launches; the worked example's
 * 0.74 ms per token is 0.021 ms per layer of gpt-oss-120b's 36), and
 * fraction of the dense FP16 TFLOPS reached in prompt processing.
 * CUDA/ROCm/Vulkan and Metal: chosen on data/speed/calibration.csv by
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
#define CUDA_ROW { 0.78, 0.80, 0.020, 0.375, 0.44, 0.345, 0.09, 0.21, 0, 0, 0 }
static const ggfit__speed_backend backends[GGFIT_BACKEND_COUNT] = {
    /* eff, eff float, ms/layer, pp eff, pp eff float, pp eff attention
     * (flash attention; without), pp eff experts; the CPU's generation:
     * compute eff quantized, float, attention */
    [GGFIT_BACKEND_CPU] = HOST_ROW,
    [GGFIT_BACKEND_CUDA] = CUDA_ROW,   /* 255 rows */
    [GGFIT_BACKEND_ROCM] = CUDA_ROW,   /* CUDA's */
    [GGFIT_BACKEND_VULKAN] = CUDA_ROW, /* CUDA's */
    [GGFIT_BACKEND_METAL] = { 0.70, 0.82, 0.144, 0.625, 0.74, 0.295, 0.295, 0.35, 0, 0, 0 },
    [GGFIT_BACKEND_RPC] = CUDA_ROW,    /* CUDA's */
};

/* Datacenter GPUs with HBM (A100, H100, H200, B200, Instinct): llama.cpp's
 * generation kernels reach a smaller share of their much larger bandwidth
 * (an A100 SXM's 2039 GB/s gives Llama-3 8B Q4_K_M about the tg of an RTX
 * 4090's 1008 in calibration.csv). Chosen on the A100 and H100 rows of
 * calibration.csv the same way as the backends' values. */
static const ggfit__speed_backend hbm = { 0.68, 0.52, 0.140, 0.29, 0.43, 0.345, 0.115, 0.16,
                                          0, 0, 0 }; /* 84 rows */
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
 * Laptop GPUs ("... Laptop GPU" in NVIDIA's and the catalog's names): a
 * laptop part is a smaller chip at lower clocks than the desktop card of
 * its number (the RTX 4090 Laptop GPU is an AD103 with 76 SMs at up to
 * 2040 MHz against the desktop's 128 at 2520: under half its TFLOPS), so
 * a description that contains "Laptop" matches only rows that contain
 * "Laptop", and a laptop without a row gets the default below, never the
 * desktop figure. Not always smaller: the RTX 3060 Laptop has 30 SMs to
 * the desktop RTX 3060's 28, so its figure is above the desktop's.
 * The rows take the same convention, SMs (CUDA cores / 128) x 1024 x boost
 * clock, with the top of the boost range NVIDIA gives by TGP: the figure
 * of a laptop at its maximum power, as the desktop rows take the reference
 * boost; a laptop built for a lower TGP runs slower (the RTX 4080 Laptop
 * at 60 W boosts to 1350 MHz, 80.2 TFLOPS by the same rule against 135.4
 * at 150 W; --tflops overrides the figure). Sources, per family:
 * RTX 3060/3070/3080 Laptop, NVIDIA's figures as tabulated by
 * hardwareluxx.de (news 55233: 3840/5120/6144 cores, boost 1283-1703,
 * 1290-1620, 1245-1710 MHz; the RTX 3080 Laptop's one row serves its 8
 * and 16 GB catalog rows); RTX 3070 Ti/3080 Ti Laptop, heise.de (CES 2022
 * news 6318077: maximum boost 1485 and 1590 MHz) with purepc.pl (5888 and
 * 7424 CUDA cores; 1125-1590 MHz on hardwareluxx.de news 57843); RTX 40
 * Laptop, NVIDIA's CES 2023 figures via hardwarenexus.com (9728/7424/
 * 4608/3072/2560 cores, max boost 2040/2280/2175/2370/2370 MHz; the 4080's
 * and 4070's ranges 1350-2280 and 1230-2175 on notebookcheck.com and
 * data-check.eu); RTX 50 Laptop, cores from NVIDIA's CES 2025 table via
 * neowin.net (10496/7680/4608, TGP 95-150, 80-150, 50-100 W), the top
 * boost from hmc-tech.com's per-TGP entries (RTX 5090 Laptop 150 W:
 * 2160 MHz; RTX 5080 Laptop 150 W: 2287 MHz, each at its top TGP) and,
 * for the RTX 5070 Laptop, the 1425-2347 MHz range summarised on
 * tinhte.mywebsite.vn (its bottom matches hmc-tech's 50 W entry; no NVIDIA
 * page read). Cross-check: hmc-tech.com gives the RTX 3060 Laptop at 110 W
 * (1680 MHz) 51.61 TFLOPS FP16 tensor with FP16 accumulate, the rule's
 * 30 x 1024 x 1.680. Left out, no top boost clock found: the RTX 5060
 * Laptop (3328 cores, 26 SMs, purepc.pl; only its 50-60 W entries and the
 * range's bottom, 1455 MHz, were found), which takes the default.
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
    { "RTX 3060 Laptop", 52.3 },    /* 30 SMs x 1024 x 1.703 GHz */
    { "RTX 3070 Laptop", 66.4 },    /* 40 SMs x 1.620 GHz */
    { "RTX 3070 Ti Laptop", 69.9 }, /* 46 SMs x 1.485 GHz */
    { "RTX 3080 Laptop", 84.0 },    /* 48 SMs x 1.710 GHz, 8 and 16 GB */
    { "RTX 3080 Ti Laptop", 94.4 }, /* 58 SMs x 1.590 GHz */
    { "RTX 4050 Laptop", 48.5 },    /* 20 SMs x 2.370 GHz */
    { "RTX 4060 Laptop", 58.2 },    /* 24 SMs x 2.370 GHz */
    { "RTX 4070 Laptop", 80.2 },    /* 36 SMs x 2.175 GHz */
    { "RTX 4080 Laptop", 135.4 },   /* 58 SMs x 2.280 GHz */
    { "RTX 4090 Laptop", 158.8 },   /* 76 SMs x 2.040 GHz */
    { "RTX 5070 Laptop", 86.5 },    /* 36 SMs x 2.347 GHz */
    { "RTX 5080 Laptop", 140.5 },   /* 60 SMs x 2.287 GHz */
    { "RTX 5090 Laptop", 181.4 },   /* 82 SMs x 2.160 GHz */
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
    /* a laptop part matches only a laptop row (see the table's comment) */
    bool laptop = description && strstr(description, "Laptop");
    for (size_t i = 0; i < sizeof tflops_table / sizeof tflops_table[0]; i++) {
        size_t len = strlen(tflops_table[i].name);
        if (laptop != (strstr(tflops_table[i].name, "Laptop") != NULL))
            continue;
        if (len > best && description && strstr(description, tflops_table[i].name)) {
            best = len;
            t = tflops_table[i].tflops;
        }
    }
    *from_table = best > 0;
    return best ? t : bandwidth_gbs * GGFIT__SPEED_FLOP_PER_BYTE / 1000.0;
}
