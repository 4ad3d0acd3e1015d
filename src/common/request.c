/*
 * request.c - the command line's plan as a library call: the plan the
 * flags ask for (common/args.c parses them). The devices themselves are
 * ordered and probed in devices/order.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/params.h"
#include "verdict/verdict.h"
#include "remote/remote.h"
#include "common/draft.h"
#include "common/mmproj.h"
#include "speed/speed.h"

void ggfit_request_init(ggfit_request *r)
{
    /* All zero but the two sets of overrides, which are read only below
     * n_overrides (ggfit__params_init_head): they are nearly all of it. */
    const ggfit__hole ov[] = {
        { offsetof(ggfit_request, params.overrides), sizeof r->params.overrides },
        { offsetof(ggfit_request, draft.overrides), sizeof r->draft.overrides },
    };
    _Static_assert(offsetof(ggfit_request, params) < offsetof(ggfit_request, draft),
                   "holes in order");
    ggfit__zero_except(r, sizeof *r, ov, 2);
    ggfit__params_init_head(&r->params);
    ggfit__params_init_head(&r->draft);
    ggfit_mmproj_params_init(&r->mmproj_params);
    ggfit__spec_init(r);
    ggfit_fit_options_init(&r->fit);
    r->rpc_timeout_ms = 5000;
    r->cache_ram_mib = -2;
    r->program = GGFIT_FOR_SERVER;   /* the program the printed line is for */
}

static bool is(const char *a, const char *s1, const char *s2)
{
    return !strcmp(a, s1) || (s2 && !strcmp(a, s2));
}

/* What the plan leaves out, in words. */
static void notes(const ggfit_request *r, ggfit_plan *out)
{
    size_t k = 0, cap = sizeof out->notes;
    out->notes[0] = '\0';
    /* --for server with --mmproj counts the projector's flags */
    /* and, for a model from -hf, --no-mmproj: the line carries it */
#define MMPROJ_COUNTS(a) (ggfit__serves(r->program) && \
                          ((r->mmproj && (ggfit__mmproj_flag(a) || ggfit__mmproj_file_flag(a))) || \
                           (r->hf_repo && is(a, "--no-mmproj", "--no-mmproj-auto"))))
    uint32_t n_ign = 0;
    for (uint32_t i = 0; i < r->n_ignored; i++)
        n_ign += !MMPROJ_COUNTS(r->ignored[i]);
    if (n_ign) {
        k += (size_t)snprintf(out->notes + k, cap - k, "ignored (no effect on memory):");
        for (uint32_t i = 0; i < r->n_ignored && k < cap; i++)
            if (!MMPROJ_COUNTS(r->ignored[i]))
                k += (size_t)snprintf(out->notes + k, cap - k, " %s", r->ignored[i]);
        if (k < cap)
            k += (size_t)snprintf(out->notes + k, cap - k, "\n");
    }
    /* --for server counts llama-server's prompt cache (--cache-ram) */
    /* and the draft model (-md and its flags, common/draft.c) */
#define SERVER_COUNTS(a) ((ggfit__serves(r->program) && \
                          (is(a, "-cram", "--cache-ram") || ggfit__draft_flag(a))) || \
                          MMPROJ_COUNTS(a))
    uint32_t n_nc = 0;
    for (uint32_t i = 0; i < r->n_not_counted; i++)
        n_nc += !SERVER_COUNTS(r->not_counted[i]);
    if (n_nc && k < cap) {
        k += (size_t)snprintf(out->notes + k, cap - k, "not counted yet (they add memory ggfit "
                                                       "does not project):");
        for (uint32_t i = 0; i < r->n_not_counted && k < cap; i++)
            if (!SERVER_COUNTS(r->not_counted[i]))
                k += (size_t)snprintf(out->notes + k, cap - k, " %s", r->not_counted[i]);
#undef SERVER_COUNTS
#undef MMPROJ_COUNTS
        if (k < cap)
            k += (size_t)snprintf(out->notes + k, cap - k, "\n");
    }
    uint32_t nd = 0;
    for (size_t d = 0; d < out->n_devices; d++)
        nd += out->devices[d].total || out->devices[d].free;
    if (r->params.n_tensor_split > nd && nd > 0 && k < cap)
        snprintf(out->notes + k, cap - k, "-ts gives %u proportions for %u devices: llama.cpp "
                 "uses the first %u\n", r->params.n_tensor_split, nd, nd);
}

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
static ggfit_status fit_around(const ggfit_model *m, ggfit_request *r, const ggfit_params *p,
                               ggfit_plan *out, char **err)
{
    ggfit_fit_result *a = ggfit__calloc(1, sizeof *a);
    ggfit_verdict *v = ggfit__calloc(1, sizeof *v);
    ggfit_status rc = a && v ? GGFIT_OK : ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    (void)r;   /* its fit options are out->fit_options (a draft's bytes added) */
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
            ggfit_fit_result_free(a);
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
        ggfit_fit_result_free(a);
    }
    free(a);
    free(v);
    return rc;
}

void ggfit__plan_zero(ggfit_plan *out)
{
    /* All zero but the nearest changes, which are read only below n_changes,
     * and the overrides of its four sets of flags, read only below
     * n_overrides: they are most of the plan (a copy of the flags each), and
     * zeroing them would touch pages a run seldom uses (each fresh page is a
     * fault). The holes are in the plan's order. */
    const ggfit__hole holes[] = {
        { offsetof(ggfit_plan, fit.params.overrides), sizeof out->fit.params.overrides },
        { offsetof(ggfit_plan, asked.overrides), sizeof out->asked.overrides },
        { offsetof(ggfit_plan, alternative.params.overrides),
          sizeof out->alternative.params.overrides },
        { offsetof(ggfit_plan, changes), sizeof out->changes },
        { offsetof(ggfit_plan, draft_params.overrides), sizeof out->draft_params.overrides },
    };
    ggfit__zero_except(out, sizeof *out, holes, sizeof holes / sizeof holes[0]);
}

ggfit_status ggfit_request_plan(ggfit_request *r, ggfit_plan *out, char **err)
{
    ggfit_model *m = NULL;
    ggfit_status rc;
    if (err)
        *err = NULL;
    if (!r || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_request_plan: NULL argument");
    ggfit__plan_zero(out);
    if (!r->model && !r->hf_repo && !r->model_url)
        return ggfit__fail(err, GGFIT_EINVAL, "-m FILE is needed");
    /* The devices come before the model, so that a bad --gpu is reported
     * before a missing file, as the CLI always has. */
    char mmproj[512] = "";
    if ((rc = ggfit_request_devices(r, out->devices, GGFIT_MAX_DEVICES, &out->n_devices, err)) ||
        (rc = ggfit__request_model(r, &m, mmproj, sizeof mmproj, err)))
        return rc;
    rc = ggfit__plan_model(r, m, mmproj, out, err);
    ggfit_model_free(m);
    return rc;
}

ggfit_status ggfit__plan_model(ggfit_request *r, const ggfit_model *m, const char *mmproj,
                               ggfit_plan *out, char **err)
{
    ggfit_status rc;
    /* --for server: the flags as llama-server changes them before its fit */
    ggfit_params params;
    ggfit__params_copy(&params, &r->params);
    if (ggfit__serves(r->program)) {
        if (r->program == GGFIT_FOR_CLI && !params.set_n_seq) {
            params.n_seq = 1;   /* llama-cli's -np: 1, where the server's is auto */
            params.set_n_seq = true;
        }
        ggfit_params_server(&params, r->cache_ram_mib);
        ggfit__spec_params(r, &params);   /* and the speculative flags */
        ggfit__spec_args(r, out->spec_args, sizeof out->spec_args);
    }
    out->print_memory = r->print_memory;
    ggfit__params_copy(&out->asked, &params);
    out->program = r->program;
    notes(r, out);
    out->no_mmproj = ggfit__mmproj_declined(r, mmproj);
    if (ggfit__serves(r->program))
        ggfit__spec_notes(r, m, out);
    out->n_layer = ggfit_model_hparams(m)->n_layer;
    out->host = r->host;
    out->fit_options = r->fit;
    /* --for server -md (or an MTP context): the draft measured, its bytes
     * added to the fit's targets and the verdict's pools (common/draft.c) */
    if (ggfit__serves(r->program) && ggfit__spec_has_draft(r) &&
        (rc = ggfit__draft_plan(r, m, &params, out, err)))
        return rc;
    /* --for server --mmproj: the projector measured, its bytes added the
     * same way (common/mmproj.c) */
    if (ggfit__serves(r->program) && r->mmproj &&
        (rc = ggfit__mmproj_plan(r, &params, out, err)))
        return rc;
    /* and the one -hf found, which llama-server loads along */
    if (ggfit__serves(r->program) && ggfit__mmproj_auto(r, mmproj) &&
        (rc = ggfit__mmproj_plan_hf(r, mmproj, &params, out, err)))
        return rc;
    const ggfit_params *judged = &params;
    if (r->print_memory) {
        rc = ggfit_project(m, &params, out->devices, out->n_devices, &out->projection, NULL,
                           err);
    } else {
        /* llama.cpp's own decision, whatever --fit-around says */
        ggfit_fit_options own = out->fit_options;
        own.fit_around = false;
        rc = ggfit_fit(m, &params, out->devices, out->n_devices, &own, &out->fit, err);
        out->projection = out->fit.projection;
        judged = &out->fit.params;
    }
    /* ggfit's verdict on the whole machine, beside llama.cpp's decision. */
    if (!rc)
        rc = ggfit_verdict_of(m, judged, &out->projection, out->devices, out->n_devices,
                              &out->host, &out->fit_options, &out->verdict, err);
    /* where it does not hold on the whole machine (the host short, or a
     * device inside its margin: llama.cpp's fit is approximate), the
     * nearest plan that does, llama.cpp's beside it (verdict/refit.c) */
    if (!rc && !r->print_memory && out->verdict.status != GGFIT_VERDICT_FITS)
        rc = ggfit__refit(m, &params, out->devices, out->n_devices, &out->host,
                          &out->fit_options, &out->fit, &out->verdict, &out->has_alternative,
                          &out->alternative, &out->alternative_verdict, err);
    /* --fit-around: where llama.cpp aborts on a set flag, the set flags
     * kept and the rest fitted around them, as the plan. */
    if (!rc && !r->print_memory && r->fit.fit_around && !out->has_alternative &&
        out->fit.status == GGFIT_FIT_FAILED && strstr(out->fit.reason, "already set by user"))
        rc = fit_around(m, r, &params, out, err);
    else if (!rc && r->fit.fit_around && (r->print_memory || r->fit.check_only)) {
        out->fit_around = true;   /* nothing is fitted: say so */
        kept_text(&params, out->n_devices, out->around_kept, sizeof out->around_kept);
        snprintf(out->around_reason, sizeof out->around_reason, "%s the flags as given: "
                 "nothing is fitted, so nothing is fitted around them",
                 r->print_memory ? "-fitp on projects" : "-fit off checks");
    }
    /* Not fitting, and nothing found that does: the nearest changes. */
    if (!rc && !out->has_alternative && out->verdict.status != GGFIT_VERDICT_FITS)
        rc = ggfit__nearest(m, judged, &out->projection, out->devices, out->n_devices,
                            &out->host, &out->fit_options, out->changes, GGFIT_MAX_CHANGES,
                            &out->n_changes, err);
    /* the predicted speeds of the flags it prints (speed/) */
    if (!rc)
        rc = ggfit__plan_speed(m, out, err);
    if (rc)
        ggfit_plan_free(out);
    return rc;
}

void ggfit_plan_free(ggfit_plan *plan)
{
    if (plan) {
        ggfit_fit_result_free(&plan->fit);
        ggfit_fit_result_free(&plan->alternative);
        plan->has_alternative = false;
    }
}

int ggfit_plan_exit_status(const ggfit_plan *plan)
{
    if (plan->has_alternative)
        return 0;
    switch (plan->verdict.status) {
    case GGFIT_VERDICT_FITS: return 0;
    case GGFIT_VERDICT_HOST: return 3;
    default: return 1;
    }
}
