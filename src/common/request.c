/*
 * request.c - the command line's plan as a library call: the flags ggfit
 * adds to llama.cpp's (the model, the devices, llama.cpp's fit flags) and
 * the plan they ask for. The devices themselves are ordered and probed in
 * devices/order.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "verdict/verdict.h"
#include "common/llama_args.h"

void ggfit_request_init(ggfit_request *r)
{
    memset(r, 0, sizeof *r);
    ggfit_params_init(&r->params);
    ggfit_fit_options_init(&r->fit);
    r->rpc_timeout_ms = 5000;
}

static bool is(const char *a, const char *s1, const char *s2)
{
    return !strcmp(a, s1) || (s2 && !strcmp(a, s2));
}

/* -fitt: MiB per device, comma-separated, as llama.cpp's --fit-target. */
static ggfit_status parse_margins(ggfit_fit_options *fo, const char *v, char **err)
{
    static const char bad_margins[] = "-fitt: expected MiB values like 1024 or 512,2048";
    fo->n_margins = 0;
    while (*v) {
        char item[64];
        size_t len = strcspn(v, ",");
        if (len == 0 || len >= sizeof item || fo->n_margins >= GGFIT_MAX_DEVICES)
            return ggfit__fail(err, GGFIT_EINVAL, "%s", bad_margins);
        memcpy(item, v, len);
        item[len] = '\0';
        if (ggfit_size_parse(item, &fo->margin[fo->n_margins++]) != GGFIT_OK)
            return ggfit__fail(err, GGFIT_EINVAL, "%s", bad_margins);
        v += len + (v[len] == ',');
    }
    return GGFIT_OK;
}

ggfit_status ggfit_request_parse_arg(ggfit_request *r, int argc, char **argv, int *i,
                                     bool *used, char **err)
{
    bool llama_flag;
    ggfit_status rc = ggfit_params_parse_arg(&r->params, argc, argv, i, &llama_flag, err);
    if (used)
        *used = true;
    if (rc || llama_flag)
        return rc;

    const char *a = argv[*i];
    static const char *const with_value[] = {
        "-m", "--model", "--gpu", "--rpc", "--host-mem", "-fitp", "--fit-print", "-fit",
        "--fit", "-fitt", "--fit-target", "-fitc", "--fit-ctx", "--for",
    };
    for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
        if (!strcmp(a, with_value[k]) && *i + 1 >= argc)
            return ggfit__fail(err, GGFIT_EINVAL, "%s needs a value", a);
    if (is(a, "-m", "--model")) {
        r->model = argv[++*i];
    } else if (is(a, "--gpu", NULL)) {
        r->gpu = argv[++*i];
    } else if (is(a, "--rpc", NULL)) {
        r->rpc = argv[++*i];
    } else if (is(a, "--host-mem", NULL)) {
        r->host_mem = argv[++*i];
    } else if (is(a, "-fitp", "--fit-print")) {
        const char *v = argv[++*i];
        if (strcmp(v, "on") && strcmp(v, "off"))
            return ggfit__fail(err, GGFIT_EINVAL, "%s: expected on or off, got '%s'", a, v);
        r->print_memory = !strcmp(v, "on");
    } else if (is(a, "--for", NULL)) {
        static const char *const progs[] = { "server", "cli", "fit-params", "bench" };
        const char *v = argv[++*i];
        size_t k = 0;
        while (k < 4 && strcmp(v, progs[k]))
            k++;
        if (k == 4)
            return ggfit__fail(err, GGFIT_EINVAL, "--for: expected server, cli, fit-params or "
                                                  "bench, got '%s'", v);
        r->program = (ggfit_program)k;
    } else if (is(a, "--print-memory", NULL)) {
        r->print_memory = true;
    } else if (is(a, "-fit", "--fit")) {
        const char *v = argv[++*i];
        if (strcmp(v, "on") && strcmp(v, "off"))
            return ggfit__fail(err, GGFIT_EINVAL, "%s: expected on or off, got '%s'", a, v);
        r->fit.check_only = !strcmp(v, "off");
    } else if (is(a, "-fitt", "--fit-target")) {
        if ((rc = parse_margins(&r->fit, argv[++*i], err)))
            return rc;
    } else if (is(a, "-fitc", "--fit-ctx")) {
        const char *v = argv[++*i];
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (*end || end == v || n > UINT32_MAX)
            return ggfit__fail(err, GGFIT_EINVAL, "-fitc: expected a context size");
        r->fit.n_ctx_min = (uint32_t)n;
    } else if (ggfit__llama_arg_values(a) >= 0) {
        /* one of llama.cpp's other flags: taken, and noted */
        int nv = ggfit__llama_arg_values(a);
        if (*i + nv >= argc)
            return ggfit__fail(err, GGFIT_EINVAL, "%s needs a value", a);
        if (ggfit__llama_arg_counts_memory(a)) {
            if (r->n_not_counted < GGFIT_MAX_IGNORED)
                r->not_counted[r->n_not_counted++] = a;
        } else if (r->n_ignored < GGFIT_MAX_IGNORED) {
            r->ignored[r->n_ignored++] = a;
        }
        *i += nv;
    } else if (!used) {
        return ggfit__fail(err, GGFIT_EINVAL, "unknown argument '%s'", a);
    } else {
        *used = false;   /* neither llama.cpp's flag nor ggfit's: the caller's */
        return GGFIT_OK;
    }
    (*i)++;
    return GGFIT_OK;
}

/* What the plan leaves out, in words. */
static void notes(const ggfit_request *r, ggfit_plan *out)
{
    size_t k = 0, cap = sizeof out->notes;
    out->notes[0] = '\0';
    if (r->n_ignored) {
        k += (size_t)snprintf(out->notes + k, cap - k, "ignored (no effect on memory):");
        for (uint32_t i = 0; i < r->n_ignored && k < cap; i++)
            k += (size_t)snprintf(out->notes + k, cap - k, " %s", r->ignored[i]);
        if (k < cap)
            k += (size_t)snprintf(out->notes + k, cap - k, "\n");
    }
    if (r->n_not_counted && k < cap) {
        k += (size_t)snprintf(out->notes + k, cap - k, "not counted yet (they add memory ggfit "
                                                       "does not project):");
        for (uint32_t i = 0; i < r->n_not_counted && k < cap; i++)
            k += (size_t)snprintf(out->notes + k, cap - k, " %s", r->not_counted[i]);
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

ggfit_status ggfit_request_plan(ggfit_request *r, ggfit_plan *out, char **err)
{
    ggfit_model *m = NULL;
    ggfit_status rc;
    if (err)
        *err = NULL;
    if (!r || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_request_plan: NULL argument");
    memset(out, 0, sizeof *out);
    if (!r->model)
        return ggfit__fail(err, GGFIT_EINVAL, "-m FILE is needed");
    /* The devices come before the model, so that a bad --gpu is reported
     * before a missing file, as the CLI always has. */
    if ((rc = ggfit_request_devices(r, out->devices, GGFIT_MAX_DEVICES, &out->n_devices, err)) ||
        (rc = ggfit_model_open(r->model, &m, err)))
        return rc;
    out->print_memory = r->print_memory;
    out->asked = r->params;
    out->program = r->program;
    notes(r, out);
    out->n_layer = ggfit_model_hparams(m)->n_layer;
    out->host = r->host;
    out->fit_options = r->fit;
    const ggfit_params *judged = &r->params;
    if (r->print_memory) {
        rc = ggfit_project(m, &r->params, out->devices, out->n_devices, &out->projection, NULL,
                           err);
    } else {
        rc = ggfit_fit(m, &r->params, out->devices, out->n_devices, &r->fit, &out->fit, err);
        out->projection = out->fit.projection;
        judged = &out->fit.params;
    }
    /* ggfit's verdict on the whole machine, beside llama.cpp's decision. */
    if (!rc)
        rc = ggfit_verdict_of(m, judged, &out->projection, out->devices, out->n_devices,
                              &out->host, &out->fit_options, &out->verdict, err);
    if (!rc && !r->print_memory && out->verdict.status == GGFIT_VERDICT_HOST)
        rc = ggfit__refit_for_host(m, &r->params, out->devices, out->n_devices, &out->host,
                                   &out->fit_options, &out->fit, &out->has_alternative,
                                   &out->alternative, &out->alternative_verdict, err);
    /* Not fitting, and nothing found that does: the nearest changes. */
    if (!rc && !out->has_alternative && out->verdict.status != GGFIT_VERDICT_FITS)
        rc = ggfit__nearest(m, judged, &out->projection, out->devices, out->n_devices,
                            &out->host, &out->fit_options, out->changes, GGFIT_MAX_CHANGES,
                            &out->n_changes, err);
    if (rc)
        ggfit_plan_free(out);
    ggfit_model_free(m);
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

/* ---- LLAMA_ARG_* (llama.cpp's common_params_parse_ex reads them first) ---- */

static bool truthy(const char *v)
{
    return !strcmp(v, "on") || !strcmp(v, "enabled") || !strcmp(v, "true") || !strcmp(v, "1");
}

static bool falsey(const char *v)
{
    return !strcmp(v, "off") || !strcmp(v, "disabled") || !strcmp(v, "false") ||
           !strcmp(v, "0");
}

/* The first of a comma list, into buf. */
static const char *first_name(const char *list, char *buf, size_t n)
{
    size_t len = strcspn(list, ",");
    if (len >= n)
        len = n - 1;
    memcpy(buf, list, len);
    buf[len] = '\0';
    return buf;
}

ggfit_status ggfit_request_env(ggfit_request *r, char **err)
{
    if (err)
        *err = NULL;
    struct { const char *names, *negated, *env; int values; } row, *la = &row;
    for (size_t i = 0; ggfit__llama_arg_row(i, &row.names, &row.negated, &row.values, &row.env);
         i++) {
        if (!la->env[0])
            continue;
        char name[64], neg_env[96];
        const char *v = getenv(la->env);
        if (la->negated[0]) {
            /* llama.cpp also reads LLAMA_ARG_NO_X for a flag with a --no- form */
            const char *tail = strncmp(la->env, "LLAMA_ARG_", 10) ? la->env : la->env + 10;
            snprintf(neg_env, sizeof neg_env, "LLAMA_ARG_NO_%s", tail);
            if (getenv(neg_env))
                v = "0";
        }
        if (!v)
            continue;
        char *argv[3];
        int argc = 0;
        if (la->values == 0) {
            if (truthy(v))
                argv[argc++] = (char *)(uintptr_t)first_name(la->names, name, sizeof name);
            else if (falsey(v) && la->negated[0])
                argv[argc++] = (char *)(uintptr_t)first_name(la->negated, name, sizeof name);
            else if (!falsey(v))
                return ggfit__fail(err, GGFIT_EINVAL, "%s=%s: expected on/off, true/false or "
                                                      "1/0", la->env, v);
        } else {
            argv[argc++] = (char *)(uintptr_t)first_name(la->names, name, sizeof name);
            argv[argc++] = (char *)(uintptr_t)v;
        }
        if (argc == 0)
            continue;
        argv[argc] = NULL;
        int k = 0;
        bool used;
        ggfit_status rc = ggfit_request_parse_arg(r, argc, argv, &k, &used, err);
        if (rc) {
            /* say where the value came from */
            char *inner = err ? *err : NULL;
            if (err)
                *err = NULL;
            rc = ggfit__fail(err, rc, "%s: %s", la->env, inner ? inner : "bad value");
            ggfit_free(inner);
            return rc;
        }
    }
    return GGFIT_OK;
}
