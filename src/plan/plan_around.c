/*
 * plan_around.c - --fit-around in a plan: where llama.cpp's fit aborts on
 * a set flag, the fit around the set flags (common/fit_around.c) judged on
 * the whole machine, with the refit where only the host is short, and
 * what was kept and what was fitted, in words.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "plan/plan.h"
#include "verdict/verdict.h"

/* The flags --fit-around kept (those llama.cpp's fit stops at, and -c),
 * as given. */
static void kept_text(const ggfit_params *p, size_t nd, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
#define PUT(...) do { if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__); } while (0)
    if (p->set_n_ctx)
        PUT(" -c %u", p->n_ctx);
    if (p->n_gpu_layers == GGFIT_NGL_ALL)
        PUT(" -ngl all");
    else if (p->n_gpu_layers != GGFIT_NGL_AUTO)
        PUT(" -ngl %d", p->n_gpu_layers);
    bool ts = false;
    for (size_t d = 0; nd > 1 && d < nd; d++)
        ts |= p->tensor_split[d] != 0.0f;
    for (size_t d = 0; ts && d < nd; d++)
        PUT("%s%g", d ? "," : " -ts ", p->tensor_split[d]);
    for (uint32_t i = 0; i < p->n_overrides; i++)
        PUT("%s%s=%s", i ? "," : " -ot ", p->overrides[i].pattern, p->overrides[i].buffer);
    if (p->cpu_moe)
        PUT(" -cmoe");
    else if (p->n_cpu_moe)
        PUT(" -ncmoe %u", p->n_cpu_moe);
#undef PUT
    if (buf[0] == ' ')
        memmove(buf, buf + 1, strlen(buf));
}

/* What the fit chose around them: the context, -ngl and -ts where unset,
 * and the overrides it added after the user's. */
static void fitted_text(const ggfit_params *asked, const ggfit_fit_result *a, size_t nd,
                        char *buf, size_t n)
{
    const ggfit_params *p = &a->params;
    size_t k = 0;
    buf[0] = '\0';
#define PUT(...) do { if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__); } while (0)
    if (!asked->set_n_ctx)
        PUT(" -c %u", a->projection.n_ctx);
    if (asked->n_gpu_layers == GGFIT_NGL_AUTO)
        PUT(" -ngl %d", p->n_gpu_layers);
    bool ts = false, ts_asked = false;
    for (size_t d = 0; nd > 1 && d < nd; d++) {
        ts |= p->tensor_split[d] != 0.0f;
        ts_asked |= asked->tensor_split[d] != 0.0f;
    }
    for (size_t d = 0; ts && !ts_asked && d < nd; d++)
        PUT("%s%g", d ? "," : " -ts ", p->tensor_split[d]);
    uint32_t added = p->n_overrides - asked->n_overrides, moe = 0;
    for (uint32_t i = asked->n_overrides; i < p->n_overrides; i++)
        moe += strstr(p->overrides[i].pattern, "exps") != NULL;
    if (added)
        PUT("%s-ot with %u tensor override%s%s (the experts of %u block%s, part of the FFN of "
            "%u) to system RAM or the next device", k ? ", " : " ", added,
            added > 1 ? "s" : "", asked->n_overrides ? " after yours" : "", moe,
            moe == 1 ? "" : "s", added - moe);
#undef PUT
    if (buf[0] == ' ')
        memmove(buf, buf + 1, strlen(buf));
    if (!buf[0])
        snprintf(buf, n, "nothing: the set flags fit as they are");
}

/* --fit-around: the fit with the set flags kept (ggfit_fit with
 * fit_around), judged on the whole machine; a smaller context when only
 * the host is short, as for llama.cpp's own fit (verdict/refit.c). */
ggfit_status ggfit__plan_fit_around(const ggfit_model *m, const ggfit_params *p, ggfit_plan *out,
                                    char **err)
{
    ggfit_fit_result *a = ggfit__calloc(1, sizeof *a);
    ggfit_verdict *v = ggfit__calloc(1, sizeof *v);
    ggfit_status rc = a && v ? GGFIT_OK : ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    /* the fit options are out->fit_options (a draft's bytes added) */
    out->fit_around = true;
    kept_text(p, out->n_devices, out->around_kept, sizeof out->around_kept);
    if (!rc)
        rc = ggfit_fit(m, p, out->devices, out->n_devices, &out->fit_options, a, err);
    bool have = !rc;
    if (!rc && a->status == GGFIT_FIT_FAILED)
        snprintf(out->around_reason, sizeof out->around_reason, "%s", a->reason);
    else if (!rc)
        rc = ggfit_verdict_of(m, &a->params, &a->projection, out->devices, out->n_devices,
                              &out->host, &out->fit_options, v, err);
    if (!rc && a->status != GGFIT_FIT_FAILED && v->status != GGFIT_VERDICT_FITS) {
        bool found = false;
        ggfit_fit_result *b = ggfit__calloc(1, sizeof *b);
        ggfit_verdict *bv = ggfit__calloc(1, sizeof *bv);
        if (!b || !bv)
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        else
            rc = ggfit__refit(m, p, out->devices, out->n_devices, &out->host,
                              &out->fit_options, a, v, &found, b, bv, err);
        if (!rc && found) {
            ggfit_fit_result_clear(a);
            *a = *b;
            *v = *bv;
        }
        free(b);
        free(bv);
    }
    if (!rc && a->status != GGFIT_FIT_FAILED && v->status != GGFIT_VERDICT_FITS)
        snprintf(out->around_reason, sizeof out->around_reason, "the flags fitted around the "
                 "set ones keep every device's margin, but not the whole machine: %.200s",
                 v->summary);
    if (!rc && a->status != GGFIT_FIT_FAILED && v->status == GGFIT_VERDICT_FITS) {
        fitted_text(p, a, out->n_devices, out->around_fitted, sizeof out->around_fitted);
        out->alternative = *a;
        out->alternative_verdict = *v;
        out->has_alternative = true;
    } else if (have) {
        ggfit_fit_result_clear(a);
    }
    free(a);
    free(v);
    return rc;
}

void ggfit__plan_not_around(const ggfit_params *p, bool print_memory, ggfit_plan *out)
{
    out->fit_around = true;
    kept_text(p, out->n_devices, out->around_kept, sizeof out->around_kept);
    snprintf(out->around_reason, sizeof out->around_reason, "%s the flags as given: "
             "nothing is fitted, so nothing is fitted around them",
             print_memory ? "-fitp on projects" : "-fit off checks");
}
