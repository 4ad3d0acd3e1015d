/*
 * quant_table.c - renderers of a "which quant?" list (plan/quants.c):
 * one row per model, best first, in words and as JSON.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

static const char *const rank_ids[] = { "fits", "fits_less_context", "fits_part_in_ram",
                                        "host_short", "no_fit", "error" };

static const char rule[] =
    "best first: fits with every layer and expert on the GPUs (at the context asked, or "
    "the smaller one llama.cpp's fit chooses when -c is not given), the largest file first "
    "(the best quality that fits); then fits with part in system RAM, the fastest predicted "
    "generation (tg t/s) first; then host memory "
    "short, then does not fit, each the smallest file first (the nearest to fitting); "
    "unreadable last";

static double gib(uint64_t b)
{
    return (double)b / (1024.0 * GGFIT_MiB);
}

/* The machine planned for: the first plan's devices and host. */
static const ggfit_plan *first_plan(const ggfit_quant_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->quants[i].plan)
            return l->quants[i].plan;
    return NULL;
}

/* A model by its file name, not its path. */
static const char *file_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Whether name says tag, in either case ("qwen3-14b-f16.gguf", F16). */
static bool says(const char *name, const char *tag)
{
    size_t n = strlen(tag);
    for (; *name; name++) {
        size_t i = 0;
        while (i < n && name[i] && tolower((unsigned char)name[i]) == tolower((unsigned char)tag[i]))
            i++;
        if (i == n)
            return true;
    }
    return false;
}

/* "-ngl": n/blocks+1, or "-" with no GPU. */
static void ngl_text(const ggfit_quant *q, char *buf, size_t n)
{
    if (!q->plan || !q->plan->n_devices)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%d/%u", q->n_gpu_layers, q->n_layer + 1);
}

static void experts_text(const ggfit_quant *q, char *buf, size_t n)
{
    if (!q->plan || !q->expert_blocks_in_ram)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%u blocks", q->expert_blocks_in_ram);
}

/* The predicted generation speed of a plan that fits, else "-". */
static void tg_text(const ggfit_quant *q, char *buf, size_t n)
{
    if (!q->plan || !q->plan->speed.ok || q->rank > GGFIT_RANK_PART_IN_RAM)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f", q->plan->speed.tg_tps);
}

/* How to run the best one: the plan's program with -hf REPO -hff FILE or
 * -m FILE, then its flags, a command for a shell (ggfit_plan_command). */
static void best_text(ggfit_sb *sb, const ggfit_quant_list *l)
{
    const ggfit_quant *q = l->n ? &l->quants[0] : NULL;
    if (!q || !q->plan || q->rank > GGFIT_RANK_PART_IN_RAM) {
        ggfit__sb_printf(sb, "best: none fits this machine\n");
        return;
    }
    const char *hf[] = { "-hf", l->repo, "-hff", q->name, NULL };
    const char *m[] = { "-m", q->name, NULL };
    char *line = ggfit__plan_command_model(q->plan, l->repo ? hf : m);
    if (!line) {
        sb->oom = true;
        return;
    }
    ggfit__sb_printf(sb, "best: %s\n  %s\n", l->repo ? q->name : file_name(q->name), line);
    ggfit_free(line);
}

char *ggfit_quant_list_text(const ggfit_quant_list *l)
{
    ggfit_sb sb = {0};
    const ggfit_plan *pl = first_plan(l);
    char version[256];
    ggfit__sb_printf(&sb, "for llama.cpp %s\n",
                     ggfit_llama_version_str(&l->llama, version, sizeof version));
    if (l->repo)
        ggfit__sb_printf(&sb, "%s at %.12s: %zu model%s", l->repo, l->commit ? l->commit : "",
                         l->n, l->n == 1 ? "" : "s");
    else
        ggfit__sb_printf(&sb, "%zu model%s", l->n, l->n == 1 ? "" : "s");
    if (pl) {
        ggfit__sb_printf(&sb, ", planned for ");
        if (!pl->n_devices)
            ggfit__sb_printf(&sb, "the CPU");
        for (size_t i = 0; i < pl->n_devices; i++)
            ggfit__sb_printf(&sb, "%s%s %.2f GiB (%.2f free)", i ? ", " : "",
                             pl->devices[i].name, gib(pl->devices[i].total),
                             gib(pl->devices[i].free));
        ggfit__sb_printf(&sb, "; system memory %.2f GiB free (%s)", gib(pl->host.free),
                         pl->host.source);
    }
    /* within 80 columns: models by file name, and where the longest does not
     * fit beside the numbers, each name on a line of its own above them */
    int w = 5;
    for (size_t i = 0; i < l->n; i++) {
        int k = (int)strlen(file_name(l->quants[i].name)) + (l->quants[i].n_shards > 1 ? 11 : 0);
        w = k > w ? (k < 72 ? k : 72) : w;
    }
    /* the quant where a name does not say it, the experts in RAM where any are */
    bool quant_col = false, exp_col = false;
    for (size_t i = 0; i < l->n; i++) {
        const ggfit_quant *q = &l->quants[i];
        quant_col |= !q->tag[0] || !says(file_name(q->name), q->tag);
        exp_col |= q->plan && q->expert_blocks_in_ram;
    }
    int rest = (quant_col ? 9 : 0) + 48 + (exp_col ? 16 : 0);
    bool own_line = ggfit__text_cols() && 5 + w + rest > (int)ggfit__text_cols();
    if (own_line)
        ggfit__sb_printf(&sb, "\n  %-2s %s\n    ", "#", "model");
    else
        ggfit__sb_printf(&sb, "\n  %-2s %-*s", "#", w, "model");
    if (quant_col)
        ggfit__sb_printf(&sb, " %-8s", "quant");
    ggfit__sb_printf(&sb, " %6s  %-18s %7s %6s %6s%s\n", "GiB", "verdict", "context", "-ngl",
                     "tg t/s", exp_col ? "  experts in RAM" : "");
    for (size_t i = 0; i < l->n; i++) {
        const ggfit_quant *q = &l->quants[i];
        char size[32], ctx[32], ngl[32], exp[32], name[96], tg[32];
        if (q->size)
            snprintf(size, sizeof size, "%.2f", gib(q->size));
        else
            snprintf(size, sizeof size, "-");
        if (q->plan)
            snprintf(ctx, sizeof ctx, "%u", q->n_ctx);
        else
            snprintf(ctx, sizeof ctx, "-");
        ngl_text(q, ngl, sizeof ngl);
        experts_text(q, exp, sizeof exp);
        tg_text(q, tg, sizeof tg);
        if (q->n_shards > 1)
            snprintf(name, sizeof name, "%.60s (%u files)", file_name(q->name),
                     q->n_shards % 100u);
        else
            snprintf(name, sizeof name, "%.72s", file_name(q->name));
        if (own_line)
            ggfit__sb_printf(&sb, "  %-2zu %s\n    ", i + 1, name);
        else
            ggfit__sb_printf(&sb, "  %-2zu %-*s", i + 1, w, name);
        if (quant_col)
            ggfit__sb_printf(&sb, " %-8s", q->tag[0] ? q->tag : "-");
        ggfit__sb_printf(&sb, " %6s  %-18s %7s %6s %6s%s%s\n", size,
                         ggfit_quant_rank_str(q->rank), ctx, ngl, tg, exp_col ? "  " : "",
                         exp_col ? exp : "");
        if (q->error)
            ggfit__sb_printf(&sb, "     %s\n", q->error);
        else if (q->n_ctx < q->n_ctx_asked)
            ggfit__sb_printf(&sb, "     context %u of the %u trained\n", q->n_ctx,
                             q->n_ctx_asked);
    }
    /* the table and the rule wrapped, the best one's command whole: a
     * line to paste */
    char *table = ggfit__text_take(&sb);
    if (!table)
        return NULL;
    ggfit__sb_printf(&sb, "%s", table);
    ggfit_free(table);
    best_text(&sb, l);
    ggfit_sb foot = {0};
    ggfit__sb_printf(&foot, "(%s)\n", rule);
    char *f = ggfit__text_take(&foot);
    if (!f)
        sb.oom = true;
    else
        ggfit__sb_printf(&sb, "%s", f);
    ggfit_free(f);
    return ggfit__sb_take(&sb);
}

char *ggfit_quant_list_json(const ggfit_quant_list *l)
{
    json_t *root = json_object(), *arr = json_array();
    char *out = NULL;
    if (!root || !arr) {
        json_decref(root);
        json_decref(arr);
        return NULL;
    }
    if (json_object_set_new(root, "llama", ggfit__llama_json(&l->llama)) ||
        json_object_set_new(root, "repo", l->repo ? json_string(l->repo) : json_null()) ||
        json_object_set_new(root, "commit", l->commit ? json_string(l->commit) : json_null()) ||
        json_object_set_new(root, "rule", json_string(rule)) ||
        json_object_set_new(root, "exit_status",
                            json_integer(ggfit_quant_list_exit_status(l))) ||
        json_object_set_new(root, "quants", arr))
        goto done;
    for (size_t i = 0; i < l->n; i++) {
        const ggfit_quant *q = &l->quants[i];
        json_t *plan = json_null(), *o;
        char *args = NULL;
        if (q->plan) {
            plan = ggfit__plan_tree(q->plan);
            args = ggfit_plan_args(q->plan);
            if (!plan || !args) {
                json_decref(plan);
                ggfit_free(args);
                goto done;
            }
        }
        o = json_pack("{s:I, s:s, s:o, s:o, s:I, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, "
                      "s:o, s:o, s:o}",
                      "rank", (json_int_t)(i + 1), "name", q->name,
                      "url", q->url ? json_string(q->url) : json_null(),
                      "quant", q->tag[0] ? json_string(q->tag) : json_null(),
                      "shards", (json_int_t)q->n_shards, "size", (json_int_t)q->size,
                      "status", rank_ids[q->rank], "verdict", ggfit_quant_rank_str(q->rank),
                      "n_ctx", (json_int_t)q->n_ctx, "n_ctx_asked", (json_int_t)q->n_ctx_asked,
                      "n_gpu_layers", (json_int_t)q->n_gpu_layers,
                      "n_layer", (json_int_t)q->n_layer,
                      "expert_blocks_in_ram", (json_int_t)q->expert_blocks_in_ram,
                      "args", args ? json_string(args) : json_null(),
                      "error", q->error ? json_string(q->error) : json_null(),
                      "plan", plan);
        ggfit_free(args);
        if (!o || json_array_append_new(arr, o))
            goto done;
    }
    out = ggfit__json_doc(json_incref(root), "quant_list", GGFIT__JSON_FLAGS);
done:
    json_decref(root);
    return out;
}
