/*
 * bench.c - `ggfit bench` from a request: the plan ggfit makes for it (or
 * the flags as given), projected for its placement, then the speed model
 * (speed.c) on that placement, beside the plan's own verdict; and a pasted
 * llama-bench line, each of its tests planned at the context llama-bench
 * creates for it. Kept apart from speed.c, which the plans themselves call
 * (request.c), so that the model does not call back up into the request.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/bench_args.h"
#include "common/params.h"
#include "plan/plan.h"
#include "remote/remote.h"
#include "render/render.h"
#include "speed/speed.h"

/* A test's verdict and memory, from its plan. */
static void judged(ggfit_bench_test *t, const ggfit_plan *pl)
{
    const ggfit_verdict *v = ggfit__plan_verdict(pl);
    t->exit_status = ggfit_plan_exit_status(pl);
    t->status = v->status;
    t->verdict = *v;
    t->n_pools = v->n_pools;
    for (uint32_t i = 0; i < v->n_pools && i < GGFIT_MAX_POOLS; i++)
        t->used[i] = v->pools[i].used;
    t->n_ctx = pl->has_alternative ? pl->alternative.projection.n_ctx
               : pl->asked.set_n_ctx ? pl->asked.n_ctx
                                     : pl->projection.n_ctx;
}

void ggfit_bench_result_free(ggfit_bench_result *b)
{
    if (b)
        ggfit_plan_free(&b->plan);
}

ggfit_status ggfit_bench(ggfit_request *r, const ggfit_speed_options *o, ggfit_bench_result *out,
                         char **err)
{
    if (err)
        *err = NULL;
    if (!r || !o || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "bench: missing argument");
    if (!r->model)
        return ggfit__fail(err, GGFIT_EINVAL, "bench: -m FILE is needed");
    if (o->n_depths > GGFIT_BENCH_MAX_DEPTHS)
        return ggfit__fail(err, GGFIT_EINVAL, "bench: more than %d depths",
                           GGFIT_BENCH_MAX_DEPTHS);
    /* the fields, not the 64 tests' room: a test per depth is used */
    uint32_t n = o->n_depths ? o->n_depths : 1;
    memset(out, 0, offsetof(ggfit_bench_result, tests) + n * sizeof out->tests[0]);
    out->n_tests = n;
    out->decides = 0;
    ggfit_plan *plan = &out->plan;
    ggfit_status rc = ggfit_request_plan(r, plan, err);
    if (rc)
        return rc;
    const ggfit_params *p = ggfit__plan_chosen(plan);
    ggfit_model *m = NULL;
    ggfit_projection *pr = ggfit__calloc(1, sizeof *pr);
    if (!pr) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    rc = ggfit_is_url(r->model) ? ggfit_model_open_url(r->model, NULL, NULL, &m, err)
                                : ggfit_model_open(r->model, &m, err);
    /* -np N given: N sequences decoding at once, each one's speed and all
     * of theirs */
    ggfit_speed_options so = *o;
    if (!so.n_parallel && r->params.set_n_seq && p->n_seq > 1)
        so.n_parallel = p->n_seq;
    for (uint32_t k = 0; k < n && !rc; k++) {
        ggfit_bench_test *t = &out->tests[k];
        so.depth = o->n_depths ? o->depths[k] : o->depth;
        rc = ggfit__speed_of_params(m, p, plan->devices, plan->n_devices, &plan->host, &so, pr,
                                    &t->speed, err);
        if (rc)
            break;
        int len = snprintf(t->name, sizeof t->name, "pp%u+tg%u", o->n_prompt, o->n_gen);
        if (o->n_depths && len > 0 && (size_t)len < sizeof t->name)
            snprintf(t->name + len, sizeof t->name - (size_t)len, " @ d%u", so.depth);
        t->n_prompt = o->n_prompt;
        t->n_gen = o->n_gen;
        t->depth = so.depth;
        judged(t, plan);
    }
    if (rc)
        goto done;
    out->exit_status = out->tests[0].exit_status;
done:
    ggfit_free(pr);
    ggfit_model_free(m);
    if (rc)
        ggfit_plan_free(plan);
    return rc;
}

/* ---- a llama-bench line ----------------------------------------------------- */

/* Worse first: does not fit (1), then the host short (3), then fits (0). */
static int severity(int exit_status)
{
    return exit_status == 1 ? 2 : exit_status == 3 ? 1 : 0;
}

/* The request for one test: the instance's flags at the test's context, the
 * flags as given (llama-bench fits only with -fitt or -fitc, and then
 * chooses -ngl, -ts and the overrides itself, at that context, keeping
 * -fitt MiB free on every device; without them it keeps no margin). */
static void test_request(ggfit_request *w, const ggfit_request *r, const ggfit_params *p,
                         const ggfit__bench_inst *in, uint32_t n_ctx, uint64_t state)
{
    ggfit__params_copy(&w->params, p);
    w->params.n_ctx = n_ctx;
    w->params.set_n_ctx = true;
    w->fit = r->fit;
    w->print_memory = !in->fit;
    w->fit.check_only = false;
    w->fit.fit_around = false;
    w->fit.no_log = true;
    w->fit.extra_host = r->fit.extra_host + state;
    w->fit.n_margins = 1;
    if (!in->fit) {   /* no fit, no margin: llama-bench loads what it is given */
        w->fit.margin[0] = 0;
        return;
    }
    w->fit.margin[0] = in->fit_margin_mib << 20;
    if (in->fit_min_ctx)
        w->fit.n_ctx_min = in->fit_min_ctx;
    ggfit_params *q = &w->params;
    q->n_gpu_layers = GGFIT_NGL_AUTO;
    q->set_n_gpu_layers = false;
    memset(q->tensor_split, 0, sizeof q->tensor_split);
    q->n_tensor_split = 0;
    q->set_tensor_split = false;
    q->n_overrides = 0;
    q->cpu_moe = false;
    q->n_cpu_moe = 0;
    q->set_overrides = false;
}

/* What llama-bench's fit chose (-fitt, -fitc), after the instance's flags. */
static void fitted_flags(ggfit_bench_test *t, const ggfit_plan *pl)
{
    char *args = ggfit_plan_args(pl);
    size_t len = strlen(t->flags);
    if (args && len < sizeof t->flags)
        snprintf(t->flags + len, sizeof t->flags - len, " (fitted: %s)",
                 args[0] ? args : "nothing fits");
    ggfit_free(args);
}

/* The test's speed, llama-bench's t/s: its tokens over the prompt's time,
 * the generation's, or both (the generation after the prompt, deeper by
 * it). */
static ggfit_status test_speed(const ggfit_model *m, const ggfit_plan *pl,
                               const ggfit_speed_options *o, ggfit_bench_test *t,
                               ggfit_projection *pr, char **err)
{
    ggfit_speed_options so = *o;
    so.n_prompt = t->n_prompt;
    so.n_gen = t->n_prompt ? 0 : t->n_gen;
    so.depth = t->depth;
    const ggfit_params *p = ggfit__plan_chosen(pl);
    ggfit_status rc = ggfit__speed_of_params(m, p, pl->devices, pl->n_devices, &pl->host, &so,
                                             pr, &t->speed, err);
    if (rc)
        return rc;
    if (!t->n_gen) {
        t->tps = t->speed.pp_tps;
        return GGFIT_OK;
    }
    if (!t->n_prompt) {
        t->tps = t->speed.tg_tps;
        return GGFIT_OK;
    }
    ggfit_speed *tg = ggfit__malloc(sizeof *tg);
    if (!tg)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    so.n_prompt = 0;
    so.n_gen = t->n_gen;
    so.depth = t->depth + t->n_prompt;
    rc = ggfit__speed_of_params(m, p, pl->devices, pl->n_devices, &pl->host, &so, pr, tg, err);
    if (!rc) {
        double s = t->n_prompt / t->speed.pp_tps + t->n_gen / tg->tg_tps;
        t->tps = s > 0 ? (t->n_prompt + t->n_gen) / s : 0;
        t->speed.n_gen = t->n_gen;
        t->speed.tg_tps = tg->tg_tps;
        t->speed.tg_ms_per_token = tg->tg_ms_per_token;
    }
    ggfit_free(tg);
    return rc;
}

/* Plans every test of every instance on m and devs; keeps the deciding
 * plan in out->plan. w is the scratch request, vals the lists' values. */
static ggfit_status plan_tests(ggfit_request *r, ggfit_request *w, const ggfit_model *m,
                               const ggfit__bench_vals *vals, size_t n_inst,
                               const ggfit_speed_options *o, ggfit_bench_result *out,
                               ggfit_plan *pl, ggfit_projection *pr, ggfit_params *p,
                               char **err)
{
    ggfit__bench_test tests[GGFIT_BENCH_MAX_TESTS];
    size_t n_tests = ggfit__bench_tests(vals, tests, GGFIT_BENCH_MAX_TESTS);
    if (n_tests * n_inst > GGFIT_BENCH_MAX_TESTS)
        return ggfit__fail(err, GGFIT_EINVAL, "llama-bench: the line makes %zu tests, more than "
                           "the %d ggfit plans at a time", n_tests * n_inst,
                           GGFIT_BENCH_MAX_TESTS);
    if (!n_tests)
        return ggfit__fail(err, GGFIT_EINVAL, "llama-bench: no test to run (every -p, -n and "
                                              "-pg is 0)");
    bool have = false;
    ggfit_status rc = GGFIT_OK;
    for (size_t k = 0; k < n_inst && !rc; k++) {
        ggfit__bench_inst in;
        ggfit__params_init_head(p);
        p->cpu_features = r->params.cpu_features;   /* the machine's, from its probe */
        if ((rc = ggfit__bench_instance(vals, k, p, &in, err)))
            break;
        out->fitted |= in.fit;
        for (size_t j = 0; j < n_tests; j++) {
            ggfit_bench_test *t = &out->tests[out->n_tests++];
            memset(t, 0, sizeof *t);
            t->n_prompt = tests[j].n_prompt;
            t->n_gen = tests[j].n_gen;
            t->depth = in.depth;
            t->instance = (uint32_t)k;
            snprintf(t->flags, sizeof t->flags, "%s", in.flags);
            int len = t->n_gen == 0   ? snprintf(t->name, sizeof t->name, "pp%u", t->n_prompt)
                      : !t->n_prompt ? snprintf(t->name, sizeof t->name, "tg%u", t->n_gen)
                                     : snprintf(t->name, sizeof t->name, "pp%u+tg%u",
                                                t->n_prompt, t->n_gen);
            if (t->depth && len > 0 && (size_t)len < sizeof t->name)
                snprintf(t->name + len, sizeof t->name - (size_t)len, " @ d%u", t->depth);
            /* llama-bench keeps the state at the depth in system memory
             * (its cstate, for the next repetition) */
            t->state_bytes = t->depth ? ggfit__kv_bytes(m, p, t->depth) : 0;
            test_request(w, r, p, &in, t->n_prompt + t->n_gen + t->depth, t->state_bytes);
            ggfit__plan_zero(pl);
            memcpy(pl->devices, out->plan.devices, sizeof pl->devices);
            pl->n_devices = out->plan.n_devices;
            if ((rc = ggfit__plan_model(w, m, "", pl, err)))
                break;
            judged(t, pl);
            if (in.fit)
                fitted_flags(t, pl);
            if (!(rc = test_speed(m, pl, o, t, pr, err)) &&
                (!have || severity(t->exit_status) >
                              severity(out->tests[out->decides].exit_status) ||
                 (severity(t->exit_status) == severity(out->tests[out->decides].exit_status) &&
                  t->n_ctx > out->tests[out->decides].n_ctx))) {
                /* the deciding plan so far: kept, the one before freed */
                if (have)
                    ggfit_plan_free(&out->plan);
                memcpy(&out->plan, pl, sizeof *pl);
                out->decides = out->n_tests - 1;
                have = true;
            } else {
                ggfit_plan_free(pl);
            }
            if (rc)
                break;
        }
    }
    if (rc && have)
        ggfit_plan_free(&out->plan);
    if (rc)
        return rc;
    out->exit_status = out->tests[out->decides].exit_status;
    /* the context is the test's own in llama-bench, no flag: a change of
     * -c is none a line can make */
    size_t kept = 0;
    for (size_t c = 0; c < out->plan.n_changes; c++) {
        const char *f = out->plan.changes[c].flags;
        if (strncmp(f, "-c ", 3) && !strstr(f, " -c "))
            memmove(&out->plan.changes[kept++], &out->plan.changes[c], sizeof out->plan.changes[c]);
    }
    out->plan.n_changes = kept;
    return GGFIT_OK;
}

ggfit_status ggfit_bench_line(ggfit_request *r, const ggfit_bench_args *a,
                              const ggfit_speed_options *o, ggfit_bench_result *out, char **err)
{
    if (err)
        *err = NULL;
    if (!r || !a || !o || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_bench_line: NULL argument");
    memset(out, 0, offsetof(ggfit_bench_result, tests));
    memset(&out->plan, 0, offsetof(ggfit_plan, fit));
    out->decides = out->n_tests = 0;
    out->exit_status = 0;
    out->line = true;
    out->reps = a->reps;
    out->n_ignored = a->n_ignored;
    memcpy(out->ignored, a->ignored, a->n_ignored * sizeof a->ignored[0]);
    out->n_not_counted = a->n_not_counted;
    memcpy(out->not_counted, a->not_counted, a->n_not_counted * sizeof a->not_counted[0]);
    if (!r->model && !r->hf_repo && !r->model_url)
        return ggfit__fail(err, GGFIT_EINVAL, "llama-bench: -m FILE is needed");
    ggfit__bench_vals *vals = ggfit__calloc(GGFIT_BENCH_LISTS, sizeof *vals);
    ggfit_request *w = ggfit__malloc(sizeof *w);
    ggfit_plan *pl = ggfit__malloc(sizeof *pl);
    ggfit_projection *pr = ggfit__calloc(1, sizeof *pr);
    ggfit_params *p = ggfit__malloc(sizeof *p);
    ggfit_model *m = NULL;
    char mmproj[512] = "";
    size_t n_inst = 0;
    ggfit_status rc = vals && w && pl && pr && p ? GGFIT_OK
                                                 : ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    /* the lists before the devices, so that a bad value is told first */
    if (!rc)
        rc = ggfit__bench_lists(a, vals, &n_inst, err);
    if (!rc)
        rc = ggfit_request_devices(r, out->plan.devices, GGFIT_MAX_DEVICES, &out->plan.n_devices,
                                   err);
    if (!rc)
        rc = ggfit__request_model(r, &m, mmproj, sizeof mmproj, err);
    if (!rc) {
        memcpy(w, r, sizeof *w);
        w->program = GGFIT_FOR_BENCH;
        rc = plan_tests(r, w, m, vals, n_inst, o, out, pl, pr, p, err);
    }
    ggfit_model_free(m);
    ggfit_free(vals);
    ggfit_free(w);
    ggfit_free(pl);
    ggfit_free(pr);
    ggfit_free(p);
    return rc;
}
