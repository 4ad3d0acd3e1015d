/*
 * speed.c - tokens per second of a plan: generation from the bytes each
 * device reads per token, prompt processing from the FLOPs it does, the
 * devices in series along the layers (llama.cpp's layer split). The
 * placement is ggfit_project's; the constants are speed_constants.c's.
 */
#include <stdio.h>
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

    /* accumulators: devices 0..n-1, the host at n */
    double wbytes[GGFIT_MAX_LEGS] = { 0 }, kvbytes[GGFIT_MAX_LEGS] = { 0 };
    double flops[GGFIT_MAX_LEGS] = { 0 }, held[GGFIT_MAX_LEGS] = { 0 };
    /* of which: float weights (F32, F16, BF16), whose kernels (cuBLAS, plain
     * loads) reach other fractions of the peaks than the quantized ones',
     * and attention's FLOPs */
    double wfloat[GGFIT_MAX_LEGS] = { 0 }, ffloat[GGFIT_MAX_LEGS] = { 0 };
    double fattn[GGFIT_MAX_LEGS] = { 0 };
    uint32_t layers[GGFIT_MAX_LEGS] = { 0 };
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

    uint64_t nt = ggfit_model_n_tensors(m);
    for (uint64_t i = 0; i < nt; i++) {
        const ggfit_tensor *t = ggfit_model_tensor(m, i);
        int32_t b = placement[i];
        if (b < 0 || (uint32_t)b >= pr->n_bufts || t->role == GGFIT_ROLE_NEXTN)
            continue;
        int32_t dev = pr->bufts[b].device;
        size_t leg = dev >= 0 && (size_t)dev < n ? (size_t)dev : n;
        double bytes = tensor_bytes(t->info, o->as_type);
        double e = elems(t->info), f = 1.0;
        if (t->role == GGFIT_ROLE_TOKEN_EMBD) {
            /* a lookup: one row per token */
            double rows = t->info->n_dims >= 2 ? (double)t->info->ne[1] : 1;
            wbytes[leg] += bytes / (rows > 0 ? rows : 1);
            continue;
        }
        /* what op offload copies: not the embedding (GET_ROWS stays) */
        held[leg] += bytes;
        if (t->role == GGFIT_ROLE_EXPERTS)
            f = frac;
        wbytes[leg] += bytes * f;
        uint32_t ty = o->as_type >= 0 && t->info->n_dims >= 2 && t->info->type != GGFIT_TYPE_F32
                          ? (uint32_t)o->as_type
                          : t->info->type;
        bool flt = ty == GGFIT_TYPE_F32 || ty == GGFIT_TYPE_F16 || ty == GGFIT_TYPE_BF16;
        if (flt)
            wfloat[leg] += bytes * f;
        if (t->info->n_dims >= 2) {
            flops[leg] += 2.0 * e * f;
            if (flt)
                ffloat[leg] += 2.0 * e * f;
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

    /* KV cache read per generated token (at the middle of the generated
     * tokens) and attention FLOPs per prompt token (at its middle). */
    double tg_cells = (double)o->depth + o->n_gen / 2.0;
    double pp_cells = (double)o->depth + o->n_prompt / 2.0;
    double ek = type_elem_bytes(p->type_k), ev = type_elem_bytes(p->type_v);
    for (uint32_t il = 0; il < nl; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(m, il);
        for (size_t l = 0; l <= n; l++)
            layers[l] += has[il * GGFIT_MAX_LEGS + l];
        if (!li->n_head_kv || li->nextn)
            continue;
        int32_t at = stage[il * ST_N + ST_ATTN];
        size_t leg = at >= 0 ? (size_t)at : n;
        bool swa = layer_swa(hp, li, il);
        double hk = swa && hp->n_embd_head_k_swa ? hp->n_embd_head_k_swa : hp->n_embd_head_k;
        double hv = swa && hp->n_embd_head_v_swa ? hp->n_embd_head_v_swa : hp->n_embd_head_v;
        double pc = swa ? dmin(pp_cells, hp->n_swa) : pp_cells;
        kvbytes[p->no_kv_offload ? n : leg] += layer_kv_bytes(hp, li, il, ek, ev, tg_cells);
        flops[leg] += 2.0 * li->n_head * (hk + hv) * pc;
        fattn[leg] += 2.0 * li->n_head * (hk + hv) * pc;
    }

    /* activations crossing devices along the layers */
    int32_t prev = -2;
    uint32_t cross = 0;
    double link_ms_tok = 0, link_s_pp = 0;
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
                link_ms_tok += act / (g * 1e9) * 1e3 + out->cross_ms;
                if ((size_t)d < n && (size_t)prev < n)
                    out->n_gpu_crossings++;
                link_s_pp += act * o->n_prompt / (g * 1e9);
            }
            prev = d;
        }
    out->n_crossings = cross;
    out->link_bytes_per_token = (uint64_t)(act * cross);
    out->link_gbs = link_gbs;
    out->link_ms_per_token = link_ms_tok;

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
    out->host_used = held[n] > 0 || kvbytes[n] > 0;
    int32_t offload_to = -1;
    for (size_t d = 0; d < n; d++)
        if (offloads_ops(devs[d].kind) && (wbytes[d] > 0 || layers[d])) {
            offload_to = (int32_t)d;
            break;
        }
    bool offload = offload_to >= 0 && ub >= 32 && held[n] > 0;

    /* the fixed cost of a token is llama.cpp's kernel launches, a few per
     * layer: the backend's cost per layer on each GPU (--fixed-ms: one cost
     * per token, shared among the GPUs by their layers) */
    uint32_t gpu_layers = 0;
    for (size_t l = 0; l < n; l++)
        gpu_layers += layers[l];
    double tg_ms = link_ms_tok, pp_s = link_s_pp;
    for (size_t l = 0; l <= n; l++) {
        bool host = l == n;
        if (!(wbytes[l] > 0 || kvbytes[l] > 0 || flops[l] > 0))
            continue;
        ggfit_speed_leg *g = &out->legs[out->n_legs++];
        g->device = host ? -1 : (int32_t)l;
        g->n_layers = layers[l];
        if (host) {
            snprintf(g->name, sizeof g->name, "CPU");
            snprintf(g->description, sizeof g->description, "system memory");
            g->bandwidth_gbs = host_bw;
            g->efficiency = g->efficiency_float = host_eff;
            g->fixed_ms = 0;
            g->tflops = o->host_tflops > 0 ? o->host_tflops : GGFIT__SPEED_HOST_TFLOPS;
            snprintf(g->klass, sizeof g->klass, "host");
            g->pp_efficiency = g->pp_efficiency_float = g->pp_efficiency_attn =
                ggfit__speed_backend_of(GGFIT_BACKEND_CPU, NULL, NULL)->pp_efficiency;
        } else {
            const ggfit_device *dv = &devs[l];
            const char *klass;
            const ggfit__speed_backend *k = ggfit__speed_backend_of(dv->kind, dv->description,
                                                                    &klass);
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
                              ? o->fixed_ms * (gpu_layers ? (double)layers[l] / gpu_layers : 1.0)
                              : k->fixed_ms_layer * layers[l];
            bool tab;
            g->tflops = o->tflops > 0 ? o->tflops
                                      : ggfit__speed_tflops(dv->description, g->bandwidth_gbs, &tab);
            g->tflops_assumed = o->tflops <= 0 && !tab;
            g->pp_efficiency = o->pp_efficiency > 0 ? o->pp_efficiency : k->pp_efficiency;
            g->pp_efficiency_float =
                o->pp_efficiency > 0 ? o->pp_efficiency : k->pp_efficiency_float;
            g->pp_efficiency_attn = o->pp_efficiency > 0 ? o->pp_efficiency : k->pp_efficiency_attn;
        }
        g->weight_bytes = (uint64_t)round_u64(wbytes[l]);
        g->kv_bytes = (uint64_t)round_u64(kvbytes[l]);
        g->bytes_per_token = g->weight_bytes + g->kv_bytes;
        g->weight_bytes_float = round_u64(wfloat[l]);
        g->flops_float = ffloat[l];
        g->flops_attn = fattn[l];
        double bw = g->bandwidth_gbs * 1e9;
        g->ms_per_token = ((wbytes[l] - wfloat[l]) / (bw * g->efficiency) +
                           (wfloat[l] + kvbytes[l]) / (bw * g->efficiency_float)) * 1e3 +
                          g->fixed_ms;
        tg_ms += g->ms_per_token;
        g->flops_per_token = flops[l];
        if (host && offload) {
            /* op offload: the host's weights go to the GPU whole, once per
             * ubatch, and are multiplied there */
            uint32_t n_ub = (o->n_prompt + ub - 1) / ub;
            g->offload_bytes = (uint64_t)round_u64(held[l]);
            out->link_offload_ms = held[l] * n_ub / (link_gbs * 1e9) * 1e3;
            g->pp_ms = out->link_offload_ms;
        } else {
            g->pp_ms = o->n_prompt *
                       ((flops[l] - ffloat[l] - fattn[l]) / g->pp_efficiency +
                        ffloat[l] / g->pp_efficiency_float + fattn[l] / g->pp_efficiency_attn) /
                       (g->tflops * 1e12) * 1e3;
        }
        pp_s += g->pp_ms / 1e3;
    }
    if (offload) {
        /* the host's FLOPs on the GPU that takes them */
        const ggfit_device *dv = &devs[offload_to];
        double tf = o->tflops > 0 ? o->tflops : 0;
        double eff = o->pp_efficiency > 0 ? o->pp_efficiency
                                          : ggfit__speed_backend_of(dv->kind, dv->description,
                                                                    NULL)->pp_efficiency;
        for (uint32_t l = 0; l < out->n_legs; l++)
            if (out->legs[l].device == offload_to)
                tf = out->legs[l].tflops;
        if (tf <= 0) {
            bool tab;
            tf = ggfit__speed_tflops(dv->description, dv->bandwidth_gbs, &tab);
        }
        double s = o->n_prompt * flops[n] / (tf * 1e12 * eff);
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
        held[n] == 0 && !p->no_kv_offload) {
        uint32_t nb = p->n_batch ? p->n_batch : 2048;
        uint32_t k = nb / ub;
        if (k > GGFIT__SPEED_SCHED_COPIES)
            k = GGFIT__SPEED_SCHED_COPIES;
        uint32_t n_ub = (o->n_prompt + ub - 1) / ub;
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
    out->pp_ms = pp_s * 1e3;
    out->pp_tps = pp_s > 0 ? o->n_prompt / pp_s : 0;
    ggfit_free(has);
    if (stage != stage_buf)
        ggfit_free(stage);
    return GGFIT_OK;
}
