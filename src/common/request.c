/*
 * request.c - the command line's plan as a library call: the flags ggfit
 * adds to llama.cpp's (the model, the devices, llama.cpp's fit flags); the
 * plan they ask for is made in plan/request_plan.c. The devices themselves
 * are ordered and probed in devices/order.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/params.h"
#include "common/llama_args.h"
#include "remote/remote.h"
#include "common/draft.h"
#include "common/mmproj.h"

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
    /* llama-server's draft model and its flags (common/draft.c): counted
     * with --for server, noted as not counted otherwise */
    if (ggfit__draft_parse_arg(r, argc, argv, i, &rc, err)) {
        if (!rc && r->n_not_counted < GGFIT_MAX_IGNORED)
            r->not_counted[r->n_not_counted++] = a;
        return rc;
    }
    /* llama-server's projector and its flags (common/mmproj.c): counted
     * with --for server, the file noted as not counted otherwise, the
     * flags as without effect (as they have none without the file) */
    if (ggfit__mmproj_parse_arg(r, argc, argv, i, &rc, err)) {
        bool file = ggfit__mmproj_file_flag(a);
        if (!rc && file && r->n_not_counted < GGFIT_MAX_IGNORED)
            r->not_counted[r->n_not_counted++] = a;
        else if (!rc && !file && r->n_ignored < GGFIT_MAX_IGNORED)
            r->ignored[r->n_ignored++] = a;
        return rc;
    }
    static const char *const with_value[] = {
        "-m", "--model", "--gpu", "--rpc", "--host-mem", "--cpu", "-fitp", "--fit-print", "-fit",
        "--fit", "-fitt", "--fit-target", "-fitc", "--fit-ctx", "--for",
        "-hf", "-hfr", "--hf-repo", "-hff", "--hf-file", "-hft", "--hf-token",
        "-mu", "--model-url",
    };
    for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
        if (!strcmp(a, with_value[k]) && *i + 1 >= argc)
            return ggfit__fail(err, GGFIT_EINVAL, "%s needs a value", a);
    if (is(a, "-m", "--model")) {
        r->model = argv[++*i];
    } else if (is(a, "-hf", "-hfr") || is(a, "--hf-repo", NULL)) {
        r->hf_repo = argv[++*i];
    } else if (is(a, "-hff", "--hf-file")) {
        r->hf_file = argv[++*i];
    } else if (is(a, "-hft", "--hf-token")) {
        r->hf_token = argv[++*i];
    } else if (is(a, "-mu", "--model-url")) {
        r->model_url = argv[++*i];
    } else if (is(a, "--offline", NULL)) {
        r->offline = true;
    } else if (is(a, "--gpu", NULL)) {
        const char *v = argv[++*i];
        if (!r->gpu)
            r->gpu = v;
        else if (r->n_gpu_more < GGFIT_MAX_DEVICES)
            r->gpu_more[r->n_gpu_more++] = v;
        else
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: more than %d devices",
                               GGFIT_MAX_DEVICES);
    } else if (is(a, "--rpc", NULL)) {
        r->rpc = argv[++*i];
    } else if (is(a, "--host-mem", NULL)) {
        r->host_mem = argv[++*i];
    } else if (is(a, "--cpu", NULL)) {
        r->cpu = argv[++*i];   /* parsed with the devices (devices/order.c) */
    } else if (is(a, "-fitp", "--fit-print")) {
        const char *v = argv[++*i];
        if (strcmp(v, "on") && strcmp(v, "off"))
            return ggfit__fail(err, GGFIT_EINVAL, "%s: expected on or off, got '%s'", a, v);
        r->print_memory = !strcmp(v, "on");
    } else if (is(a, "--for", NULL)) {
        static const struct { const char *name; ggfit_program prog; } progs[] = {
            { "server", GGFIT_FOR_SERVER }, { "cli", GGFIT_FOR_CLI },
            { "fit-params", GGFIT_FOR_FIT_PARAMS }, { "bench", GGFIT_FOR_BENCH },
        };
        const char *v = argv[++*i];
        size_t k = 0;
        while (k < 4 && strcmp(v, progs[k].name))
            k++;
        if (k == 4)
            return ggfit__fail(err, GGFIT_EINVAL, "--for: expected server, cli, fit-params or "
                                                  "bench, got '%s'", v);
        r->program = progs[k].prog;
    } else if (is(a, "--print-memory", NULL)) {
        r->print_memory = true;
    } else if (is(a, "--fit-around", NULL)) {
        r->fit.fit_around = true;
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
    } else if (is(a, "-cram", "--cache-ram") && *i + 1 < argc) {
        /* llama-server's prompt cache: counted with --for server, noted
         * as not counted otherwise */
        const char *v = argv[++*i];
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || end == v || n < -1 || n > INT32_MAX)
            return ggfit__fail(err, GGFIT_EINVAL, "%s: expected MiB, 0 or -1, got '%s'", a, v);
        r->cache_ram_mib = (int32_t)n;
        /* a literal: a from LLAMA_ARG_CACHE_RAM does not outlive the call */
        if (r->n_not_counted < GGFIT_MAX_IGNORED)
            r->not_counted[r->n_not_counted++] = is(a, "-cram", NULL) ? "-cram" : "--cache-ram";
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
        /* A variable ggfit does not apply is not a flag the user typed: it
         * goes in no note (and its name, in a local buffer, must not be
         * kept). */
        uint32_t n_ignored = r->n_ignored, n_not_counted = r->n_not_counted;
        ggfit_status rc = ggfit_request_parse_arg(r, argc, argv, &k, &used, err);
        r->n_ignored = n_ignored;
        r->n_not_counted = n_not_counted;
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
