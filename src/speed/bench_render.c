/*
 * bench_render.c - ggfit bench's answer in words and as JSON: its speed and
 * the plan's own verdict (render/plan.c's words), or a llama-bench line's
 * tests, one row each, and the verdict of the test that decides the run.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

static const char *fits_word(int exit_status)
{
    return exit_status == 0 ? "yes" : exit_status == 3 ? "host" : "no";
}

/* ---- text ----------------------------------------------------------------- */

/* ggfit bench's own: the speed, then the plan's verdict line. */
static void own_text(ggfit_sb *sb, const ggfit_bench_result *b)
{
    const ggfit_plan *pl = &b->plan;
    const ggfit_bench_test *t = &b->tests[0];
    if (b->n_tests > 1) {
        /* -d with a list: a row per depth, then the first one's legs */
        const ggfit_speed *s0 = &t->speed;
        bool par = s0->n_parallel > 1;
        char pp[24], tg[24];
        snprintf(pp, sizeof pp, "pp%u t/s", s0->n_prompt);
        snprintf(tg, sizeof tg, "tg%u t/s", s0->n_gen);
        ggfit__sb_printf(sb, "predicted llama-bench speed at each depth (tokens already in the "
                             "cache)%s\n",
                         par ? "; generation: each of the -np sequences decoding at once, and "
                               "all of them"
                             : "");
        ggfit__sb_printf(sb, "  %8s %12s %12s%s\n", "depth", pp, tg, par ? "       in all" : "");
        for (uint32_t k = 0; k < b->n_tests; k++) {
            const ggfit_speed *s = &b->tests[k].speed;
            ggfit__sb_printf(sb, "  %8u %12.1f %12.2f", s->depth, s->pp_tps, s->tg_tps);
            if (par)
                ggfit__sb_printf(sb, " %12.2f", s->tg_tps_total);
            ggfit__sb_printf(sb, "\n");
        }
        ggfit__sb_printf(sb, "at depth %u:\n", s0->depth);
    }
    char *speed = ggfit_speed_text(&t->speed);
    if (!speed) {
        sb->oom = true;
        return;
    }
    ggfit__sb_printf(sb, "%s", speed);
    ggfit_free(speed);
    char why[320];
    ggfit__sb_printf(sb, "verdict: %s\n", ggfit_verdict_summary(&t->verdict, why, sizeof why));
    ggfit__sb_printf(sb, "  the plan at -c %u (without -c: -p + -n + -d, llama-bench's "
                         "context)%s\n",
                     t->n_ctx, pl->has_alternative ? "; llama.cpp's own fit left the host "
                                                     "short, and this context fits"
                                                   : "");
    if (t->exit_status != 0)
        ggfit__sb_printf(sb, "  the speed above is %s\n",
                         ggfit__speed_whose(pl)[0] == 'f' ? "of the flags as given, were they "
                                                            "to fit"
                                                          : "of llama.cpp's fit, were it to fit");
    ggfit__changes_text(sb, pl);
}

/* A llama-bench line: a row per test, then the deciding plan's verdict. */
/* A line's notes: "ignored (...): -r -t", "not counted yet (...): -nopo";
 * within the 512 bytes they always had. */
static void line_notes(const ggfit_bench_result *b, char *out, size_t cap)
{
    size_t k = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < b->n_ignored && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s %s",
                              i ? "" : "ignored (no effect on memory or on the predicted t/s):",
                              b->ignored[i]);
    if (b->n_ignored && k < cap)
        k += (size_t)snprintf(out + k, cap - k, "\n");
    for (uint32_t i = 0; i < b->n_not_counted && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s %s",
                              i ? "" : "not counted (ggfit plans llama-bench's default for "
                                       "them):", b->not_counted[i]);
    if (b->n_not_counted && k < cap)
        snprintf(out + k, cap - k, "\n");
}

static void line_text(ggfit_sb *sb, const ggfit_bench_result *b)
{
    const ggfit_plan *pl = &b->plan;
    const ggfit_verdict *v = ggfit__plan_verdict(pl);
    bool flags = false;
    for (size_t i = 0; i < b->n_tests; i++)
        flags |= b->tests[i].flags[0] != '\0';
    ggfit__sb_printf(sb, "llama-bench's tests, each at the context llama-bench creates for it "
                         "(n_prompt + n_gen + n_depth), %s; %d repetition%s each; memory "
                         "[MiB] per pool\n",
                     b->fitted ? "fitted as llama-bench fits with -fitt or -fitc"
                               : "the flags as given (llama-bench fits only with -fitt or -fitc)",
                     b->reps, b->reps == 1 ? "" : "s");
    /* within 80 columns: the pools' columns as wide as their names, the
     * flags beside the row where they fit, else on the line under it */
    int w = 4, pw[GGFIT_MAX_POOLS], width;
    for (size_t i = 0; i < b->n_tests; i++) {
        int n = (int)strlen(b->tests[i].name);
        w = n > w ? (n < 20 ? n : 20) : w;
    }
    width = 2 + w + 8;
    for (uint32_t k = 0; k < v->n_pools; k++) {
        int n = (int)strlen(v->pools[k].name);
        pw[k] = n < 6 ? 6 : n > 14 ? 14 : n;
        width += pw[k] + 1;
    }
    width += 2 + 4 + 9;
    ggfit__sb_printf(sb, "  %-*s %7s", w, "test", "n_ctx");
    for (uint32_t k = 0; k < v->n_pools; k++)
        ggfit__sb_printf(sb, " %*.*s", pw[k], pw[k], v->pools[k].name);
    ggfit__sb_printf(sb, "  %-4s %8s%s\n", "fits", "t/s", flags ? "  flags" : "");
    for (size_t i = 0; i < b->n_tests; i++) {
        const ggfit_bench_test *t = &b->tests[i];
        bool under = ggfit__text_cols() &&
                     width + 2 + (int)strlen(t->flags) > (int)ggfit__text_cols();
        ggfit__sb_printf(sb, "  %-*s %7u", w, t->name, t->n_ctx);
        for (uint32_t k = 0; k < v->n_pools; k++)
            ggfit__sb_printf(sb, " %*.0f", pw[k], k < t->n_pools ? t->used[k] / GGFIT_MiB : 0.0);
        ggfit__sb_printf(sb, "  %-4s %8.2f%s%s\n", fits_word(t->exit_status), t->tps,
                         t->flags[0] ? (under ? "\n    " : "  ") : "", t->flags);
    }
    const ggfit_bench_test *d = &b->tests[b->decides];
    ggfit__sb_printf(sb, "decided by %s%s%s (n_ctx %u): %s\n", d->name, d->flags[0] ? ", " : "",
                     d->flags, d->n_ctx,
                     d->exit_status == 0   ? "every test fits, this one at the largest context"
                     : d->exit_status == 3 ? "of the tests system memory does not hold, the "
                                             "largest context"
                                           : "of the tests that do not fit, the largest context");
    if (d->state_bytes)
        ggfit__sb_printf(sb, "  its Host use holds %.0f MiB of state at depth %u, which "
                             "llama-bench keeps for its repetitions\n",
                         d->state_bytes / GGFIT_MiB, d->depth);
    ggfit__verdict_text(sb, v, pl);
    if (d->exit_status != 0)
        ggfit__sb_printf(sb, "  the t/s of a test that does not fit is its own were it to "
                             "fit\n");
    ggfit__changes_text(sb, pl);
    char notes[512];
    line_notes(b, notes, sizeof notes);
    for (const char *p = notes; *p;) {
        size_t n = strcspn(p, "\n");
        ggfit__sb_printf(sb, "note: %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

char *ggfit_bench_text(const ggfit_bench_result *b)
{
    ggfit_sb sb = { 0 };
    char version[256];
    ggfit__sb_printf(&sb, "for llama.cpp %s\n",
                     ggfit_llama_version_str(&b->plan.llama, version, sizeof version));
    if (b->line)
        line_text(&sb, b);
    else
        own_text(&sb, b);
    return ggfit__text_take(&sb);
}

/* ---- JSON ----------------------------------------------------------------- */

static json_t *test_json(const ggfit_bench_result *b, const ggfit_bench_test *t)
{
    const ggfit_verdict *v = &b->plan.verdict;
    json_t *used = json_object();
    for (uint32_t k = 0; used && k < t->n_pools && k < v->n_pools; k++)
        if (json_object_set_new(used, v->pools[k].name, json_integer((json_int_t)t->used[k]))) {
            json_decref(used);
            used = NULL;
        }
    static const char *const ids[] = { "fits", "no_fit", "host_short" };
    char why[320];
    ggfit_verdict_summary(&t->verdict, why, sizeof why);
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:s, s:f, s:b, s:s, s:i, s:s, s:o, s:I, "
                     "s:o}",
                     "test", t->name, "n_prompt", (int)t->n_prompt, "n_gen", (int)t->n_gen,
                     "n_depth", (int)t->depth, "n_ctx", (int)t->n_ctx, "instance",
                     (int)t->instance, "flags", t->flags, "tps", t->tps, "fits",
                     t->exit_status == 0, "status", ids[t->status % 3], "exit_status",
                     t->exit_status, "verdict", why, "used", used ? used : json_null(),
                     "state_bytes", (json_int_t)t->state_bytes, "speed",
                     ggfit__json_body(ggfit_speed_json(&t->speed)));
}

char *ggfit_bench_json(const ggfit_bench_result *b)
{
    const ggfit_plan *pl = &b->plan;
    const ggfit_verdict *v = ggfit__plan_verdict(pl);
    json_t *root;
    char *out = NULL;
    if (!b->line) {
        /* the speed's own fields, as before, and the plan's verdict */
        const ggfit_bench_test *t = &b->tests[0];
        root = ggfit__json_body(ggfit_speed_json(&t->speed));
        if (!root || json_object_set_new(root, "n_ctx", json_integer(t->n_ctx)) ||
            json_object_set_new(root, "of", json_string(ggfit__speed_whose(pl))) ||
            json_object_set_new(root, "verdict", ggfit__verdict_json(v)) ||
            json_object_set_new(root, "exit_status", json_integer(b->exit_status)))
            goto done;
        /* -d with a list: each depth's figures */
        json_t *rows = b->n_tests > 1 ? json_array() : NULL;
        for (size_t i = 0; rows && i < b->n_tests; i++) {
            const ggfit_speed *s = &b->tests[i].speed;
            if (json_array_append_new(rows, json_pack("{s:i, s:f, s:f, s:f}", "depth",
                                                      (int)s->depth, "pp_tps", s->pp_tps,
                                                      "tg_tps", s->tg_tps, "tg_tps_total",
                                                      s->tg_tps_total)))
                break;
        }
        if (b->n_tests > 1 && json_object_set_new(root, "depths", rows ? rows : json_null()))
            goto done;
    } else {
        char notes[512];
        line_notes(b, notes, sizeof notes);
        json_t *tests = json_array();
        root = json_pack("{s:b, s:i, s:b, s:o}", "llama_bench", 1, "reps", (int)b->reps,
                         "fitted", b->fitted, "tests", tests ? tests : json_null());
        for (size_t i = 0; root && tests && i < b->n_tests; i++)
            if (json_array_append_new(tests, test_json(b, &b->tests[i])))
                goto done;
        if (!root || !tests ||
            json_object_set_new(root, "decides", json_integer((json_int_t)b->decides)) ||
            json_object_set_new(root, "plan", ggfit__plan_tree(pl)) ||
            json_object_set_new(root, "notes", ggfit__json_lines(notes)) ||
            json_object_set_new(root, "exit_status", json_integer(b->exit_status)))
            goto done;
    }
    if (json_object_set_new(root, "llama", ggfit__llama_json(&pl->llama)))
        goto done;
    out = ggfit__json_doc(json_incref(root), "bench", GGFIT__JSON_FLAGS);
done:
    json_decref(root);
    return out;
}
