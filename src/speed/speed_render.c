/*
 * speed_render.c - a speed estimate in words and as JSON.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

/* The constants not from the devices, in words, cut to n bytes (512 were
 * always enough): a device's bandwidth or TFLOPS assumed, the host's
 * bandwidth and whose figure it is. */
static const char *assumptions(const ggfit_speed *s, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
#define PUT(...) do { if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__); } while (0)
    for (uint32_t i = 0; i < s->n_legs; i++) {
        const ggfit_speed_leg *g = &s->legs[i];
        if (g->device >= 0 && g->bandwidth_assumed)
            PUT("%s's bandwidth unknown: 500 GB/s assumed (--bandwidth); ", g->name);
        if (g->device >= 0 && g->tflops_assumed)
            PUT("%s: %.0f TFLOPS assumed from its bandwidth; ", g->name, g->tflops);
    }
    PUT("host memory %.1f GB/s (%s) at %.0f%%", s->host_bw_gbs, s->host_bw_from,
        s->host_efficiency * 100);
#undef PUT
    return buf;
}

char *ggfit_speed_text(const ggfit_speed *s)
{
    ggfit_sb sb = { 0 };
    ggfit__sb_printf(&sb, "predicted llama-bench speed: pp%u %.1f t/s, tg%u %.1f t/s (depth %u)\n",
                     s->n_prompt, s->pp_tps, s->n_gen, s->tg_tps, s->depth);
    if (s->n_parallel > 1)
        ggfit__sb_printf(&sb, "  generation with %u sequences decoding at once: %.1f t/s each, "
                              "%.1f t/s in all (a step reads the weights once for all of them, "
                              "each one's KV cache)\n",
                         s->n_parallel, s->tg_tps, s->tg_tps_total);
    /* within 80 columns: the units in the head, a long name on its own line */
    int w = 3;
    for (uint32_t i = 0; i < s->n_legs; i++) {
        int n = (int)strlen(s->legs[i].name);
        w = n > w ? (n < 12 ? n : 12) : w;
    }
    ggfit__sb_printf(&sb, "  %-*s %6s %6s %4s %8s %9s %8s %6s %9s\n", w, "leg", "layers", "GB/s",
                     "eff", "fixed ms", "MB/token", "ms/token", "TFLOPS", "prompt ms");
    for (uint32_t i = 0; i < s->n_legs; i++) {
        const ggfit_speed_leg *g = &s->legs[i];
        bool own_line = (int)strlen(g->name) > w;
        if (own_line)
            ggfit__sb_printf(&sb, "  %s\n", g->name);
        ggfit__sb_printf(&sb, "  %-*s %6u %6.1f %3.0f%% %8.2f %9.1f %8.2f %6.1f %9.1f\n", w,
                         own_line ? "" : g->name, g->n_layers, g->bandwidth_gbs,
                         g->efficiency * 100, g->fixed_ms, g->bytes_per_token / 1e6,
                         g->ms_per_token, g->tflops, g->pp_ms);
    }
    ggfit__sb_printf(&sb, "  link: %u crossings per token (a split's %.2f ms each), %.1f KiB "
                          "of activations at %.1f GB/s: %.3f ms per token",
                     s->n_crossings, s->cross_ms, s->link_bytes_per_token / 1024.0, s->link_gbs,
                     s->link_ms_per_token);
    if (s->link_offload_ms > 0)
        ggfit__sb_printf(&sb, "; prompt: weights in system RAM copied to the GPU per ubatch of "
                              "%u (op offload): %.1f ms",
                         s->n_ubatch, s->link_offload_ms);
    ggfit__sb_printf(&sb, "\n  generation %.2f ms per token; the devices run in series\n",
                     s->tg_ms_per_token);
    char a[512];
    ggfit__sb_printf(&sb, "  assumed: %s\n", assumptions(s, a, sizeof a));
    return ggfit__text_take(&sb);
}

static json_t *leg_json(const ggfit_speed_leg *g)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:f, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:I, "
                     "s:f}",
                     "name", g->name, "description", g->description, "class", g->klass, "device", (int)g->device,
                     "layers", (int)g->n_layers, "bandwidth_gbs", g->bandwidth_gbs, "efficiency",
                     g->efficiency, "fixed_ms", g->fixed_ms, "weight_bytes_per_token",
                     (json_int_t)g->weight_bytes, "kv_bytes_per_token", (json_int_t)g->kv_bytes,
                     "bytes_per_token", (json_int_t)g->bytes_per_token, "ms_per_token",
                     g->ms_per_token, "flops_per_token", g->flops_per_token, "tflops", g->tflops,
                     "pp_efficiency", g->pp_efficiency, "offload_bytes_per_ubatch",
                     (json_int_t)g->offload_bytes, "pp_ms", g->pp_ms);
    json_t *more = json_pack("{s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f}",
                             "efficiency_float", g->efficiency_float, "weight_bytes_float",
                             (json_int_t)g->weight_bytes_float, "flops_float", g->flops_float,
                             "flops_attn", g->flops_attn, "pp_efficiency_float",
                             g->pp_efficiency_float, "pp_efficiency_attn", g->pp_efficiency_attn,
                             "flops_moe", g->flops_moe, "pp_efficiency_moe",
                             g->pp_efficiency_moe, "expert_bytes_per_ubatch",
                             (json_int_t)g->expert_bytes_per_ubatch, "flops_attn_tg",
                             g->flops_attn_tg);
    if (!o || !more || json_object_update(o, more)) {
        json_decref(o);
        o = NULL;
    }
    json_decref(more);
    return o;
}

char *ggfit_speed_json(const ggfit_speed *s)
{
    char a[512];
    json_t *root = json_pack("{s:f, s:f, s:i, s:i, s:i, s:i, s:f, s:f, s:b}", "pp_tps", s->pp_tps,
                             "tg_tps", s->tg_tps, "n_prompt", (int)s->n_prompt, "n_gen",
                             (int)s->n_gen, "depth", (int)s->depth, "n_ubatch", (int)s->n_ubatch,
                             "tg_ms_per_token", s->tg_ms_per_token, "pp_ms", s->pp_ms,
                             "pipelined", s->pipelined);
    json_t *devs = json_array();
    json_t *host = NULL;
    char *out = NULL;
    if (!root || !devs)
        goto done;
    for (uint32_t i = 0; i < s->n_legs; i++) {
        json_t *l = leg_json(&s->legs[i]);
        if (!l)
            goto done;
        if (s->legs[i].device < 0)
            host = l;
        else if (json_array_append_new(devs, l))
            goto done;
    }
    if (json_object_set_new(root, "devices", devs)) {
        devs = NULL;
        goto done;
    }
    devs = NULL;
    if (json_object_set_new(root, "host", host ? host : json_null())) {
        host = NULL;
        goto done;
    }
    host = NULL;
    static const char *const kinds[] = { "default", "given", "unified", "measured" };
    if (json_object_set_new(root, "host_bandwidth",
                            json_pack("{s:f, s:f, s:s, s:s, s:b}", "gbs", s->host_bw_gbs,
                                      "efficiency", s->host_efficiency, "kind",
                                      kinds[s->host_bw_kind & 3], "from", s->host_bw_from,
                                      "used", s->host_used)) ||
        json_object_set_new(root, "link",
                            json_pack("{s:i, s:i, s:f, s:I, s:f, s:f, s:f}",
                                      "crossings_per_token", (int)s->n_crossings,
                                      "gpu_crossings_per_token", (int)s->n_gpu_crossings,
                                      "ms_per_crossing", s->cross_ms, "bytes_per_token",
                                      (json_int_t)s->link_bytes_per_token, "gbs", s->link_gbs,
                                      "ms_per_token", s->link_ms_per_token, "offload_ms",
                                      s->link_offload_ms)) ||
        json_object_set_new(root, "assumptions",
                            json_string(assumptions(s, a, sizeof a))) ||
        json_object_set_new(root, "cpu",
                            json_pack("{s:i, s:f}", "threads", (int)s->n_threads, "gflops",
                                      s->host_gflops)) ||
        json_object_set_new(root, "flash_attn", json_boolean(s->flash_attn)) ||
        json_object_set_new(root, "parallel",
                            json_pack("{s:i, s:f, s:f, s:i, s:i}", "sequences",
                                      (int)s->n_parallel, "tg_tps_per_sequence", s->tg_tps,
                                      "tg_tps_total", s->tg_tps_total, "experts_per_ubatch",
                                      (int)s->n_experts_pp, "experts_per_step",
                                      (int)s->n_experts_tg)))
        goto done;
    out = ggfit__json_doc(json_incref(root), "speed", GGFIT__JSON_FLAGS);
done:
    json_decref(host);
    json_decref(devs);
    json_decref(root);
    return out;
}
