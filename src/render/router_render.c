/*
 * router_render.c - a router's children (ggfit_router_plan) in words and as JSON:
 * each child's fit in the order asked, what it holds on each device and in
 * system memory, and where the set breaks.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

#define MIB(x) ((double)(x) / (1024.0 * 1024.0))

/* The pools of the first child planned: the columns; *first its child
 * (whose pools' free memory is less what it saw held). */
static const ggfit_verdict *columns(const ggfit_router *r, const ggfit_router_child **first)
{
    for (uint32_t k = 0; k < r->n_children; k++)
        if (r->children[k].plan) {
            *first = &r->children[k];
            return ggfit__plan_verdict(r->children[k].plan);
        }
    return NULL;
}

char *ggfit_router_text(const ggfit_router *r)
{
    ggfit_sb sb = { 0 };
    const ggfit_router_child *first = NULL;
    const ggfit_verdict *cols = columns(r, &first);
    if (r->swap)
        ggfit__sb_printf(&sb, "llama-swap: %u model%s from %s, each a llama-server started "
                              "with its cmd, its env's LLAMA_ARG_ variables under it\n",
                         r->n_models, r->n_models == 1 ? "" : "s", r->preset);
    else
        ggfit__sb_printf(&sb, "router: %u model%s from %s%s%s, each a llama-server child "
                              "with the preset's flags and the router's (--models-max %u%s)\n",
                         r->n_models, r->n_models == 1 ? "" : "s", r->preset,
                         r->preset[0] && r->models_dir[0] ? " and " : "", r->models_dir,
                         r->models_max, r->models_max ? "" : ": no limit");
    if (r->set && r->swap)
        ggfit__sb_printf(&sb, "planned as a set: each model's fit against its share of every "
                              "device, so that every set of models its groups let be resident "
                              "at once fits, in any order [MiB]\n");
    else if (r->set && r->resident < r->n_models)
        ggfit__sb_printf(&sb, "planned as a set: each model's fit against its share of every "
                              "device, so that any %u of them (--models-max) fit at once in "
                              "any order [MiB]\n", r->resident);
    else if (r->set)
        ggfit__sb_printf(&sb, "planned as a set: each model's fit against its share of every "
                              "device, so that all of them fit at once in any order [MiB]\n");
    else
        ggfit__sb_printf(&sb, "children in the order asked, each one's fit against the memory "
                              "the ones before it left [MiB]\n");
    ggfit__sb_printf(&sb, "  %2s  %-20s", "#", "model");
    for (uint32_t c = 0; cols && c < cols->n_pools; c++)
        if (cols->pools[c].kind != GGFIT_POOL_UNIFIED)
            ggfit__sb_printf(&sb, " %9s", cols->pools[c].name);
    ggfit__sb_printf(&sb, "  verdict\n");
    for (uint32_t k = 0; k < r->n_children; k++) {
        const ggfit_router_child *ch = &r->children[k];
        ggfit__sb_printf(&sb, "  %2u  %-20.60s", k + 1, ch->name);
        if (!ch->plan) {
            ggfit__sb_printf(&sb, "  cannot be planned: %s\n", ch->error);
            continue;
        }
        const ggfit_verdict *v = ggfit__plan_verdict(ch->plan);
        for (uint32_t c = 0; cols && c < cols->n_pools; c++)
            if (cols->pools[c].kind != GGFIT_POOL_UNIFIED)
                ggfit__sb_printf(&sb, " %9.0f", c < v->n_pools ? MIB(v->pools[c].used) : 0.0);
        char why[320];
        ggfit__sb_printf(&sb, "  %s\n", ggfit_verdict_status_str(v->status));
        if (r->set && ch->priority != 1.0)
            ggfit__sb_printf(&sb, "      priority %g: its part of what the needs leave is %g "
                                  "times a model's of priority 1\n", ch->priority,
                             ch->priority);
        if (ch->together)
            ggfit__sb_printf(&sb, "      started with the other load-on-startup models: its "
                                  "fit saw none of theirs\n");
        if (ch->evicted[0] && r->swap)
            ggfit__sb_printf(&sb, "      llama-swap stopped %.120s first (its group swaps, "
                                  "or is exclusive)\n", ch->evicted);
        else if (ch->evicted[0])
            ggfit__sb_printf(&sb, "      --models-max %u reached: the router stopped %.60s "
                                  "(asked for least recently) before starting it\n",
                             r->models_max, ch->evicted);
        if (ch->plan->has_draft && ch->plan->draft_unused)
            ggfit__sb_printf(&sb, "      its draft is loaded, then freed (no --spec-type runs "
                                  "it): what it holds after is less the draft's\n");
        char *args = ggfit_plan_args(ch->plan);
        ggfit__sb_printf(&sb, "      its fit: %s\n", args && args[0] ? args : "(no flags)");
        ggfit_free(args);
        if (v->status != GGFIT_VERDICT_FITS)
            ggfit__sb_printf(&sb, "      %s\n", ggfit_verdict_summary(v, why, sizeof why));
    }
    /* the most they hold at once, against what the machine has */
    if (cols) {
        ggfit__sb_printf(&sb, "%s:", r->set && (r->resident < r->n_models || r->swap)
                                         ? "the largest resident ones together"
                                         : "the most held at once");
        for (uint32_t c = 0; c < cols->n_pools; c++) {
            const ggfit_pool *q = &cols->pools[c];
            uint64_t held = q->kind == GGFIT_POOL_HOST ? r->held_host
                            : q->device >= 0 && q->device < GGFIT_MAX_DEVICES ? r->held[q->device]
                                                                              : 0;
            if (q->kind == GGFIT_POOL_UNIFIED)
                continue;
            /* the machine's free memory: what the first child saw, and
             * what it saw held */
            uint64_t had = q->free + (q->kind == GGFIT_POOL_HOST ? first->host_held
                                      : q->device >= 0 && q->device < GGFIT_MAX_DEVICES
                                          ? first->free_held[q->device]
                                          : 0);
            ggfit__sb_printf(&sb, " %s %.0f of %.0f MiB free%s%s", q->name, MIB(held),
                             MIB(had), held > had ? " (OVER)" : "",
                             c + 1 < cols->n_pools ? ";" : "");
        }
        ggfit__sb_printf(&sb, "\n");
        if (r->over)
            ggfit__sb_printf(&sb, "the children together need more than the machine has: each "
                                  "fit passed against the memory it saw, and a load or an "
                                  "allocation fails (or, in system memory, pages) once they "
                                  "all hold theirs\n");
    }
    if (r->set && r->max_fits < r->n_models && !r->swap)
        ggfit__sb_printf(&sb, "at their smallest, at most %u of the %u fit at once: run the "
                              "router with --models-max %u or less\n", r->max_fits,
                         r->n_models, r->max_fits);
    else if (r->set && r->resident < r->n_models && !r->swap)
        ggfit__sb_printf(&sb, "at their smallest, all %u fit at once: --models-max %u would "
                              "keep every one loaded\n", r->n_models, r->n_models);
    if (r->notes[0])
        ggfit__sb_printf(&sb, "note: %s\n", r->notes);
    return ggfit__text_take(&sb);
}

char *ggfit_router_json(const ggfit_router *r)
{
    char *out = NULL;
    json_t *kids = json_array();
    json_t *held = json_object();
    json_t *root = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:b, s:o, s:I, s:o}", "kind",
                             r->swap ? "llama-swap" : "llama-server router", "preset",
                             r->preset, "models_dir", r->models_dir, "n_models",
                             (int)r->n_models, "models_max", (int)r->models_max,
                             "load_on_startup", (int)r->n_startup, "over", r->over,
                             "held_at_once", held ? held : json_null(), "held_host_at_once",
                             (json_int_t)r->held_host, "children", kids ? kids : json_null());
    const ggfit_router_child *first = NULL;
    const ggfit_verdict *cols = columns(r, &first);
    for (uint32_t c = 0; root && held && cols && c < cols->n_pools; c++) {
        const ggfit_pool *q = &cols->pools[c];
        if (q->kind == GGFIT_POOL_DEVICE && q->device >= 0 && q->device < GGFIT_MAX_DEVICES &&
            json_object_set_new(held, q->name, json_integer((json_int_t)r->held[q->device])))
            goto done;
    }
    if (root && r->set &&
        (json_object_set_new(root, "resident", json_integer(r->resident)) ||
         json_object_set_new(root, "max_fits", json_integer(r->max_fits))))
        goto done;
    if (root && r->notes[0] && json_object_set_new(root, "notes", json_string(r->notes)))
        goto done;
    for (uint32_t k = 0; root && kids && k < r->n_children; k++) {
        const ggfit_router_child *ch = &r->children[k];
        json_t *c = json_pack("{s:s, s:s, s:b, s:b}", "name", ch->name, "preset_args",
                              ch->args, "load_on_startup", ch->load_on_startup,
                              "started_together", ch->together);
        if (!c || json_array_append_new(kids, c))
            goto done;
        if (ch->evicted[0] && json_object_set_new(c, "evicted", json_string(ch->evicted)))
            goto done;
        if (r->set && json_object_set_new(c, "priority", json_real(ch->priority)))
            goto done;
        json_t *hold = json_object();
        for (uint32_t p = 0; hold && cols && p < cols->n_pools; p++) {
            const ggfit_pool *q = &cols->pools[p];
            if (q->kind == GGFIT_POOL_DEVICE && q->device >= 0 &&
                q->device < GGFIT_MAX_DEVICES &&
                json_object_set_new(hold, q->name, json_integer((json_int_t)ch->hold[q->device])))
                break;
        }
        if (!hold || json_object_set_new(hold, "Host", json_integer((json_int_t)ch->hold_host)) ||
            json_object_set_new(c, "holds", hold))
            goto done;
        if (!ch->plan) {
            if (json_object_set_new(c, "error", json_string(ch->error)))
                goto done;
            continue;
        }
        json_t *plan = ggfit__plan_tree(ch->plan);
        if (!plan || json_object_set_new(c, "plan", plan))
            goto done;
    }
    if (root)
        out = ggfit__json_doc(json_incref(root), r->swap ? "llama-swap" : "llama-server router",
                              GGFIT__JSON_FLAGS);
done:
    json_decref(root);
    return out;
}
