/*
 * projection.c - renderers of a projection: llama.cpp's memory
 * breakdown table (MiB) and JSON (bytes).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

/* The device column's width: its longest name, at least the header's and at
 * most what keeps the table within 80 columns (a longer name has a line of
 * its own, its numbers under it). */
enum { NAME_MAX_COLS = 21 };

static void row(ggfit_sb *sb, int w, const char *name, const ggfit_mem *m,
                const ggfit_device *dev)
{
    uint64_t self = m->model + m->context + m->compute;
    if ((int)strlen(name) > w) {
        ggfit__sb_printf(sb, "  %s\n", name);
        name = "";
    }
    /* left after: llama.cpp's breakdown's "free", what is left once loaded
     * (the verdict's table says "free now" for what is free before) */
    if (dev)
        ggfit__sb_printf(sb, "  %-*s %8.0f %11.0f %8.0f %8.0f %8.0f %8.0f\n", w, name,
                         ggfit__mib(dev->total), ((double)dev->free - (double)self) / GGFIT_MiB,
                         ggfit__mib(self), ggfit__mib(m->model), ggfit__mib(m->context), ggfit__mib(m->compute));
    else
        ggfit__sb_printf(sb, "  %-*s %8s %11s %8.0f %8.0f %8.0f %8.0f\n", w, name, "", "",
                         ggfit__mib(self), ggfit__mib(m->model), ggfit__mib(m->context), ggfit__mib(m->compute));
}

static const char *pooling_name(int32_t pooling)
{
    static const char *const names[] = { "none", "mean", "cls", "last", "rank" };
    return pooling >= GGFIT_POOLING_NONE && pooling <= GGFIT_POOLING_RANK ? names[pooling]
                                                                          : "none";
}

char *ggfit_projection_text(const ggfit_projection *pr, const ggfit_device *devs)
{
    ggfit_sb sb = {0};
    ggfit__sb_printf(&sb, "memory breakdown [MiB], n_ctx %u, n_ubatch %u, flash attention %s",
                     pr->n_ctx, pr->n_ubatch, pr->flash_attn ? "on" : "off");
    if (pr->embeddings)
        ggfit__sb_printf(&sb, ", embeddings (pooling %s)", pooling_name(pr->pooling));
    ggfit__sb_printf(&sb, "\n");
    int w = (int)strlen("device");
    for (uint32_t d = 0; d < pr->n_devices + pr->n_bufts; d++) {
        int n = (int)strlen(d < pr->n_devices ? devs[pr->device_of[d]].name
                                              : pr->bufts[d - pr->n_devices].name);
        w = n > w ? (n < NAME_MAX_COLS ? n : NAME_MAX_COLS) : w;
    }
    ggfit__sb_printf(&sb, "  %-*s %8s %11s %8s %8s %8s %8s\n", w, "device", "total", "left after",
                     "self", "model", "context", "compute");
    for (uint32_t d = 0; d < pr->n_devices; d++)
        row(&sb, w, devs[pr->device_of[d]].name, &pr->devices[d], &devs[pr->device_of[d]]);
    row(&sb, w, "Host", &pr->host, NULL);
    /* The CPU's extra buffer types (AMX, CPU_REPACK): host memory that
     * llama.cpp's table leaves out, one row each. */
    bool extra = false;
    for (uint32_t i = 0; i < pr->n_bufts; i++) {
        const ggfit_buft_mem *b = &pr->bufts[i];
        if (b->device < 0 && !b->is_host && (b->mem.model || b->mem.context || b->mem.compute)) {
            row(&sb, w, b->name, &b->mem, NULL);
            extra = true;
        }
    }
    if (extra)
        ggfit__sb_printf(&sb, "  (the rows under Host: its memory in the CPU's extra buffer "
                              "types, which llama.cpp's table leaves out)\n");
    if (pr->warning[0])
        ggfit__sb_printf(&sb, "note: %s\n", pr->warning);
    return ggfit__text_take(&sb);
}

static json_t *mem_json(const ggfit_mem *m)
{
    return json_pack("{s:I, s:I, s:I}", "model", (json_int_t)m->model, "context",
                     (json_int_t)m->context, "compute", (json_int_t)m->compute);
}

json_t *ggfit__projection_tree(const ggfit_projection *pr, const ggfit_device *devs)
{
    json_t *root = NULL, *rows = json_array(), *bufts = json_array();
    if (!rows || !bufts)
        goto done;
    for (uint32_t d = 0; d < pr->n_devices; d++) {
        const ggfit_device *dev = &devs[pr->device_of[d]];
        json_t *r = mem_json(&pr->devices[d]);
        if (!r || json_object_set_new(r, "name", json_string(dev->name)) ||
            json_object_set_new(r, "total", json_integer((json_int_t)dev->total)) ||
            json_object_set_new(r, "free", json_integer((json_int_t)dev->free)) ||
            json_array_append_new(rows, r))
            goto done;
    }
    for (uint32_t i = 0; i < pr->n_bufts; i++) {
        const ggfit_buft_mem *b = &pr->bufts[i];
        json_t *r = mem_json(&b->mem);
        if (!r || json_object_set_new(r, "name", json_string(b->name)) ||
            json_object_set_new(r, "device", b->device >= 0 ? json_integer(b->device) : json_null()) ||
            json_object_set_new(r, "host", json_boolean(b->is_host)) ||
            json_array_append_new(bufts, r))
            goto done;
    }
    root = json_pack("{s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:o, s:o, s:o, s:o, s:b, s:s}",
                     "n_ctx", (json_int_t)pr->n_ctx, "n_ctx_seq", (json_int_t)pr->n_ctx_seq,
                     "n_batch", (json_int_t)pr->n_batch, "n_ubatch", (json_int_t)pr->n_ubatch,
                     "n_seq", (json_int_t)pr->n_seq, "flash_attn", pr->flash_attn,
                     "n_gpu_layers", (json_int_t)pr->n_gpu_layers,
                     "devices", rows, "host", mem_json(&pr->host),
                     "cpu_extra", mem_json(&pr->cpu_extra), "buffer_types", bufts,
                     "compute_estimated", pr->compute_estimated, "warning", pr->warning);
    rows = bufts = NULL;
    /* Only with --embedding, so that other projections print as before. */
    if (root && pr->embeddings &&
        json_object_set_new(root, "pooling", json_string(pooling_name(pr->pooling)))) {
        json_decref(root);
        root = NULL;
    }
done:
    json_decref(rows);
    json_decref(bufts);
    return root;
}

char *ggfit__json_doc(json_t *root, const char *kind, size_t flags)
{
    json_t *doc = root ? json_pack("{s:i, s:s}", "json_version", GGFIT_JSON_VERSION, "kind",
                                   kind)
                       : NULL;
    const char *key;
    json_t *v;
    char *out = NULL;
    if (!doc)
        goto done;
    json_object_foreach(root, key, v) {
        if (strcmp(key, "json_version") && strcmp(key, "kind") &&
            json_object_set(doc, key, v))
            goto done;
    }
    out = json_dumps(doc, flags);
done:
    json_decref(doc);
    json_decref(root);
    return out;
}

json_t *ggfit__json_body(char *text)
{
    json_t *root = text ? json_loads(text, 0, NULL) : NULL;
    ggfit_free(text);
    if (root) {
        json_object_del(root, "json_version");
        json_object_del(root, "kind");
    }
    return root;
}

char *ggfit_projection_json(const ggfit_projection *pr, const ggfit_device *devs)
{
    return ggfit__json_doc(ggfit__projection_tree(pr, devs), "projection", GGFIT__JSON_FLAGS);
}

/* ---- fit -------------------------------------------------------------- */

static json_t *lines_json(const char *text)
{
    json_t *a = json_array();
    for (const char *p = text; a && p && *p;) {
        size_t n = strcspn(p, "\n");
        if (json_array_append_new(a, json_stringn(p, n))) {
            json_decref(a);
            return NULL;
        }
        p += n + (p[n] == '\n');
    }
    return a;
}

json_t *ggfit__fit_tree(const ggfit_fit_result *r, const ggfit_device *devs, size_t n)
{
    static const char *const names[] = { "unchanged", "fits", "failed" };
    char *args = ggfit_fit_args(r, devs, n);
    json_t *root = ggfit__projection_tree(&r->projection, devs), *out = NULL;
    json_t *ts = json_array(), *ot = json_array();
    if (!args || !root || !ts || !ot)
        goto done;
    for (size_t d = 0; d < r->projection.n_devices; d++)
        if (json_array_append_new(ts, json_real(r->params.tensor_split[d])))
            goto done;
    for (uint32_t i = 0; i < r->params.n_overrides; i++)
        if (json_array_append_new(ot, json_pack("{s:s, s:s}", "pattern",
                                                r->params.overrides[i].pattern, "buffer",
                                                r->params.overrides[i].buffer)))
            goto done;
    if (json_object_set_new(root, "status", json_string(names[r->status])) ||
        json_object_set_new(root, "args", json_string(args)) ||
        json_object_set_new(root, "n_gpu_layers", json_integer(r->params.n_gpu_layers)) ||
        json_object_set_new(root, "tensor_split", ts) ||
        json_object_set_new(root, "overrides", ot) ||
        json_object_set_new(root, "reason", json_string(r->reason)) ||
        json_object_set_new(root, "n_projections", json_integer(r->n_projections)) ||
        json_object_set_new(root, "log", lines_json(r->log ? r->log : "")))
        ts = ot = NULL;
    else
        ts = ot = NULL, out = root, root = NULL;
done:
    json_decref(ts);
    json_decref(ot);
    json_decref(root);
    ggfit_free(args);
    return out;
}

char *ggfit_fit_json(const ggfit_fit_result *r, const ggfit_device *devs, size_t n)
{
    return ggfit__json_doc(ggfit__fit_tree(r, devs, n), "fit", GGFIT__JSON_FLAGS);
}
