/*
 * search_render.c - the fastest plan beside llama.cpp's, in words and as
 * JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

static const char *objective_name(ggfit_objective o)
{
    return o == GGFIT_OBJECTIVE_PP ? "prompt speed" : o == GGFIT_OBJECTIVE_TG
                                                          ? "generation speed"
                                                          : "the largest context";
}

static const ggfit_plan *chosen(const ggfit_fastest *f)
{
    return f->faster && f->has_best_plan ? &f->best : &f->own;
}

static void row(ggfit_sb *sb, const char *who, const ggfit_plan *pl, const ggfit_plan_speed *s)
{
    char *args = ggfit_plan_args(pl);
    if (!args) {
        sb->oom = true;
        return;
    }
    if (!s->ok) {
        ggfit__sb_printf(sb, "  %-12s does not fit\n", who);
    } else {
        uint32_t n_ctx = pl->has_alternative ? pl->alternative.projection.n_ctx
                                             : pl->projection.n_ctx;
        /* flags that do not fit beside the numbers go on the lines under them */
        bool under = strlen(args) > GGFIT_TEXT_COLS - 43;
        ggfit__sb_printf(sb, "  %-12s %8u %8.0f %8.1f%s%s\n", who, n_ctx, s->pp_tps, s->tg_tps,
                         under ? "\n    " : "  ", args);
    }
    ggfit_free(args);
}

/* How a candidate was placed, in words, within n bytes (96 always were):
 * "-c 4096 -ngl all -ncmoe 14", "llama.cpp's fit at -c 4096 -fa off". */
static const char *how_text(const ggfit_fastest_candidate *c, char *buf, size_t n)
{
    static const char *const tags[] = { "", " -fa off", " -ctk q8_0 -ctv q8_0" };
    const char *tag = tags[c->variant % 3];
    switch (c->placement) {
    case GGFIT_PLACED_BY_FIT:
        snprintf(buf, n, "llama.cpp's fit at -c %u%s", c->ctx_tried, tag);
        break;
    case GGFIT_PLACED_NGL:
        snprintf(buf, n, "-c %u -ngl %d%s", c->ctx_tried, c->layers, tag);
        break;
    case GGFIT_PLACED_TS: {
        char ts[64] = "";
        for (size_t d = 0, w = 0; d < c->n_split && w < sizeof ts; d++)
            w += (size_t)snprintf(ts + w, sizeof ts - w, "%s%.0f", d ? "," : "",
                                  c->tensor_split[d]);
        snprintf(buf, n, "-c %u -ngl all -ts %s%s", c->ctx_tried, ts, tag);
        break;
    }
    case GGFIT_PLACED_NCMOE:
        snprintf(buf, n, "-c %u -ngl all -ncmoe %d%s", c->ctx_tried, c->layers, tag);
        break;
    default:
        buf[0] = '\0';
    }
    return buf;
}

/* How the chosen plan was found: "" when none fits. */
static const char *best_text(const ggfit_fastest *f, char *buf, size_t n)
{
    if (!f->found)
        buf[0] = '\0';
    else if (f->best_own)
        snprintf(buf, n, "llama.cpp's plan");
    else
        how_text(&f->best_how, buf, n);
    return buf;
}

char *ggfit_fastest_text(const ggfit_fastest *f)
{
    char how[96];
    ggfit_sb sb = { 0 };
    const ggfit_plan_speed *os = &f->own_speed;
    char version[256];
    ggfit__sb_printf(&sb, "for llama.cpp %s\n",
                     ggfit_llama_version_str(&f->own.llama, version, sizeof version));
    ggfit__sb_printf(&sb, "objective: %s (llama-bench pp%u/tg%u at depth %u, predicted), "
                          "contexts of at least %u\n",
                     objective_name(f->objective), os->ok ? os->n_prompt : 512,
                     os->ok ? os->n_gen : 128, os->ok ? os->depth : 0, f->n_ctx_min);
    ggfit__sb_printf(&sb, "  %-12s %8s %8s %8s  %s\n", "plan", "context", "pp t/s", "tg t/s",
                     "flags");
    row(&sb, "llama.cpp's", &f->own, &f->own_speed);
    if (f->faster && f->has_best_plan)
        row(&sb, "fastest", &f->best, &f->best_speed);
    if (!f->found) {
        ggfit__sb_printf(&sb, "no plan tried fits this machine\n");
    } else if (!f->faster) {
        ggfit__sb_printf(&sb, "llama.cpp's plan is the fastest found (no other beats it by more "
                              "than 0.5%%)\n");
    } else {
        double a = f->objective == GGFIT_OBJECTIVE_PP ? os->pp_tps : os->tg_tps;
        double b = f->objective == GGFIT_OBJECTIVE_PP ? f->best_speed.pp_tps
                                                      : f->best_speed.tg_tps;
        ggfit__sb_printf(&sb, "fastest: %s, at the largest context that placement leaves room "
                              "for", best_text(f, how, sizeof how));
        if (os->ok && a > 0)
            ggfit__sb_printf(&sb, ": %.2fx llama.cpp's %s", b / a,
                             f->objective == GGFIT_OBJECTIVE_PP ? "pp" : "tg");
        ggfit__sb_printf(&sb, "\n");
    }
    /* system memory's figure, where a plan shown reads part of its weights there */
    const ggfit_plan_speed *hs = os->ok && os->host_used ? os
                                 : f->best_speed.ok && f->best_speed.host_used ? &f->best_speed
                                                                                : NULL;
    if (hs)
        ggfit__sb_printf(&sb, "host memory %.1f GB/s (%s)\n", hs->host_bw_gbs, hs->host_bw_from);
    ggfit__sb_printf(&sb, "plans tried (fits: the whole machine holds it):\n");
    ggfit__sb_printf(&sb, "  %8s %8s  %-4s  %s\n", "pp t/s", "tg t/s", "fits", "placement");
    for (size_t i = 0; i < f->n_candidates; i++) {
        const ggfit_fastest_candidate *c = &f->candidates[i];
        ggfit__sb_printf(&sb, "  %8.0f %8.1f  %-4s  %s\n", c->pp_tps, c->tg_tps,
                         c->fits ? "yes" : "no", how_text(c, how, sizeof how));
    }
    return ggfit__text_take(&sb);
}

static json_t *plan_json(const ggfit_plan *pl, const ggfit_plan_speed *s)
{
    char *args = ggfit_plan_args(pl);
    if (!args)
        return NULL;
    uint32_t n_ctx = pl->has_alternative ? pl->alternative.projection.n_ctx
                                         : pl->projection.n_ctx;
    json_t *o = json_pack("{s:s, s:i, s:b, s:o, s:o, s:o}", "args", args, "n_ctx", (int)n_ctx,
                          "fits", s->ok, "pp_tps", s->ok ? json_real(s->pp_tps) : json_null(),
                          "tg_tps", s->ok ? json_real(s->tg_tps) : json_null(),
                          "host_bandwidth",
                          s->ok && s->host_used ? json_pack("{s:f, s:s}", "gbs", s->host_bw_gbs,
                                                            "from", s->host_bw_from)
                                                : json_null());
    ggfit_free(args);
    return o;
}

char *ggfit_fastest_json(const ggfit_fastest *f)
{
    static const char *const ids[] = { "context", "speed", "pp" };
    char how[96];
    json_t *cands = json_array();
    json_t *root = json_pack("{s:s, s:i, s:b, s:b, s:s}", "objective", ids[f->objective],
                             "min_ctx", (int)f->n_ctx_min, "found", f->found, "faster",
                             f->faster, "how", best_text(f, how, sizeof how));
    char *out = NULL;
    if (!root || !cands || json_object_set_new(root, "llama", ggfit__llama_json(&f->own.llama)))
        goto done;
    for (size_t i = 0; i < f->n_candidates; i++) {
        const ggfit_fastest_candidate *c = &f->candidates[i];
        json_t *o = json_pack("{s:s, s:b, s:i, s:i, s:f, s:f}", "what",
                              how_text(c, how, sizeof how), "fits", c->fits, "n_ctx",
                              (int)c->n_ctx, "n_gpu_layers", (int)c->n_gpu_layers, "pp_tps",
                              c->pp_tps, "tg_tps", c->tg_tps);
        if (json_array_append_new(cands, o))
            goto done;
    }
    const ggfit_plan *best = chosen(f);
    int bad = json_object_set_new(root, "candidates", cands);
    cands = NULL;   /* the object holds it, or freed it */
    if (bad || json_object_set_new(root, "llama_cpp", plan_json(&f->own, &f->own_speed)) ||
        json_object_set_new(root, "fastest",
                            plan_json(best, f->faster ? &f->best_speed : &f->own_speed)))
        goto done;
    json_t *p = ggfit__plan_tree(best);
    if (!p || json_object_set_new(root, "plan", p))
        goto done;
    out = ggfit__json_doc(json_incref(root), "fastest", GGFIT__JSON_FLAGS);
done:
    json_decref(cands);
    json_decref(root);
    return out;
}
