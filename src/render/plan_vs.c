/*
 * plan_vs.c - one request planned for two llama.cpp versions, side by
 * side (--vs-version): what upgrading llama.cpp, or staying, changes in
 * the line each prints, the context, the layers, the bytes per device and
 * the verdict; and the changes between the two versions ggfit tracks.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "render/render.h"

static uint64_t self_of(const ggfit_mem *m)
{
    return m->model + m->context + m->compute;
}

/* The memory row of device name in pl (the Host for NULL), or NULL. */
static const ggfit_mem *row_of(const ggfit_plan *pl, const char *name)
{
    const ggfit_projection *p = &pl->projection;
    if (!name)
        return &p->host;
    for (uint32_t d = 0; d < p->n_devices; d++)
        if (!strcmp(pl->devices[p->device_of[d]].name, name))
            return &p->devices[d];
    return NULL;
}

/* The rows' names of both plans, a's first then b's new ones; NULL ends
 * at Host (the last). */
static size_t row_names(const ggfit_plan *a, const ggfit_plan *b, const char **names, size_t max)
{
    size_t n = 0;
    const ggfit_plan *both[2] = { a, b };
    for (int k = 0; k < 2; k++)
        for (uint32_t d = 0; d < both[k]->projection.n_devices && n + 1 < max; d++) {
            const char *nm = both[k]->devices[both[k]->projection.device_of[d]].name;
            bool seen = false;
            for (size_t i = 0; i < n && !seen; i++)
                seen = !strcmp(names[i], nm);
            if (!seen)
                names[n++] = nm;
        }
    names[n++] = NULL;   /* Host */
    return n;
}

static bool same_mem(const ggfit_mem *x, const ggfit_mem *y)
{
    return x && y && x->model == y->model && x->context == y->context &&
           x->compute == y->compute;
}

/* Calls fn for each change ggfit tracks between the plans' rule builds. */
static void changes_between(const ggfit_plan *a, const ggfit_plan *b,
                            void (*fn)(void *ctx, uint32_t build, const char *commit,
                                       const char *what),
                            void *ctx)
{
    uint32_t lo = a->llama.rules, hi = b->llama.rules;
    if (lo > hi) {
        uint32_t t = lo;
        lo = hi;
        hi = t;
    }
    uint32_t build;
    const char *commit, *what;
    for (size_t i = 0; ggfit_llama_change(i, &build, &commit, &what); i++)
        if (build > lo && build <= hi)
            fn(ctx, build, commit, what);
}

static void change_text(void *ctx, uint32_t build, const char *commit, const char *what)
{
    ggfit__sb_printf(ctx, "  b%u %s: %s\n", build, commit, what);
}

char *ggfit_plan_vs_text(const ggfit_plan *a, const ggfit_plan *b)
{
    ggfit_sb sb = {0};
    char va[256], vb[256], sa[320], sb2[320];
    char *la = ggfit_plan_args(a), *lb = ggfit_plan_args(b);
    if (!la || !lb) {
        ggfit_free(la);
        ggfit_free(lb);
        return NULL;
    }
    ggfit__sb_printf(&sb, "llama.cpp %s\n  against %s\n",
                     ggfit_llama_version_str(&a->llama, va, sizeof va),
                     ggfit_llama_version_str(&b->llama, vb, sizeof vb));
    char ha[16], hb[16];
    snprintf(ha, sizeof ha, "b%u", a->llama.rules);
    snprintf(hb, sizeof hb, "b%u", b->llama.rules);
    ggfit__sb_printf(&sb, "%-16s %-24s %s\n", "", ha, hb);
    ggfit__sb_printf(&sb, "%-16s %-24u %u\n", "context", a->projection.n_ctx, b->projection.n_ctx);
    ggfit__sb_printf(&sb, "%-16s %-24d %d\n", "GPU layers", a->projection.n_gpu_layers,
                     b->projection.n_gpu_layers);
    const char *names[GGFIT_MAX_DEVICES * 2 + 1];
    size_t n = row_names(a, b, names, sizeof names / sizeof names[0]);
    int n_differ = 0;
    for (size_t i = 0; i < n; i++) {
        const ggfit_mem *ma = row_of(a, names[i]), *mb = row_of(b, names[i]);
        char ca[32] = "-", cb[32] = "-", label[40];
        if (ma)
            snprintf(ca, sizeof ca, "%.0f MiB", ggfit__mib(self_of(ma)));
        if (mb)
            snprintf(cb, sizeof cb, "%.0f MiB", ggfit__mib(self_of(mb)));
        snprintf(label, sizeof label, "%s", names[i] ? names[i] : "Host");
        bool same = same_mem(ma, mb);
        n_differ += !same;
        ggfit__sb_printf(&sb, "%-16s %-24s %s%s\n", label, ca, cb, same ? "" : "  differs");
        if (!same && ma && mb)
            ggfit__sb_printf(&sb, "%-16s in %s: weights %+.0f, cache %+.0f, compute %+.0f MiB\n",
                             "", hb, ggfit__mib(mb->model) - ggfit__mib(ma->model),
                             ggfit__mib(mb->context) - ggfit__mib(ma->context),
                             ggfit__mib(mb->compute) - ggfit__mib(ma->compute));
    }
    bool same_line = !strcmp(la, lb);
    bool same_verdict = a->verdict.status == b->verdict.status;
    ggfit__sb_printf(&sb, "verdict %s: %s\n", ha,
                     ggfit_verdict_summary(&a->verdict, sa, sizeof sa));
    ggfit__sb_printf(&sb, "verdict %s: %s\n", hb,
                     ggfit_verdict_summary(&b->verdict, sb2, sizeof sb2));
    ggfit__sb_printf(&sb, "line %s: %s\n", ha, la[0] ? la : "(nothing fits)");
    ggfit__sb_printf(&sb, "line %s: %s\n", hb, lb[0] ? lb : "(nothing fits)");
    if (same_line && same_verdict && !n_differ && a->projection.n_ctx == b->projection.n_ctx)
        ggfit__sb_printf(&sb, "the same plan and memory with both\n");
    else {
        const char *what[4];
        size_t k = 0;
        if (!same_line)
            what[k++] = "the line";
        if (a->projection.n_ctx != b->projection.n_ctx)
            what[k++] = "the context";
        if (n_differ)
            what[k++] = "the memory";
        if (!same_verdict)
            what[k++] = "the verdict";
        ggfit__sb_printf(&sb, "differs:");
        for (size_t i = 0; i < k; i++)
            ggfit__sb_printf(&sb, "%s %s", i ? "," : "", what[i]);
        ggfit__sb_printf(&sb, "\n");
    }
    if (a->llama.rules != b->llama.rules) {
        ggfit__sb_printf(&sb, "changes between them that ggfit follows:\n");
        changes_between(a, b, change_text, &sb);
    }
    ggfit_free(la);
    ggfit_free(lb);
    return ggfit__text_take(&sb);
}

static void change_json(void *ctx, uint32_t build, const char *commit, const char *what)
{
    json_array_append_new(ctx, json_pack("{s:I, s:s, s:s}", "build", (json_int_t)build, "commit",
                                         commit, "what", what));
}

char *ggfit_plan_vs_json(const ggfit_plan *a, const ggfit_plan *b)
{
    char *out = NULL;
    json_t *root = NULL, *oa = ggfit__json_body(ggfit_plan_json(a));
    json_t *ob = ggfit__json_body(ggfit_plan_json(b));
    json_t *differs = json_array(), *changes = json_array();
    char *la = ggfit_plan_args(a), *lb = ggfit_plan_args(b);
    if (!oa || !ob || !differs || !changes || !la || !lb)
        goto done;
    const char *names[GGFIT_MAX_DEVICES * 2 + 1];
    size_t n = row_names(a, b, names, sizeof names / sizeof names[0]);
    if (strcmp(la, lb))
        json_array_append_new(differs, json_string("line"));
    if (a->projection.n_ctx != b->projection.n_ctx)
        json_array_append_new(differs, json_string("n_ctx"));
    for (size_t i = 0; i < n; i++)
        if (!same_mem(row_of(a, names[i]), row_of(b, names[i])))
            json_array_append_new(differs, json_string(names[i] ? names[i] : "Host"));
    if (a->verdict.status != b->verdict.status)
        json_array_append_new(differs, json_string("verdict"));
    changes_between(a, b, change_json, changes);
    root = json_pack("{s:o, s:o, s:o, s:o}", "a", oa, "b", ob, "differs", differs, "changes",
                     changes);
    oa = ob = differs = changes = NULL;
    if (root)
        out = ggfit__json_doc(json_incref(root), "plan_vs", GGFIT__JSON_FLAGS);
done:
    json_decref(root);
    json_decref(oa);
    json_decref(ob);
    json_decref(differs);
    json_decref(changes);
    ggfit_free(la);
    ggfit_free(lb);
    return out;
}
