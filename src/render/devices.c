/*
 * devices.c - renderers of what ggfit sees on a machine: the host
 * and its devices, as a table (MiB) or JSON (bytes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

/* The name of feature bit k if features has it (devices/cpu.c), else
 * NULL: the features are printed bit by bit. */
static const char *feature_name(uint32_t features, unsigned k)
{
    return features >> k & 1 ? ggfit_cpu_feature_name(1u << k) : NULL;
}

char *ggfit_devices_text(const ggfit_host_info *host, const ggfit_device *devs, size_t n)
{
    ggfit_sb sb = {0};
    if (host) {
        ggfit__sb_printf(&sb, "host: %s\n", host->cpu_name[0] ? host->cpu_name : "unknown CPU");
        ggfit__sb_printf(&sb, "  memory     %.0f MiB total, %.0f MiB available\n", ggfit__mib(host->total),
                         ggfit__mib(host->available));
        ggfit__sb_printf(&sb, "  cpu        ");
        bool any = false;
        for (unsigned k = 0; k < 32; k++)
            if (feature_name(host->cpu_features, k)) {
                ggfit__sb_printf(&sb, "%s%s", any ? " " : "", feature_name(host->cpu_features, k));
                any = true;
            }
        ggfit__sb_printf(&sb, "%s (features that decide the CPU's buffer types)\n",
                         any ? "" : "none");
    }
    if (n == 0) {
        ggfit__sb_printf(&sb, "no GPUs found: llama.cpp would run on the CPU\n");
        return ggfit__text_take(&sb);
    }
    ggfit__sb_printf(&sb, "  %-10s %-7s %9s %9s %9s %8s  %s\n", "device", "kind", "total", "free",
                     "others", "GB/s", "description");
    for (size_t i = 0; i < n; i++) {
        const ggfit_device *d = &devs[i];
        char bw[32] = "-";
        if (d->bandwidth_gbs > 0)
            snprintf(bw, sizeof bw, "%.0f", d->bandwidth_gbs);
        ggfit__sb_printf(&sb, "  %-10s %-7s %9.0f %9.0f %9.0f %8s  %s%s\n", d->name,
                         ggfit_backend_name(d->kind) ? ggfit_backend_name(d->kind) : "?",
                         ggfit__mib(d->total), ggfit__mib(d->free), ggfit__mib(d->held_by_others), bw, d->description,
                         d->unified ? " (unified memory)" : "");
    }
    ggfit__sb_printf(&sb, "(MiB; others: held by other processes)\n");
    return ggfit__text_take(&sb);
}

char *ggfit_devices_json(const ggfit_host_info *host, const ggfit_device *devs, size_t n)
{
    char *out = NULL;
    json_t *root = json_object(), *arr = json_array();
    if (!root || !arr)
        goto done;
    if (host) {
        json_t *features = json_array();
        if (!features)
            goto done;
        for (unsigned k = 0; k < 32; k++)
            if (feature_name(host->cpu_features, k))
                json_array_append_new(features, json_string(feature_name(host->cpu_features, k)));
        json_t *h = json_pack("{s:I, s:I, s:s, s:o}", "total", (json_int_t)host->total,
                              "available", (json_int_t)host->available, "cpu_name",
                              host->cpu_name, "cpu_features", features);
        if (!h || json_object_set_new(root, "host", h))
            goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const ggfit_device *d = &devs[i];
        const char *kind = ggfit_backend_name(d->kind);
        json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:f, s:b}", "name", d->name,
                              "kind", kind ? kind : "?", "description", d->description, "total",
                              (json_int_t)d->total, "free", (json_int_t)d->free,
                              "held_by_others", (json_int_t)d->held_by_others, "bandwidth_gbs",
                              d->bandwidth_gbs, "unified", d->unified);
        if (!j || json_array_append_new(arr, j))
            goto done;
    }
    if (json_object_set(root, "devices", arr))
        goto done;
    out = ggfit__json_doc(root, "devices", JSON_INDENT(2));
    root = NULL;
done:
    json_decref(arr);
    json_decref(root);
    return out;
}
