/*
 * gpu_list.c - renderers of the catalog of GPUs and Macs (data/gpus.tsv,
 * devices/catalog.c): a table for a terminal, JSON for a program.
 */
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

enum {
    WIDTH = 80,   /* the table's lines fit a terminal of this width */
    ID_W = 20,    /* the id column at most: a longer id pushes its row right */
};

static const char *kind_name(ggfit_backend kind)
{
    const char *k = ggfit_backend_name(kind);
    return k ? k : "?";
}

/* One row: the id padded to id_w, then the figures, then the name, cut with
 * "..." where the line would pass WIDTH (the JSON has it whole). */
static void row_text(ggfit_sb *sb, const ggfit_catalog_entry *e, int id_w)
{
    char head[128];
    int n = snprintf(head, sizeof head, "%-*s  %-6s %5.1f %4.0f  ", id_w, e->id,
                     kind_name(e->kind), (double)e->memory / (GGFIT_MiB * 1024.0),
                     e->bandwidth_gbs);
    size_t room = n > 0 && n < WIDTH - 3 ? (size_t)(WIDTH - n) : 3, len = strlen(e->name);
    if (len <= room)
        ggfit__sb_printf(sb, "%s%s\n", head, e->name);
    else
        ggfit__sb_printf(sb, "%s%.*s...\n", head, (int)(room - 3), e->name);
}

char *ggfit_catalog_text(const ggfit_catalog_entry *const *rows, size_t n)
{
    ggfit_sb sb = {0};
    size_t id_w = 2;
    for (size_t i = 0; i < n; i++)
        if (strlen(rows[i]->id) > id_w)
            id_w = strlen(rows[i]->id);
    if (id_w > ID_W)
        id_w = ID_W;
    ggfit__sb_printf(&sb, "%-*s  %-6s %5s %4s  %s\n", (int)id_w, "id", "kind", "GiB", "GB/s",
                     "name");
    for (size_t i = 0; i < n; i++)
        row_text(&sb, rows[i], (int)id_w);
    ggfit__sb_printf(&sb, "%zu of %zu devices (data/gpus.tsv); GiB: the memory llama.cpp may "
                     "use,\na Mac's the Metal working set of its unified memory; --gpu takes "
                     "the id\n", n, ggfit_catalog_count());
    return ggfit__text_take(&sb);
}

char *ggfit_catalog_json(const ggfit_catalog_entry *const *rows, size_t n)
{
    char *out = NULL;
    json_t *root = json_object(), *arr = json_array();
    if (!root || !arr)
        goto done;
    for (size_t i = 0; i < n; i++) {
        const ggfit_catalog_entry *e = rows[i];
        json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:f, s:s}", "id", e->id, "name",
                              e->name, "backend", kind_name(e->kind), "memory",
                              (json_int_t)e->memory, "system_memory",
                              (json_int_t)e->system_memory, "bandwidth_gbs", e->bandwidth_gbs,
                              "source", e->source);
        if (!j || json_array_append_new(arr, j))
            goto done;
    }
    if (json_object_set(root, "devices", arr))
        goto done;
    out = ggfit__json_doc(root, "catalog", JSON_INDENT(2));
    root = NULL;
done:
    json_decref(arr);
    json_decref(root);
    return out;
}
