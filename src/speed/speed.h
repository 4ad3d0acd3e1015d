/*
 * speed.h - the speed model's constants (speed_constants.c), shared by the
 * model (speed.c) and its renderers (speed_render.c).
 */
#ifndef GGFIT_SPEED_H
#define GGFIT_SPEED_H

#include "ggfit_app.h"

typedef struct ggfit__speed_backend {
    double efficiency;        /* of peak bandwidth, generation: quantized weights */
    double efficiency_float;  /* the same for F32/F16/BF16 weights and the KV cache */
    double fixed_ms_layer;    /* per token per layer on the device */
    double pp_efficiency;     /* of dense FP16 TFLOPS, prompt: quantized weights */
    double pp_efficiency_float; /* float weights */
    double pp_efficiency_attn;  /* attention (KQ, softmax, KQV), flash attention */
    double pp_efficiency_attn_nofa; /* attention without it (-fa off): KQ
                                 written whole, soft_max, then KQV */
    double pp_efficiency_moe;   /* routed experts' FLOPs (mul_mat_id: each
                                 expert multiplies only the tokens routed
                                 to it) */
    /* The CPU only (its generation is compute-bound with few threads):
     * fractions of its multiply-add peak that a generated token's matrix
     * products reach, quantized and float weights; and attention at depth,
     * one query row against every cached row head by head, as FLOPs' worth
     * of the peak's time per head and cached row (its cost is the row's
     * online soft_max and conversions more than the head's width:
     * gpt-oss's 64-wide heads cost a row about what qwen3's 128-wide ones
     * do). */
    double tg_compute_eff;
    double tg_compute_eff_float;
    double tg_attn_row_flop;
} ggfit__speed_backend;

/* The constants of a device of this backend and description; *klass (may
 * be NULL) receives its class: "default", "hbm" or "host". */
const ggfit__speed_backend *ggfit__speed_backend_of(ggfit_backend kind, const char *description,
                                                    const char **klass);

/* A device's dense FP16 TFLOPS from the table (a description containing
 * "Laptop" matches only the laptop rows), else bandwidth x
 * GGFIT__SPEED_FLOP_PER_BYTE (*from_table false). */
double ggfit__speed_tflops(const char *description, double bandwidth_gbs, bool *from_table);

/* Defaults, stated assumptions (overridable):
 * - host memory: dual-channel DDR5-5600, 89.6 GB/s theoretical
 *   (2 channels x 8 bytes x 5600 MT/s; data/speed/devices.csv gives
 *   ~89 GB/s for it);
 * - host efficiency 65%: the worked example (shared/background/002) says
 *   real DRAM reads on gather-heavy expert matmuls land at 60-70% of the
 *   theoretical peak; its own figures use 100% (--host-efficiency 1);
 * - host compute, for another machine than this one (which measures its
 *   own, measure.c): 2.8 TFLOPS of single-precision multiply-adds, 16
 *   threads of 176 GFLOPS (this project's Xeon measures 176 a thread with
 *   AVX-512: two FMA units at about 2.75 GHz); a desktop with AVX2 has
 *   half of that a thread (--host-gflops, --host-tflops, -t);
 * - PCIe 4.0 x16: 25 GB/s measured (31.5 theoretical), as the worked
 *   example takes it; an rpc device: 1 Gbit/s Ethernet, 0.125 GB/s;
 * - a GPU missing from the TFLOPS table: 150 FLOP per byte of bandwidth
 *   (an RTX 3090's 142 TFLOPS / 936 GB/s). */
/* - a token crossing from one device to the next (a scheduler split: the
 *   copy of the activations and a synchronisation before the next backend
 *   runs): chosen on calibration.csv's RTX 4090 x1/x2/x4/x8 rows (tg falls
 *   0.1-0.35 ms per GPU added). Crossings to and from the host are splits
 *   too and cost the same (the CPU backend's threads wake for each): with
 *   -ncmoe every offloaded layer crosses twice, which is what brings the
 *   one clean row with experts in RAM (Qwen3-30B-A3B -ncmoe 36 on an RTX
 *   2080, 36.7 t/s measured) from 61 to 40 t/s predicted. The worked
 *   example counts crossings by bandwidth alone (--cross-ms 0);
 * - pipeline parallelism: with every layer on 2+ GPUs (layer split), the
 *   ubatches of one batch overlap across the GPUs as llama.cpp's scheduler
 *   runs them (GGML_SCHED_MAX_COPIES = 4 copies of the inputs). */
#define GGFIT__SPEED_CROSS_MS 0.12
#define GGFIT__SPEED_SCHED_COPIES 4
#define GGFIT__SPEED_HOST_BW 89.6
#define GGFIT__SPEED_HOST_EFF 0.65
#define GGFIT__SPEED_HOST_TFLOPS 2.8
#define GGFIT__SPEED_LINK_GBS 25.0
#define GGFIT__SPEED_RPC_GBS 0.125
#define GGFIT__SPEED_FLOP_PER_BYTE 150.0

/* The CPU's threads when -t is not given and nothing is measured (the
 * default's 16 threads: GGFIT__SPEED_HOST_TFLOPS in all). */
#define GGFIT__SPEED_HOST_THREADS 16

/* Expected distinct experts of n that tokens tokens each routed to k of
 * them touch: n (1 - (1 - k/n)^tokens), routing taken as uniform. */
double ggfit__experts_touched(uint32_t n, uint32_t k, uint32_t tokens);

/* Bytes of the K and V of cells cells in every layer (a sliding-window
 * layer's at most its window), at p's cache types: what a generated token
 * reads at that depth, and about what llama.cpp's state of that many tokens
 * holds. */
uint64_t ggfit__kv_bytes(const ggfit_model *m, const ggfit_params *p, uint32_t cells);

/* The flags a plan prints (its alternative's, the fit's, or with
 * print_memory the flags as given). */
const ggfit_params *ggfit__plan_chosen(const ggfit_plan *pl);

/* ggfit_speed_of on the plan's host: where host is this machine's own
 * memory (host->this_machine; NULL: another's), o gives no --host-bw and a
 * leg reads system memory, with this machine's measured bandwidth
 * (ggfit_host_bw_cached: kept in the cache folder, measured when missing). */
ggfit_status ggfit__speed_on_host(const ggfit_model *m, const ggfit_params *p,
                                  const ggfit_projection *pr, const int32_t *placement,
                                  const ggfit_device *devs, size_t n, const ggfit_host_mem *host,
                                  const ggfit_speed_options *o, ggfit_speed *out, char **err);

/* Projects p with its placement into *pr and gives its speed on host (as
 * ggfit__speed_on_host). */
ggfit_status ggfit__speed_of_params(const ggfit_model *m, const ggfit_params *p,
                                    const ggfit_device *devs, size_t n,
                                    const ggfit_host_mem *host, const ggfit_speed_options *o,
                                    ggfit_projection *pr, ggfit_speed *out, char **err);

/* ggfit_host_measure with a bound on its time (about 150 ms here): the
 * one-thread phase is left out where filling and reading the buffer took
 * long. */
ggfit_status ggfit__host_measure_bounded(ggfit_host_bw *out, char **err);

/* The figure a measurement gives the speed model: the larger of one
 * thread's read and all threads' (on a busy machine either can lose). */
double ggfit__host_bw_best(const ggfit_host_bw *b);

/* The figures of s a plan carries. */
void ggfit__plan_speed_brief(const ggfit_speed *s, ggfit_plan_speed *b);

/* Sets pl->speed for the plan's flags on model m (ggfit__plan_model's
 * last step); only running out of memory is an error. */
ggfit_status ggfit__plan_speed(const ggfit_model *m, ggfit_plan *pl, char **err);

#endif
