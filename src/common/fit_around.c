/*
 * fit_around.c - --fit-around: where llama.cpp's fit (fit.c) aborts
 * because the user set -ngl, -ts, -ot, -cmoe or -ncmoe, the set flags kept
 * and the unset ones fitted around them, with llama.cpp's own steps where
 * they apply; and ggfit_fit, llama.cpp's fit with this continuation. Not
 * llama.cpp's: ggfit's own, above its port.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "common/fitter.h"
#include "common/params.h"

/* What --fit-around keeps across the fits it runs (the hooks' ctx). */
typedef struct around {
    int32_t ngl_user;                 /* -ngl as given, written when all are placed */
    ngl_t last[GGFIT_MAX_DEVICES];    /* the layers the last fit ended with */
    int last_overflow[GGFIT_MAX_DEVICES];
} around;

/* Blocks whose experts -cmoe/-ncmoe already put in system memory are left
 * to those flags. */
static bool block_kept(const ggfit_params *p, uint32_t il)
{
    return p->cpu_moe || il < p->n_cpu_moe;
}

/* With -ngl set, every layer placed is -ngl as given (99, all, or a
 * model's MTP blocks too, which the fit's count leaves out). */
static void flags_done(const fitter *f, ggfit_params *p)
{
    const around *a = f->hooks.ctx;
    if (a->ngl_user != GGFIT_NGL_AUTO && (uint32_t)p->n_gpu_layers == f->hooks.n_place)
        p->n_gpu_layers = a->ngl_user;
}

static void keep_last(around *a, size_t nd, const ngl_t *ngl, const int *overflow)
{
    memcpy(a->last, ngl, nd * sizeof *ngl);
    memcpy(a->last_overflow, overflow, nd * sizeof *overflow);
}

static void layers_done(fitter *f, const ngl_t *ngl, const int *overflow)
{
    keep_last(f->hooks.ctx, f->nd, ngl, overflow);
}

static bool all_fit(const fitter *f, const int64_t *mem, const int64_t *target)
{
    for (size_t d = 0; d < f->nd; d++)
        if (mem[d] > target[d])
            return false;
    return true;
}

/* Layers per device for -ngl n with the user's -ts, as llama.cpp splits
 * them (project/split.c: each offloaded layer goes to the device whose share
 * of the cumulative proportions it falls in). */
static void ts_counts(const fitter *f, uint32_t n, ngl_t *ngl)
{
    const ggfit_hparams *hp = ggfit_model_hparams(f->m);
    float split[GGFIT_MAX_DEVICES], cum[GGFIT_MAX_DEVICES], sum = 0, acc = 0;
    for (size_t d = 0; d < f->nd; d++) {
        split[d] = f->p.tensor_split[d] > 0 ? f->p.tensor_split[d] : 0.0f;
        sum += split[d];
    }
    for (size_t d = 0; d < f->nd; d++) {
        acc += split[d];
        cum[d] = sum > 0 ? acc / sum : (float)(d + 1) / (float)f->nd;
        ngl[d] = (ngl_t){ .overflow = LF_MOE };
    }
    uint32_t total = hp->n_layer + 1, start = total - n;
    for (uint32_t il = start; il < total; il++) {
        float x = (float)(il - start) / (float)n;
        size_t d = 0;
        while (d + 1 < f->nd && !(x < cum[d]))
            d++;
        ngl[d].n_layer++;
    }
}

static void ts_text(const ggfit_params *p, size_t nd, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t d = 0; d < nd && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%g", d ? "," : "", p->tensor_split[d]);
}

/* The fewest partial layers (experts in system memory) on device d that
 * keep it within its target, and for the first of them the largest part
 * that stays (up and gate, or up). *ok false when even all do not. */
static ggfit_status ts_experts(fitter *f, size_t d, ngl_t *ngl, const int *overflow,
                               const int64_t *target, bool *ok)
{
    int64_t mem[GGFIT_MAX_DEVICES];
    ggfit_status rc;
    uint32_t good = ngl[d].n_layer, bad;
    ngl[d].n_part = 0;
    ngl[d].overflow = LF_MOE;
    if ((rc = ggfit__fit_memory_for(f, ngl, overflow, mem)))
        return rc;
    *ok = true;
    if (mem[d] <= target[d])
        return GGFIT_OK;
    bad = 0;
    while (good - bad > 1) {
        uint32_t mid = bad + (good - bad) / 2;
        ngl[d].n_part = mid;
        if ((rc = ggfit__fit_memory_for(f, ngl, overflow, mem)))
            return rc;
        if (mem[d] <= target[d])
            good = mid;
        else
            bad = mid;
    }
    ngl[d].n_part = good;
    static const fraction more[] = { LF_GATE, LF_UP };
    for (size_t i = 0; i < 2; i++) {
        ngl[d].overflow = more[i];
        if ((rc = ggfit__fit_memory_for(f, ngl, overflow, mem)))
            return rc;
        if (mem[d] <= target[d])
            return GGFIT_OK;
    }
    ngl[d].overflow = LF_MOE;
    return GGFIT_OK;
}

/* -ts kept: the largest -ngl in [lo, hi] whose layers, split as -ts says,
 * keep every device within its target, with (MoE) the experts of the
 * fewest layers per device in system memory. */
static ggfit_status around_ts(fitter *f, uint32_t lo, uint32_t hi, const int64_t *target,
                              bool *found)
{
    size_t nd = f->nd;
    int overflow[GGFIT_MAX_DEVICES];
    ngl_t ngl[GGFIT_MAX_DEVICES];
    int64_t mem[GGFIT_MAX_DEVICES];
    ggfit_status rc;
    for (size_t d = 0; d < nd; d++)
        overflow[d] = -1;
    *found = false;
    for (uint32_t n = hi; n >= lo && n > 0; n--) {
        ts_counts(f, n, ngl);
        for (size_t d = 0; f->hp_nex && d < nd; d++)
            ngl[d].n_part = ngl[d].n_layer;
        if ((rc = ggfit__fit_memory_for(f, ngl, overflow, mem)))
            return rc;
        if (!all_fit(f, mem, target))
            continue;
        if (f->hp_nex) {
            for (size_t d = 0; d < nd; d++) {
                bool ok;
                if (ngl[d].n_layer && (rc = ts_experts(f, d, ngl, overflow, target, &ok)))
                    return rc;
            }
            if ((rc = ggfit__fit_memory_for(f, ngl, overflow, mem)))
                return rc;
            /* the devices share little (compute buffers): where one is now
             * over, its experts all go back to system memory */
            for (size_t d = 0; d < nd && !all_fit(f, mem, target); d++)
                if (mem[d] > target[d]) {
                    ngl[d].n_part = ngl[d].n_layer;
                    ngl[d].overflow = LF_MOE;
                    if ((rc = ggfit__fit_memory_for(f, ngl, overflow, mem)))
                        return rc;
                }
            if (!all_fit(f, mem, target))
                continue;
        }
        ggfit__fit_log(f, "fit around: -ngl %u with the -ts given", n);
        *found = true;
        keep_last(f->hooks.ctx, nd, ngl, overflow);
        return ggfit__fit_set_flags(f, ngl, overflow, &f->p);
    }
    return GGFIT_OK;
}

/* llama.cpp's steps judge one device at a time; the others change a little
 * with it (compute buffers, the output layer, MTP blocks -ngl adds). Where
 * a device ends over its target: its first partial layer gives all its
 * FFN experts to system memory, then one more layer does; without experts
 * to move (dense) and with -ts unset, a layer moves to the device with the
 * most room. *ok false when nothing is left to move. */
static ggfit_status repair(fitter *f, const int64_t *target, bool *ok)
{
    size_t nd = f->nd;
    around *a = f->hooks.ctx;
    ngl_t *ngl = a->last;
    int *overflow = a->last_overflow;
    int64_t mem[GGFIT_MAX_DEVICES];
    ggfit_status rc;
    *ok = false;
    for (uint32_t step = 0; step < 4 * (f->hp_ngl + 1) * (uint32_t)nd; step++) {
        ggfit_params p;
        ggfit__params_copy(&p, &f->p);
        if ((rc = ggfit__fit_set_flags(f, ngl, overflow, &p)) || (rc = ggfit__fit_project(f, &p, mem, NULL, NULL)))
            return rc;
        size_t d = 0;
        while (d < nd && mem[d] <= target[d])
            d++;
        if (d == nd) {
            ggfit__params_copy(&f->p, &p);
            *ok = true;
            return GGFIT_OK;
        }
        if (f->hp_nex && ngl[d].n_part > 0 && (ngl[d].overflow != LF_MOE || overflow[d] >= 0)) {
            ngl[d].overflow = LF_MOE;
            overflow[d] = -1;
        } else if (f->hp_nex && ngl[d].n_part < ngl[d].n_layer) {
            ngl[d].n_part++;
        } else if (!f->hooks.keep_ts && nd > 1 && ngl[d].n_layer > 0) {
            size_t e = nd;
            for (size_t k = 0; k < nd; k++)
                if (k != d && mem[k] < target[k] && (e == nd || target[k] - mem[k] >
                                                                  target[e] - mem[e]))
                    e = k;
            if (e == nd)
                return GGFIT_OK;
            if (ngl[d].n_part == ngl[d].n_layer)
                ngl[d].n_part--;
            ngl[d].n_layer--;
            ngl[e].n_layer++;
            if (f->hp_nex)
                ngl[e].n_part++;   /* it comes without its experts */
        } else {
            return GGFIT_OK;
        }
        ggfit__fit_log(f, "fit around: %s over its target by %lld MiB, moved more to system memory or "
                 "another device", f->devs[d].name, (long long)((mem[d] - target[d]) / MiB));
    }
    return GGFIT_OK;
}

/* One fit around the set flags at the context in f->p: GGFIT_OK with
 * *ok, or with reason[] saying why not. */
static ggfit_status around_once(fitter *f, const ggfit_params *user, bool set_ngl, bool set_ts,
                                uint32_t n, const int64_t *target, ggfit_fit_result *out,
                                bool *ok, char *reason, size_t rn)
{
    size_t nd = f->nd;
    char ts[96];
    ts_text(user, nd, ts, sizeof ts);
    uint32_t ctx = f->p.n_ctx ? f->p.n_ctx : f->hp_nct;
    const char *ctx_note = user->set_n_ctx ? " (-c as given)"
                           : f->p.n_ctx ? "" : " (the trained size)";
    ggfit_status rc;
    *ok = false;
    reason[0] = '\0';
    f->hooks.n_place = f->hp_ngl + 1;
    f->hooks.keep_ts = set_ts;
    if (set_ts) {
        bool found;
        if ((rc = around_ts(f, set_ngl ? n : 1, n, target, &found)))
            return rc;
        if (!found) {
            if (!f->hp_nex && set_ngl)
                snprintf(reason, rn, "-ngl %d and -ts %s fix where every layer of this dense "
                         "model goes: only the context was left to fit, and at %u%s it does "
                         "not", user->n_gpu_layers, ts, ctx, ctx_note);
            else if (set_ngl)
                snprintf(reason, rn, "-ngl %d with -ts %s does not fit the devices%s at "
                         "context %u%s", user->n_gpu_layers, ts,
                         f->hp_nex ? " even with every expert in system memory" : "", ctx,
                         ctx_note);
            else
                snprintf(reason, rn, "with -ts %s not even one layer fits the devices%s at "
                         "context %u%s", ts,
                         f->hp_nex ? " with its experts in system memory" : "", ctx, ctx_note);
            return GGFIT_OK;
        }
    } else {
        f->hooks.n_place = n;
        if ((rc = ggfit__fit_layers(f, out)))
            return rc;
        out->status = GGFIT_FIT_FAILED;
        if (set_ngl && (uint32_t)f->p.n_gpu_layers < n) {
            snprintf(reason, rn, "-ngl %d does not fit: the devices hold %d of the %u layers "
                     "it offloads%s at context %u%s", user->n_gpu_layers, f->p.n_gpu_layers, n,
                     f->hp_nex ? " even with their experts in system memory" : "", ctx,
                     ctx_note);
            return GGFIT_OK;
        }
    }
    /* every device keeps its margin, or it is no fit */
    bool fixed;
    if ((rc = repair(f, target, &fixed)))
        return rc;
    if (set_ngl)   /* as given: 99 and all mean every layer, as the fit's count */
        f->p.n_gpu_layers = user->n_gpu_layers;
    int64_t mem[GGFIT_MAX_DEVICES];
    if ((rc = ggfit__fit_project(f, &f->p, mem, NULL, NULL)))
        return rc;
    for (size_t d = 0; d < nd; d++)
        if (mem[d] > target[d]) {
            snprintf(reason, rn, "the flags fitted around the set ones leave %s %lld MiB short "
                     "of its margin at context %u%s", f->devs[d].name,
                     (long long)((mem[d] - target[d]) / MiB), ctx, ctx_note);
            return GGFIT_OK;
        }
    *ok = true;
    return GGFIT_OK;
}

/* Called where llama.cpp aborts because the user set -ngl, -ts, -ot, -cmoe
 * or -ncmoe: keeps those and fits what is unset around them, with
 * llama.cpp's own steps where they apply; when those do not fit and -c
 * was not set, the largest context (a multiple of 256, down to -fitc)
 * with which they do. */
static ggfit_status around_set(fitter *f, const ggfit_params *user, ggfit_fit_result *out,
                               around *a)
{
    size_t nd = f->nd;
    bool set_ngl = user->n_gpu_layers != GGFIT_NGL_AUTO, set_ts = false;
    for (size_t d = 0; nd > 1 && d < nd; d++)
        set_ts |= user->tensor_split[d] != 0.0f;
    uint32_t all = f->hp_ngl + 1;
    uint32_t n = !set_ngl || user->n_gpu_layers == GGFIT_NGL_ALL ||
                         user->n_gpu_layers < 0 || (uint32_t)user->n_gpu_layers >= all
                     ? all : (uint32_t)user->n_gpu_layers;
    ggfit_status rc = GGFIT_OK;
    out->status = GGFIT_FIT_FAILED;
#define FAIL(...) do { \
        snprintf(out->reason, sizeof out->reason, __VA_ARGS__); \
        if (!f->no_log) \
            ggfit__sb_printf(&f->log, "common_fit_params: fit around the set flags: %s\n", \
                             out->reason); \
        return GGFIT_OK; \
    } while (0)
    if (set_ngl && user->n_gpu_layers == 0)
        FAIL("-ngl 0 keeps every layer in system memory: there is nothing to place on the "
             "devices around it");
    if (nd > 1 && user->split_mode == GGFIT_SPLIT_ROW)
        FAIL("-sm row splits every layer across the devices: llama.cpp's fit does not place "
             "layers for it, so there is nothing to fit around");
    if (user->n_overrides >= GGFIT_MAX_OVERRIDES)
        FAIL("the -ot given use every tensor override: none is left for the fit");
    f->hooks = (fit_hooks){ .n_place = f->hooks.n_place, .n_keep = user->n_overrides,
                            .block_kept = block_kept, .flags_done = flags_done,
                            .layers_done = layers_done, .ctx = a };
    ggfit__fit_log(f, "fit around the set flags:%s%s%s%s", set_ngl ? " -ngl" : "", set_ts ? " -ts" : "",
          user->n_overrides ? " -ot" : "",
          user->cpu_moe ? " -cmoe" : user->n_cpu_moe ? " -ncmoe" : "");
    int64_t target[GGFIT_MAX_DEVICES];
    for (size_t d = 0; d < nd; d++)
        target[d] = f->free[d] - f->margin[d];
    const ggfit_params base = f->p;   /* after llama.cpp's context step */
    char reason[sizeof out->reason], first[sizeof out->reason];
    bool ok;
    if ((rc = around_once(f, user, set_ngl, set_ts, n, target, out, &ok, first,
                          sizeof first)))
        goto done;
    uint32_t cur = base.n_ctx ? base.n_ctx : f->hp_nct, lo = f->n_ctx_min_total;
    bool smaller = !ok && !user->set_n_ctx && f->n_ctx_min != UINT32_MAX && cur > lo;
    if (smaller) {
        /* the context too: the largest that fits, as llama.cpp would
         * give it up before the set flags (in its steps: 256 a stream) */
        const uint32_t step = 256 * f->n_streams;
        ggfit_params good_p;
        f->p = base;
        f->p.n_ctx = lo;
        ggfit__fit_log(f, "fit around: the set flags do not fit at context %u, trying %u", cur, lo);
        if ((rc = around_once(f, user, set_ngl, set_ts, n, target, out, &ok, reason,
                              sizeof reason)))
            goto done;
        if (ok) {
            good_p = f->p;
            uint32_t good = lo, bad = cur;
            while (bad - good > step) {
                uint32_t mid = good + (bad - good) / 2;
                mid -= mid % step;
                if (mid <= good)
                    break;
                f->p = base;
                f->p.n_ctx = mid;
                if ((rc = around_once(f, user, set_ngl, set_ts, n, target, out, &ok, reason,
                                      sizeof reason)))
                    goto done;
                if (ok) {
                    good = mid;
                    good_p = f->p;
                } else {
                    bad = mid;
                }
            }
            f->p = good_p;
            ok = true;
            ggfit__fit_log(f, "fit around: context reduced to %u", good);
        }
    }
done:
    if (rc == GGFIT_ELIMIT) {
        if (f->err) {
            ggfit_free(*f->err);
            *f->err = NULL;
        }
        f->p = *user;
        FAIL("the overrides given and the fit's own need more than %d tensor overrides",
             GGFIT_MAX_OVERRIDES);
    }
    if (rc)
        return rc;
    if (!ok && smaller)
        FAIL("%.200s, nor at %u (-fitc)", first, lo);
    if (!ok)
        FAIL("%s", first);
#undef FAIL
    out->status = GGFIT_FIT_FITS;
    return GGFIT_OK;
}

/* The continuation ggfit_fit hands llama.cpp's fit for --fit-around. */
static ggfit_status fit_around(fitter *f, const ggfit_params *user, ggfit_fit_result *out)
{
    around a = { .ngl_user = user->n_gpu_layers };
    ggfit_status rc = around_set(f, user, out, &a);
    f->hooks = (fit_hooks){ .n_place = f->hp_ngl + 1 };   /* llama.cpp's again: a is gone */
    return rc;
}

ggfit_status ggfit_fit(const ggfit_model *m, const ggfit_params *p, const ggfit_device *devs,
                       size_t n, const ggfit_fit_options *opt, ggfit_fit_result *out,
                       char **err)
{
    /* a program built before the field was added did not ask for it */
    bool wanted = opt && opt->size >= offsetof(ggfit_fit_options, fit_around) +
                                       sizeof opt->fit_around && opt->fit_around;
    return ggfit__fit_run(m, p, devs, n, opt, out, wanted ? fit_around : NULL, err);
}
