/*
 * request_plan.c - the plan a request asks for: llama.cpp's fit of its
 * flags (as the program it names changes them), ggfit's verdict on the
 * whole machine, the refit, --fit-around and the nearest changes where it
 * does not hold, and the plan's speeds. request.c (common/) reads the
 * request; this is the stage above the fit, the verdict and the speeds
 * that puts them together.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "versions/version.h"
#include "common/draft.h"
#include "common/fitter.h"
#include "common/mmproj.h"
#include "common/params.h"
#include "plan/plan.h"
#include "remote/remote.h"
#include "speed/speed.h"
#include "verdict/verdict.h"

static bool is(const char *a, const char *s1, const char *s2)
{
    return !strcmp(a, s1) || (s2 && !strcmp(a, s2));
}

/* What the plan leaves out, as facts (render/plan.c words them): the
 * flags noted, less those the program counts after all, and -ts's
 * proportions beyond the devices. */
static void notes(const ggfit_request *r, ggfit_plan *out)
{
    /* --for server with --mmproj counts the projector's flags */
    /* and, for a model from -hf, --no-mmproj: the line carries it */
#define MMPROJ_COUNTS(a) (ggfit__serves(r->program) && \
                          ((r->mmproj && (ggfit__mmproj_flag(a) || ggfit__mmproj_file_flag(a))) || \
                           (r->hf_repo && is(a, "--no-mmproj", "--no-mmproj-auto"))))
    /* --for server counts llama-server's prompt cache (--cache-ram) */
    /* and the draft model (-md and its flags, common/draft.c) */
#define SERVER_COUNTS(a) ((ggfit__serves(r->program) && \
                          (is(a, "-cram", "--cache-ram") || ggfit__draft_flag(a))) || \
                          MMPROJ_COUNTS(a))
    out->n_ignored = out->n_not_counted = 0;
    for (uint32_t i = 0; i < r->n_ignored; i++)
        if (!MMPROJ_COUNTS(r->ignored[i]))
            out->ignored[out->n_ignored++] = r->ignored[i];
    for (uint32_t i = 0; i < r->n_not_counted; i++)
        if (!SERVER_COUNTS(r->not_counted[i]))
            out->not_counted[out->n_not_counted++] = r->not_counted[i];
#undef SERVER_COUNTS
#undef MMPROJ_COUNTS
    uint32_t nd = 0;
    for (size_t d = 0; d < out->n_devices; d++)
        nd += out->devices[d].total || out->devices[d].free;
    if (r->params.n_tensor_split > nd && nd > 0) {
        out->ts_given = r->params.n_tensor_split;
        out->ts_used = nd;
    }
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
    if ((rc = ggfit_request_version(r, err)) ||
        (rc = ggfit_request_devices(r, out->devices, GGFIT_MAX_DEVICES, &out->n_devices, err)) ||
        (!r->model_open && (rc = ggfit__request_model(r, &m, mmproj, sizeof mmproj, err))))
        return rc;
    rc = ggfit__plan_model(r, r->model_open ? r->model_open : m, mmproj, out, err);
    ggfit_model_free(m);
    return rc;
}

ggfit_status ggfit_request_plan_vs(ggfit_request *r, ggfit_plan *a, ggfit_plan *b, char **err)
{
    if (!r || !a || !b)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_request_plan_vs: NULL argument");
    if (!r->vs_version)
        return ggfit__fail(err, GGFIT_EINVAL, "--vs-version VERSION is needed");
    /* The request's own version first (asked of the program it names),
     * then r->vs; but a version that reads no config.ini first, since the
     * files' values, once applied, stay in the request. */
    ggfit_status rc = ggfit_request_version(r, err);
    if (rc)
        return rc;
    ggfit_llama_version own = r->llama;
    bool vs_first = ggfit__llama_has(own.rules, LLAMA_CHANGE_CONFIG_INI) &&
                    !ggfit__llama_has(r->vs.rules, LLAMA_CHANGE_CONFIG_INI);
    ggfit_plan *first = vs_first ? b : a, *second = vs_first ? a : b;
    r->llama = vs_first ? r->vs : own;
    r->llama_asked = true;   /* the versions are settled: ask no program again */
    if ((rc = ggfit_request_plan(r, first, err)))
        goto done;
    r->llama = vs_first ? own : r->vs;
    if ((rc = ggfit_request_plan(r, second, err)))
        ggfit_plan_free(first);
done:
    r->llama = own;
    r->params.llama_build = r->draft.llama_build = own.rules;
    return rc;
}

ggfit_status ggfit__plan_model(ggfit_request *r, const ggfit_model *m, const char *mmproj,
                               ggfit_plan *out, char **err)
{
    ggfit_status rc;
    /* --for server: the flags as llama-server changes them before its fit */
    ggfit_params params;
    ggfit__params_copy(&params, &r->params);
    /* the load mode auto: no mmap where a device cannot map */
    ggfit_params_load_mode(&params, out->devices, out->n_devices);
    if (ggfit__serves(r->program)) {
        if (r->program == GGFIT_FOR_CLI && !params.set_n_seq) {
            params.n_seq = 1;   /* llama-cli's -np: 1, where the server's is auto */
            params.set_n_seq = true;
        }
        ggfit_params_server(&params, r->cache_ram_mib);
        ggfit__spec_from_draft(r);        /* the type from -md's file */
        ggfit__spec_params(r, &params);   /* and the speculative flags */
        ggfit__spec_args(r, out->spec_args, sizeof out->spec_args);
    }
    out->llama = r->llama;
    out->print_memory = r->print_memory;
    ggfit__params_copy(&out->asked, &params);
    out->program = r->program;
    notes(r, out);
    out->no_mmproj = ggfit__mmproj_declined(r, mmproj);
    if (ggfit__serves(r->program))
        ggfit__spec_notes(r, m, out);
    out->n_layer = ggfit_model_hparams(m)->n_layer;
    out->n_ctx_train = ggfit_model_hparams(m)->n_ctx_train;
    out->n_from_env = r->n_from_env;
    memcpy(out->from_env, r->from_env, r->n_from_env * sizeof r->from_env[0]);
    memcpy(out->llama_config, r->llama_config_note, sizeof out->llama_config);
    out->unsloth_type = 0;
    for (uint64_t i = 0; i < ggfit_model_n_tensors(m) && !out->unsloth_type; i++)
        if (ggfit_type_unsloth(ggfit_model_tensor(m, i)->info->type))
            out->unsloth_type = ggfit_model_tensor(m, i)->info->type;
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
    /* a draft fitted beside the model: its context follows the model's
     * (as the fit leaves it; -fitp on: as the fit measures it first; -fit
     * off: the model's own, no fit runs) */
    if (!rc)
        rc = ggfit__draft_fitted(m, judged->n_ctx           ? judged->n_ctx
                                    : r->fit.check_only && !r->print_memory
                                        ? out->projection.n_ctx
                                        : ggfit__fit_ctx_max(m, judged),
                                 out, err);
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
        rc = ggfit__plan_fit_around(m, &params, out, err);
    else if (!rc && r->fit.fit_around && (r->print_memory || r->fit.check_only))
        ggfit__plan_not_around(out);   /* nothing is fitted: say so */
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
