/*
 * speed.c - tokens per second of a plan: generation from the bytes each
 * device reads per token, prompt processing from the FLOPs it does, the
 * devices in series along the layers (llama.cpp's layer split). The
 * placement is ggfit_project's; the constants are speed_constants.c's.
 *
 * What a ubatch costs, as llama.cpp runs it:
 * - dense weights: read once per step (a generated token, or a ubatch of
 *   the prompt), 2 FLOPs per weight per token;
 * - routed experts: a step of t tokens, each routed to k of n experts,
 *   reads the experts it touches, n (1 - (1 - k/n)^t) of them (a ubatch of
 *   512 tokens touches nearly all), and multiplies each token by its k
 *   (mul_mat_id, at the backend's MoE efficiency);
 * - attention: grows with the depth (the cells before the token); with
 *   flash attention one fused kernel, without it KQ written whole, then
 *   soft_max and KQV (another efficiency);
 * - weights in system RAM: copied to the GPU once per ubatch (op offload,
 *   ubatch >= 32) or multiplied by the CPU's threads, whose compute
 *   (measured: measure.c) bounds prompt processing, and with few threads
 *   the generation of quantized weights too;
 * - n_parallel sequences decoding at once: one step reads the weights once
 *   for all of them, the KV cache of each, and computes each one's token.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "speed/speed.h"

void ggfit_speed_options_init(ggfit_speed_options *o)
{
    memset(o, 0, sizeof *o);
    o->n_prompt = 512;
    o->n_gen = 128;
    o->fixed_ms = -1;
    o->cross_ms = -1;
    o->as_type = -1;
}

static double dmin(double a, double b)
{
    return a < b ? a : b;
}

static uint64_t round_u64(double x)
{
    return x > 0 ? (uint64_t)(x + 0.5) : 0;
}

static double elems(const ggfit_tensor_info *t)
{
    double e = 1;
    for (uint32_t d = 0; d < 4; d++)
        e *= (double)t->ne[d];
    return e;
}

/* The tensor's bytes, or those it would have as type as_type (2-D and
 * larger weights that are not F32: the other quants of the same model). */
static double tensor_bytes(const ggfit_tensor_info *t, int32_t as_type)
{
    if (as_type < 0 || t->n_dims < 2 || t->type == GGFIT_TYPE_F32)
        return (double)t->n_bytes;
    uint32_t bs = ggfit_type_block_size((uint32_t)as_type);
    return bs ? elems(t) / bs * ggfit_type_block_bytes((uint32_t)as_type) : (double)t->n_bytes;
}

static double type_elem_bytes(uint32_t type)
{
    uint32_t bs = ggfit_type_block_size(type);
    return bs ? (double)ggfit_type_block_bytes(type) / bs : 2.0;
}

static bool offloads_ops(ggfit_backend k)
{
    /* ggml-cuda's offload_op (batch >= 32), also ROCm's (the same code)
     * and Vulkan's; Metal shares memory with the host; rpc has none. */
    return k == GGFIT_BACKEND_CUDA || k == GGFIT_BACKEND_ROCM || k == GGFIT_BACKEND_VULKAN;
}

static bool layer_swa(const ggfit_hparams *hp, const ggfit_layer_info *li, uint32_t il)
{
    if (!hp->n_swa)
        return false;
    if (hp->has_swa_layers)
        return li->swa;
    if (hp->swa_pattern > 1)
        return il % hp->swa_pattern < hp->swa_pattern - 1;
    return false;
}

/* Bytes of layer il's K and V for cells cells (a sliding-window layer
 * holds its window at most), cache types of ek and ev bytes an element. */
static double layer_kv_bytes(const ggfit_hparams *hp, const ggfit_layer_info *li, uint32_t il,
                             double ek, double ev, double cells)
{
    bool swa = layer_swa(hp, li, il);
    double hk = swa && hp->n_embd_head_k_swa ? hp->n_embd_head_k_swa : hp->n_embd_head_k;
    double hv = swa && hp->n_embd_head_v_swa ? hp->n_embd_head_v_swa : hp->n_embd_head_v;
    return li->n_head_kv * (hk * ek + hv * ev) * (swa ? dmin(cells, hp->n_swa) : cells);
}

uint64_t ggfit__kv_bytes(const ggfit_model *m, const ggfit_params *p, uint32_t cells)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    double ek = type_elem_bytes(p->type_k), ev = type_elem_bytes(p->type_v), b = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(m, il);
        if (li->n_head_kv && !li->nextn)
            b += layer_kv_bytes(hp, li, il, ek, ev, cells);
    }
    return round_u64(b);
}

double ggfit__experts_touched(uint32_t n, uint32_t k, uint32_t tokens)
{
    if (!n || !k)
        return 0;
    if (k >= n)
        return n;
    return n * (1.0 - pow(1.0 - (double)k / n, tokens ? tokens : 1));
}

/* The host's compute for n_threads threads, GFLOPS, from a measurement (one
 * thread's and all threads' together: threads sharing a core do not add
 * up) or a figure per thread. */
static double host_gflops(const ggfit_speed_options *o, uint32_t threads)
{
    if (o->host_gflops <= 0)
        return 0;
    double g = o->host_gflops * threads;
    if (o->host_gflops_all > 0 && g > o->host_gflops_all)
        g = o->host_gflops_all;
    return g;
}

/* Per leg (devices 0..n-1, the host at n): what it holds and does. */
typedef struct leg_acc {
    double wbytes;     /* dense weights read per step (embedding: a row a token) */
    double wfloat;     /* of which float (F32, F16, BF16) */
    double xbytes;     /* routed experts: all of them */
    double xfloat;     /* of which float */
    double kvbytes;    /* KV cache read per generated token */
    double flops;      /* per token: everything */
    double ffloat;     /* of which float weights' */
    double fexp;       /* of which routed experts' (the k used) */
    double fattn;      /* of which attention's, at the prompt's depth */
    double fattn_tg;   /* attention's at the generation's depth */
    double rows_tg;    /* cached rows each query head reads there, summed */
    double held;       /* weights op offload copies to the GPU */
    uint32_t layers;
} leg_acc;

ggfit_status ggfit_speed_of(const ggfit_model *m, const ggfit_params *p,
                            const ggfit_projection *pr, const int32_t *placement,
                            const ggfit_device *devs, size_t n, const ggfit_speed_options *o,
                            ggfit_speed *out, char **err)
{
    if (!m || !p || !pr || !placement || !o || !out || (n && !devs))
        return ggfit__fail(err, GGFIT_EINVAL, "speed: missing argument");
    if (n > GGFIT_MAX_DEVICES)
        return ggfit__fail(err, GGFIT_EINVAL, "speed: more than %d devices", GGFIT_MAX_DEVICES);
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    uint32_t nl = hp->n_layer;
    memset(out, 0, sizeof *out);
    out->n_prompt = o->n_prompt;
    out->n_gen = o->n_gen;
    out->depth = o->depth;
    uint32_t ub = p->n_ubatch < p->n_batch ? p->n_ubatch : p->n_batch;
    if (!ub)
        ub = 512;
    out->n_ubatch = ub;
    uint32_t np = o->n_parallel ? o->n_parallel : 1;
    out->n_parallel = np;
    bool fa = ggfit_projection_flash_attn(pr);
    out->flash_attn = fa;

    leg_acc acc[GGFIT_MAX_LEGS];
    memset(acc, 0, sizeof acc);
    /* where each block's stages run: attention, dense/shared FFN, experts
     * (-2 none yet) */
    enum { ST_ATTN, ST_FFN, ST_EXP, ST_N };
    int32_t stage_buf[64 * ST_N];
    int32_t *stage = nl * ST_N <= 64 * ST_N ? stage_buf : ggfit__malloc(sizeof(int32_t) * nl * ST_N);
    if (!stage)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < nl * ST_N; i++)
        stage[i] = -2;
    bool *has = ggfit__calloc(nl ? nl : 1, sizeof(bool) * GGFIT_MAX_LEGS);
    if (!has) {
        if (stage != stage_buf)
            ggfit_free(stage);
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    }
    double frac = hp->n_expert ? (double)hp->n_expert_used / hp->n_expert : 1.0;

    /* the output layer's matrix, where the file ties it to token_embd: the
     * copy llama.cpp makes of it, on the output layer's device (that of
     * output_norm) */
    const ggfit_tensor *embd = NULL;
    bool has_output = false;
    int32_t out_leg = -1;
    uint64_t nt = ggfit_model_n_tensors(m);
    for (uint64_t i = 0; i < nt; i++) {
        const ggfit_tensor *t = ggfit_model_tensor(m, i);
        int32_t b = placement[i];
        if (b < 0 || (uint32_t)b >= pr->n_bufts || t->role == GGFIT_ROLE_NEXTN)
            continue;
        int32_t dev = pr->bufts[b].device;
        size_t leg = dev >= 0 && (size_t)dev < n ? (size_t)dev : n;
        leg_acc *a = &acc[leg];
        double bytes = tensor_bytes(t->info, o->as_type);
        double e = elems(t->info);
        if (t->role == GGFIT_ROLE_TOKEN_EMBD) {
            /* a lookup: one row per token */
            double rows = t->info->n_dims >= 2 ? (double)t->info->ne[1] : 1;
            a->wbytes += bytes / (rows > 0 ? rows : 1);
            if (!embd)
                embd = t;
            continue;
        }
        has_output |= t->role == GGFIT_ROLE_OUTPUT;
        if (t->role == GGFIT_ROLE_OUTPUT_NORM)
            out_leg = (int32_t)leg;
        /* what op offload copies: not the embedding (GET_ROWS stays) */
        a->held += bytes;
        uint32_t ty = o->as_type >= 0 && t->info->n_dims >= 2 && t->info->type != GGFIT_TYPE_F32
                          ? (uint32_t)o->as_type
                          : t->info->type;
        bool flt = ty == GGFIT_TYPE_F32 || ty == GGFIT_TYPE_F16 || ty == GGFIT_TYPE_BF16;
        if (t->role == GGFIT_ROLE_EXPERTS) {
            a->xbytes += bytes;
            if (flt)
                a->xfloat += bytes;
            if (t->info->n_dims >= 2) {
                a->flops += 2.0 * e * frac;
                a->fexp += 2.0 * e * frac;
            }
        } else {
            a->wbytes += bytes;
            if (flt)
                a->wfloat += bytes;
            if (t->info->n_dims >= 2) {
                a->flops += 2.0 * e;
                if (flt)
                    a->ffloat += 2.0 * e;
            }
        }
        if (t->layer >= 0 && (uint32_t)t->layer < nl) {
            uint32_t il = (uint32_t)t->layer;
            has[il * GGFIT_MAX_LEGS + leg] = true;
            int st = t->role == GGFIT_ROLE_EXPERTS ? ST_EXP
                     : (t->role == GGFIT_ROLE_FFN || t->role == GGFIT_ROLE_SHARED_EXPERTS) ? ST_FFN
                     : (t->role == GGFIT_ROLE_ATTENTION || t->role == GGFIT_ROLE_RECURRENT) ? ST_ATTN
                     : -1;
            if (st >= 0 && stage[il * ST_N + st] == -2)
                stage[il * ST_N + st] = (int32_t)leg;
        }
    }
    if (embd && !has_output && out_leg >= 0) {
        leg_acc *a = &acc[out_leg];
        double bytes = tensor_bytes(embd->info, o->as_type);
        uint32_t ty = o->as_type >= 0 && embd->info->type != GGFIT_TYPE_F32 ? (uint32_t)o->as_type
                                                                           : embd->info->type;
        bool flt = ty == GGFIT_TYPE_F32 || ty == GGFIT_TYPE_F16 || ty == GGFIT_TYPE_BF16;
        a->held += bytes;
        a->wbytes += bytes;
        a->flops += 2.0 * elems(embd->info);
        if (flt) {
            a->wfloat += bytes;
            a->ffloat += 2.0 * elems(embd->info);
        }
    }

    /* KV cache read per generated token (at the middle of the generated
     * tokens) and attention FLOPs per token (at the middle of the prompt,
     * and of the generation). */
    double tg_cells = (double)o->depth + o->n_gen / 2.0;
    double pp_cells = (double)o->depth + o->n_prompt / 2.0;
    double ek = type_elem_bytes(p->type_k), ev = type_elem_bytes(p->type_v);
    for (uint32_t il = 0; il < nl; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(m, il);
        for (size_t l = 0; l <= n; l++)
            acc[l].layers += has[il * GGFIT_MAX_LEGS + l];
        if (!li->n_head_kv || li->nextn)
            continue;
        int32_t at = stage[il * ST_N + ST_ATTN];
        size_t leg = at >= 0 ? (size_t)at : n;
        bool swa = layer_swa(hp, li, il);
        double hk = swa && hp->n_embd_head_k_swa ? hp->n_embd_head_k_swa : hp->n_embd_head_k;
        double hv = swa && hp->n_embd_head_v_swa ? hp->n_embd_head_v_swa : hp->n_embd_head_v;
        double pc = swa ? dmin(pp_cells, hp->n_swa) : pp_cells;
        double tc = swa ? dmin(tg_cells, hp->n_swa) : tg_cells;
        size_t kv_leg = p->no_kv_offload ? n : leg;
        acc[kv_leg].kvbytes += layer_kv_bytes(hp, li, il, ek, ev, tg_cells);
        acc[leg].flops += 2.0 * li->n_head * (hk + hv) * pc;
        acc[leg].fattn += 2.0 * li->n_head * (hk + hv) * pc;
        acc[kv_leg].fattn_tg += 2.0 * li->n_head * (hk + hv) * tc;
        acc[kv_leg].rows_tg += (double)li->n_head * tc;
    }

    /* experts one step touches: a ubatch of the prompt, and np tokens of
     * generation */
    uint32_t pp_tokens = o->n_prompt < ub ? o->n_prompt : ub;
    double x_pp = hp->n_expert ? ggfit__experts_touched(hp->n_expert, hp->n_expert_used,
                                                        pp_tokens) / hp->n_expert : 1.0;
    double x_tg = hp->n_expert ? ggfit__experts_touched(hp->n_expert, hp->n_expert_used, np) /
                                     hp->n_expert : 1.0;
    out->n_experts_pp = hp->n_expert ? (uint32_t)round_u64(x_pp * hp->n_expert) : 0;
    out->n_experts_tg = hp->n_expert ? (uint32_t)round_u64(x_tg * hp->n_expert) : 0;

    /* activations crossing devices along the layers */
    int32_t prev = -2;
    uint32_t cross = 0;
    double link_ms_step = 0, link_s_pp = 0;
    double link_gbs = o->link_gbs > 0 ? o->link_gbs : GGFIT__SPEED_LINK_GBS;
    double act = 4.0 * hp->n_embd;
    out->cross_ms = o->cross_ms >= 0 ? o->cross_ms : GGFIT__SPEED_CROSS_MS;
    for (uint32_t il = 0; il < nl; il++)
        for (int st = 0; st < ST_N; st++) {
            int32_t d = stage[il * ST_N + st];
            if (d == -2)
                continue;
            if (prev != -2 && d != prev) {
                bool rpc = ((size_t)d < n && devs[d].kind == GGFIT_BACKEND_RPC) ||
                           ((size_t)prev < n && devs[prev].kind == GGFIT_BACKEND_RPC);
                double g = rpc ? GGFIT__SPEED_RPC_GBS : link_gbs;
                cross++;
                link_ms_step += act * np / (g * 1e9) * 1e3 + out->cross_ms;
                if ((size_t)d < n && (size_t)prev < n)
                    out->n_gpu_crossings++;
                link_s_pp += act * o->n_prompt / (g * 1e9);
            }
            prev = d;
        }
    out->n_crossings = cross;
    out->link_bytes_per_token = (uint64_t)(act * cross);
    out->link_gbs = link_gbs;
    out->link_ms_per_token = link_ms_step;

    /* the host's bandwidth: --host-bw (or this machine's measured read,
     * plan_speed.c), else a unified device's (the same memory), else the
     * default */
    double host_bw = o->host_bw_gbs;
    out->host_bw_kind = o->host_bw_from[0] ? GGFIT_HOST_BW_MEASURED : GGFIT_HOST_BW_GIVEN;
    snprintf(out->host_bw_from, sizeof out->host_bw_from, "%s",
             o->host_bw_from[0] ? o->host_bw_from : "--host-bw");
    for (size_t d = 0; d < n && host_bw <= 0; d++)
        if (devs[d].unified && devs[d].bandwidth_gbs > 0) {
            host_bw = devs[d].bandwidth_gbs;
            out->host_bw_kind = GGFIT_HOST_BW_UNIFIED;
            snprintf(out->host_bw_from, sizeof out->host_bw_from, "the unified device's");
        }
    if (host_bw <= 0) {
        host_bw = GGFIT__SPEED_HOST_BW;
        out->host_bw_kind = GGFIT_HOST_BW_DEFAULT;
        snprintf(out->host_bw_from, sizeof out->host_bw_from,
                 "a default: dual-channel DDR5-5600");
    }
    /* a measured read is what llama.cpp's threads reach: all of it */
    double host_eff = o->host_efficiency > 0                        ? o->host_efficiency
                      : out->host_bw_kind == GGFIT_HOST_BW_MEASURED ? 1.0
                                                                    : GGFIT__SPEED_HOST_EFF;
    out->host_bw_gbs = host_bw;
    out->host_efficiency = host_eff;
    out->host_used = acc[n].held > 0 || acc[n].kvbytes > 0;
    /* the CPU's threads and their compute: --host-tflops in all, else a
     * figure per thread (measured, or --host-gflops), else the default */
    uint32_t threads = o->n_threads ? o->n_threads
                       : p->n_threads ? p->n_threads
                                      : GGFIT__SPEED_HOST_THREADS;
    double host_g = o->host_tflops > 0 ? o->host_tflops * 1e3 : host_gflops(o, threads);
    if (host_g <= 0)
        host_g = GGFIT__SPEED_HOST_TFLOPS * 1e3;
    out->n_threads = threads;
    out->host_gflops = host_g;
    int32_t offload_to = -1;
    /* the scheduler asks its backends in order, each GPU whether it holds
     * layers or not (-ngl 0 still offloads the prompt's products) */
    for (size_t d = 0; d < n; d++)
        if (offloads_ops(devs[d].kind)) {
            offload_to = (int32_t)d;
            break;
        }
    /* ggml-cuda's offload_op: a matrix product of a batch of 32 tokens or
     * more (a ubatch of the prompt's, not -ub itself: pp16 stays on the
     * CPU); generation's single tokens never go */
    bool offload = offload_to >= 0 && pp_tokens >= 32 && acc[n].held > 0;

    /* the fixed cost of a token is llama.cpp's kernel launches, a few per
     * layer: the backend's cost per layer on each GPU (--fixed-ms: one cost
     * per token, shared among the GPUs by their layers) */
    uint32_t gpu_layers = 0;
    for (size_t l = 0; l < n; l++)
        gpu_layers += acc[l].layers;
    uint32_t n_ub = (o->n_prompt + ub - 1) / ub;
    double tg_ms = link_ms_step, pp_s = link_s_pp;
    for (size_t l = 0; l <= n; l++) {
        bool host = l == n;
        const leg_acc *a = &acc[l];
        if (!(a->wbytes > 0 || a->xbytes > 0 || a->kvbytes > 0 || a->flops > 0))
            continue;
        ggfit_speed_leg *g = &out->legs[out->n_legs++];
        const ggfit__speed_backend *k;
        g->device = host ? -1 : (int32_t)l;
        g->n_layers = a->layers;
        if (host) {
            k = ggfit__speed_backend_of(GGFIT_BACKEND_CPU, NULL, NULL);
            snprintf(g->name, sizeof g->name, "CPU");
            snprintf(g->description, sizeof g->description, "system memory");
            g->bandwidth_gbs = host_bw;
            g->efficiency = g->efficiency_float = host_eff;
            g->fixed_ms = 0;
            g->tflops = host_g / 1e3;
            snprintf(g->klass, sizeof g->klass, "host");
        } else {
            const ggfit_device *dv = &devs[l];
            const char *klass;
            k = ggfit__speed_backend_of(dv->kind, dv->description, &klass);
            snprintf(g->klass, sizeof g->klass, "%s", klass);
            snprintf(g->name, sizeof g->name, "%s", dv->name);
            snprintf(g->description, sizeof g->description, "%s", dv->description);
            g->bandwidth_gbs = o->bandwidth_gbs > 0 ? o->bandwidth_gbs : dv->bandwidth_gbs;
            if (g->bandwidth_gbs <= 0) {
                g->bandwidth_gbs = 500;
                g->bandwidth_assumed = true;
            }
            g->efficiency = o->efficiency > 0 ? o->efficiency : k->efficiency;
            g->efficiency_float = o->efficiency > 0 ? o->efficiency : k->efficiency_float;
            g->fixed_ms = o->fixed_ms >= 0
                              ? o->fixed_ms * (gpu_layers ? (double)a->layers / gpu_layers : 1.0)
                              : k->fixed_ms_layer * a->layers;
            bool tab;
            g->tflops = o->tflops > 0 ? o->tflops
                                      : ggfit__speed_tflops(dv->description, g->bandwidth_gbs, &tab);
            g->tflops_assumed = o->tflops <= 0 && !tab;
        }
        double ppe = o->pp_efficiency > 0 ? o->pp_efficiency : 0;
        g->pp_efficiency = ppe ? ppe : k->pp_efficiency;
        g->pp_efficiency_float = ppe ? ppe : k->pp_efficiency_float;
        g->pp_efficiency_attn = ppe ? ppe : fa ? k->pp_efficiency_attn : k->pp_efficiency_attn_nofa;
        g->pp_efficiency_moe = ppe ? ppe : k->pp_efficiency_moe;
        /* generation: a step of np tokens reads the dense weights once, the
         * experts those tokens touch, and each one's KV cache */
        double wq = a->wbytes - a->wfloat + (a->xbytes - a->xfloat) * x_tg;
        double wf = a->wfloat + a->xfloat * x_tg;
        g->weight_bytes = round_u64(wq + wf);
        g->weight_bytes_float = round_u64(wf);
        g->kv_bytes = round_u64(a->kvbytes * np);
        g->bytes_per_token = g->weight_bytes + g->kv_bytes;
        double bw = g->bandwidth_gbs * 1e9;
        double mem_ms = (wq / (bw * g->efficiency) + wf / (bw * g->efficiency_float)) * 1e3;
        double kv_ms = a->kvbytes * np / (bw * g->efficiency_float) * 1e3;
        if (host) {
            /* the CPU's threads: each token's products (compute-bound when
             * few), and attention row by row */
            double gf = host_g * 1e9;
            double fq = a->flops - a->ffloat - a->fattn, ff = a->ffloat;
            double comp_ms = np * (fq / k->tg_compute_eff + ff / k->tg_compute_eff_float) / gf *
                             1e3;
            double attn_ms = np * a->rows_tg * k->tg_attn_row_flop / gf * 1e3;
            g->ms_per_token = (mem_ms > comp_ms ? mem_ms : comp_ms) +
                              (kv_ms > attn_ms ? kv_ms : attn_ms);
        } else {
            /* np tokens a step: their products bound it once they take
             * longer than the reads (a large batch of sequences) */
            double comp_ms = np > 1 ? np * (a->flops - a->fattn) /
                                          (g->tflops * 1e12 * g->pp_efficiency) * 1e3
                                    : 0;
            g->ms_per_token = (mem_ms > comp_ms ? mem_ms : comp_ms) + kv_ms + g->fixed_ms;
        }
        tg_ms += g->ms_per_token;
        g->flops_per_token = a->flops;
        g->flops_float = a->ffloat;
        g->flops_attn = a->fattn;
        g->flops_moe = a->fexp;
        g->flops_attn_tg = a->fattn_tg;
        /* each ubatch of the prompt reads the experts it touches */
        g->expert_bytes_per_ubatch = round_u64(a->xbytes * x_pp);
        if (host && offload) {
            /* op offload: the host's weights go to the GPU whole, once per
             * ubatch, and are multiplied there */
            g->offload_bytes = (uint64_t)round_u64(a->held);
            out->link_offload_ms = a->held * n_ub / (link_gbs * 1e9) * 1e3;
            g->pp_ms = out->link_offload_ms;
        } else {
            double fq = a->flops - a->ffloat - a->fattn - a->fexp;
            g->pp_ms = o->n_prompt *
                           (fq / g->pp_efficiency + a->ffloat / g->pp_efficiency_float +
                            a->fattn / g->pp_efficiency_attn + a->fexp / g->pp_efficiency_moe) /
                           (g->tflops * 1e12) * 1e3 +
                       n_ub * a->xbytes * x_pp / (bw * g->efficiency) * 1e3;
        }
        pp_s += g->pp_ms / 1e3;
    }
    if (offload) {
        /* the host's FLOPs on the GPU that takes them */
        const ggfit_device *dv = &devs[offload_to];
        const ggfit__speed_backend *k = ggfit__speed_backend_of(dv->kind, dv->description, NULL);
        double tf = o->tflops > 0 ? o->tflops : 0;
        for (uint32_t l = 0; l < out->n_legs; l++)
            if (out->legs[l].device == offload_to)
                tf = out->legs[l].tflops;
        if (tf <= 0) {
            bool tab;
            tf = ggfit__speed_tflops(dv->description, dv->bandwidth_gbs, &tab);
        }
        const leg_acc *a = &acc[n];
        double pe = o->pp_efficiency;
        double s = o->n_prompt *
                   ((a->flops - a->fexp) / (pe > 0 ? pe : k->pp_efficiency) +
                    a->fexp / (pe > 0 ? pe : k->pp_efficiency_moe)) /
                   (tf * 1e12);
        pp_s += s;
        for (uint32_t l = 0; l < out->n_legs; l++)
            if (out->legs[l].device == offload_to)
                out->legs[l].pp_ms += s * 1e3;
    }
    /* pipeline parallelism: every layer on the GPUs, 2+ of them, layer
     * split: the k ubatches of a batch overlap, so a batch takes the sum of
     * one ubatch's stages plus (k - 1) times the slowest stage */
    uint32_t n_gpu_legs = 0;
    for (uint32_t l = 0; l < out->n_legs; l++)
        n_gpu_legs += out->legs[l].device >= 0;
    if (n_gpu_legs >= 2 && !offload && p->split_mode == GGFIT_SPLIT_LAYER &&
        acc[n].held == 0 && !p->no_kv_offload) {
        uint32_t nb = p->n_batch ? p->n_batch : 2048;
        uint32_t k = nb / ub;
        if (k > GGFIT__SPEED_SCHED_COPIES)
            k = GGFIT__SPEED_SCHED_COPIES;
        if (k > 1 && n_ub > 1) {
            double sum = 0, mx = 0;
            for (uint32_t l = 0; l < out->n_legs; l++)
                if (out->legs[l].device >= 0) {
                    double st = out->legs[l].pp_ms / n_ub;
                    sum += st;
                    mx = st > mx ? st : mx;
                }
            double ms = 0;
            for (uint32_t left = n_ub; left;) {
                uint32_t kb = left < k ? left : k;
                ms += sum + (kb - 1) * mx;
                left -= kb;
            }
            double serial = sum * n_ub;
            pp_s += (ms - serial) / 1e3;
            out->pipelined = true;
        }
    }
    out->tg_ms_per_token = tg_ms;
    out->tg_tps = tg_ms > 0 ? 1e3 / tg_ms : 0;
    out->tg_tps_total = out->tg_tps * np;
    out->pp_ms = pp_s * 1e3;
    out->pp_tps = pp_s > 0 ? o->n_prompt / pp_s : 0;
    ggfit_free(has);
    if (stage != stage_buf)
        ggfit_free(stage);
    return GGFIT_OK;
}
