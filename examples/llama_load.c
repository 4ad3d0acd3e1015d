/*
 * llama_load.c - a model loaded by llama.cpp's C API with ggfit's plan,
 * and llama.cpp's own memory breakdown printed beside ggfit's projection.
 *
 *   make llama-example LLAMA_SRC=~/llama.cpp LLAMA_BUILD=~/llama.cpp/build
 *   build/llama_load -m model.gguf [--rpc HOST:PORT,...] [-fit on|off]
 *                    [--llama-version V] [--check | --check-weights-kv]
 *                    [--no-alloc] [-v] [llama.cpp's flags: -c 8192 -ot ...]
 *   build/llama_load --request [the same] [ggfit's flags: --for, --gpu ...]
 *                    [--register-rpc HOST:PORT,...]
 *
 * The devices are the ones ggml's registry reports (rpc-servers given with
 * --rpc, as llama.cpp's --rpc registers them, then the GPUs): their names,
 * backends and free memory make ggfit's device list. ggfit fits the flags
 * on them as llama.cpp's --fit would (-fit off: the flags as given), then
 * ggfit_llama.h turns the plan into llama_model_params and
 * llama_context_params, and llama.cpp loads the model and makes the
 * context. The table shows, per buffer type, what llama.cpp allocated
 * (llama_get_memory_breakdown) and what ggfit projected, in bytes.
 *
 * --request plans as the ggfit command line does instead
 * (ggfit_request_plan: its devices, llama-server's defaults unless --for
 * says otherwise) and applies the plan with ggfit_llama_apply_plan.
 * --register-rpc gives llama.cpp rpc-servers that ggfit does not ask
 * (a plan for --gpu rpc:SIZE,...: ggfit_llama.h matches its devices to
 * them by backend and memory). --llama-version V answers with that llama.cpp's rules (ggfit's newest
 * by default): give the version of the libllama loaded.
 *
 * --check: exit 1 unless the weights (model) and the KV cache (context)
 * agree byte for byte on every buffer type, and the compute buffers too
 * where ggfit computed them from a graph (ggfit_projection_warning empty);
 * --check-weights-kv leaves the compute buffers out. --no-alloc measures
 * as llama.cpp's own fit does (no_alloc, nothing loaded or mapped): the
 * compute buffers of the first graph reserved alone, where a real context
 * keeps the largest of the graphs it reserves (docs/llama.md).
 * Exit 2 for an error (a bad flag, a file, a fit that fails).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggfit.h"
#include "ggfit_app.h"
#include "ggfit_llama.h"
#include "llama_breakdown.h"

#define MAX_ROWS (GGFIT_MAX_BUFTS + 8)

typedef struct options {
    const char *model;
    const char *rpc;
    bool fit;                 /* -fit on (default), as llama.cpp */
    bool check;
    bool verbose;             /* llama.cpp's log below warnings too */
    bool request;             /* --request: ggfit's whole plan, as the CLI */
    const char *register_rpc; /* --register-rpc: rpc-servers for llama.cpp
                                 alone (a plan made with --gpu rpc:SIZE) */
    bool weights_kv;          /* --check-weights-kv: compute not compared */
    bool no_alloc;            /* --no-alloc: measured as llama.cpp's fit
                                 measures (llama_model_params.no_alloc) */
} options;

/* llama.cpp's log: warnings and errors only, unless -v. */
static void on_log(enum ggml_log_level level, const char *text, void *user)
{
    static enum ggml_log_level last = GGML_LOG_LEVEL_INFO;
    bool verbose = *(const bool *)user;
    if (level != GGML_LOG_LEVEL_CONT)
        last = level;
    if (verbose || last >= GGML_LOG_LEVEL_WARN)
        fputs(text, stderr);
}

/* The flags of this program alone, in either mode; false for another. */
static bool own_flag(const char *a, options *o)
{
    if (!strcmp(a, "--check"))
        o->check = true;
    else if (!strcmp(a, "--check-weights-kv"))
        o->check = o->weights_kv = true;
    else if (!strcmp(a, "--no-alloc"))
        o->no_alloc = true;
    else if (!strcmp(a, "-v"))
        o->verbose = true;
    else if (!strcmp(a, "--request"))
        o->request = true;
    else
        return false;
    return true;
}

/* --register-rpc EP,...: takes argv[*i + 1]; false for another flag. */
static bool register_flag(int argc, char **argv, int *i, options *o)
{
    if (strcmp(argv[*i], "--register-rpc") || *i + 1 >= argc)
        return false;
    o->register_rpc = argv[*i + 1];
    *i += 2;
    return true;
}

/* Our flags, and llama.cpp's through ggfit_params_parse_arg. */
static ggfit_status parse(int argc, char **argv, options *o, ggfit_params *p, char **err)
{
    for (int i = 1; i < argc;) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && has_value) {
            o->model = argv[i + 1];
            i += 2;
        } else if (!strcmp(a, "--rpc") && has_value) {
            o->rpc = argv[i + 1];
            i += 2;
        } else if ((!strcmp(a, "-fit") || !strcmp(a, "--fit")) && has_value) {
            if (strcmp(argv[i + 1], "on") && strcmp(argv[i + 1], "off"))
                return ggfit_llama__fail(err, GGFIT_EINVAL, "%s %s: on or off", a, argv[i + 1]);
            o->fit = !strcmp(argv[i + 1], "on");
            i += 2;
        } else if (!strcmp(a, "--llama-version") && has_value) {
            /* the rules of the llama.cpp loaded, where not ggfit's newest */
            ggfit_llama_version v;
            ggfit_status rc = ggfit_llama_version_parse(argv[i + 1], &v, err);
            if (rc || (rc = ggfit_params_set(p, GGFIT_PARAM_LLAMA_BUILD, v.rules)))
                return rc;
            i += 2;
        } else if (register_flag(argc, argv, &i, o)) {
            continue;
        } else if (own_flag(a, o)) {
            i++;
        } else {
            ggfit_status rc = ggfit_params_parse_arg(p, argc, argv, &i, NULL, err);
            if (rc)
                return rc;
        }
    }
    if (!o->model)
        return ggfit_llama__fail(err, GGFIT_EINVAL,
                                 "usage: llama_load -m MODEL [--rpc HOST:PORT,...] [-fit on|off] [--llama-version V] "
                                 "[--check | --check-weights-kv] [--no-alloc] [-v] [llama.cpp flags]\n"
                                 "       llama_load --request [--check...] [--no-alloc] [-v] "
                                 "[--register-rpc HOST:PORT,...] [ggfit's flags]");
    return GGFIT_OK;
}

/* --request: every flag but ours as the ggfit command line takes it
 * (ggfit_request_parse_arg: -m, --rpc, --gpu, --for, -fitp, llama.cpp's). */
static ggfit_status parse_request(int argc, char **argv, options *o, ggfit_request *req,
                                  char **err)
{
    for (int i = 1; i < argc;) {
        if (own_flag(argv[i], o)) {
            i++;
            continue;
        }
        if (register_flag(argc, argv, &i, o))
            continue;
        ggfit_status rc = ggfit_request_parse_arg(req, argc, argv, &i, NULL, err);
        if (rc)
            return rc;
    }
    o->model = req->model;
    o->rpc = req->rpc;
    if (!o->model)
        return ggfit_llama__fail(err, GGFIT_EINVAL, "llama_load --request: -m MODEL missing");
    return GGFIT_OK;
}

/* The row named name among n rows, or NULL. */
static const llama_breakdown_row *find_row(const llama_breakdown_row *rows, size_t n,
                                           const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].name, name))
            return &rows[i];
    return NULL;
}

/* A backend's buffer over the mapped file ("CPU_Mapped": the weights of
 * a model loaded with mmap, ggml_backend_dev_buffer_from_host_ptr) folded
 * into its buffer type's row ("CPU"), where ggfit counts those weights.
 * Returns the new count of rows. */
static size_t fold_mapped(llama_breakdown_row *rows, size_t n)
{
    static const char suffix[] = "_Mapped";
    for (size_t i = 0; i < n;) {
        size_t len = strlen(rows[i].name), k;
        if (len <= sizeof suffix - 1 || strcmp(rows[i].name + len - (sizeof suffix - 1), suffix)) {
            i++;
            continue;
        }
        rows[i].name[len - (sizeof suffix - 1)] = '\0';
        for (k = 0; k < n && (k == i || strcmp(rows[k].name, rows[i].name)); k++)
            ;
        if (k == n) {           /* no such row: the mapped one takes its name */
            i++;
            continue;
        }
        rows[k].model += rows[i].model;
        rows[k].context += rows[i].context;
        rows[k].compute += rows[i].compute;
        rows[i] = rows[--n];
    }
    return n;
}

/* One line of the table; counts what differs where it must not. */
static unsigned print_row(const char *name, const ggfit_mem *l, const ggfit_mem *g,
                          bool compute_exact)
{
    static const ggfit_mem none = { 0, 0, 0 };
    unsigned bad = 0;
    l = l ? l : &none;
    g = g ? g : &none;
    bad += l->model != g->model;
    bad += l->context != g->context;
    bad += compute_exact && l->compute != g->compute;
    printf("%-26s %11" PRIu64 " %11" PRIu64 " %11" PRIu64 " | %11" PRIu64 " %11" PRIu64
           " %11" PRIu64 "%s\n", name, l->model, l->context, l->compute, g->model, g->context,
           g->compute, bad ? "  <- differs" : "");
    return bad;
}

/* The name llama.cpp gives ggfit's buffer type b: a device's own buffer
 * type is the registry device's it was matched to (a plan made with
 * --gpu names its rpc devices RPC0, RPC1, ...; the registry
 * RPC0[host:port]); the CPU's and host buffers keep ggfit's name. */
static const char *llama_name(const ggfit_buft_mem *b, const ggfit_llama_params *lp)
{
    if (b->device < 0 || b->is_host || (size_t)b->device >= lp->n_devices)
        return b->name;
    return ggfit_llama__buft_name(lp->devices[b->device]);
}

/* The table: every buffer type either side has, llama.cpp's first. */
static unsigned compare(const llama_breakdown_row *rows, size_t n_rows, const ggfit_projection *pr,
                        const ggfit_llama_params *lp, bool compute_exact)
{
    unsigned bad = 0;
    printf("%-26s %11s %11s %11s | %11s %11s %11s\n", "buffer type", "llama model", "context",
           "compute", "ggfit model", "context", "compute");
    for (size_t i = 0; i < n_rows; i++) {
        ggfit_mem l = { rows[i].model, rows[i].context, rows[i].compute };
        const ggfit_mem *g = NULL;
        for (uint32_t k = 0; k < ggfit_projection_n_bufts(pr) && !g; k++)
            if (!strcmp(llama_name(ggfit_projection_buft(pr, k), lp), rows[i].name))
                g = &ggfit_projection_buft(pr, k)->mem;
        bad += print_row(rows[i].name, &l, g, compute_exact);
    }
    for (uint32_t k = 0; k < ggfit_projection_n_bufts(pr); k++) {
        const ggfit_buft_mem *b = ggfit_projection_buft(pr, k);
        if (!find_row(rows, n_rows, llama_name(b, lp)))
            bad += print_row(b->name, NULL, &b->mem, compute_exact);
    }
    return bad;
}

/* ggfit's answer for the flags on the devices: the fit (fitted flags and
 * their projection) or, with -fit off, the projection of the flags. */
static ggfit_status plan(const ggfit_model *m, ggfit_params *p, const ggfit_device *devs,
                         size_t n, const ggfit_host_info *host, bool fit, ggfit_fit_result *r,
                         ggfit_projection *pr, const ggfit_params **use,
                         const ggfit_projection **use_pr, char **err)
{
    ggfit_fit_options opt;
    ggfit_status rc;
    ggfit_fit_options_init(&opt);
    opt.host_free = host->available;   /* what a fit on the CPU alone has */
    if (!fit) {
        *use = p;
        *use_pr = pr;
        return ggfit_project(m, p, devs, n, pr, NULL, err);
    }
    if ((rc = ggfit_fit(m, p, devs, n, &opt, r, err)))
        return rc;
    if (ggfit_fit_result_status(r) == GGFIT_FIT_FAILED)
        return ggfit_llama__fail(err, GGFIT_EINVAL, "ggfit: llama.cpp's fit would fail: %s",
                                 ggfit_fit_result_reason(r));
    char *args = ggfit_fit_args(r, devs, n);
    printf("ggfit's fit: %s\n", args ? args : "(out of memory)");
    ggfit_free(args);
    *use = ggfit_fit_result_params(r);
    *use_pr = ggfit_fit_result_projection(r);
    return GGFIT_OK;
}

/* --request: ggfit_request_plan's plan (the devices it finds: the
 * rpc-servers of --rpc, this machine's GPUs or --gpu's), applied with
 * ggfit_llama_apply_plan. */
static ggfit_status plan_request(ggfit_request *req, ggfit_plan *plan, ggfit_llama_params **lp,
                                 char **err)
{
    ggfit_status rc;
    if ((rc = ggfit_request_plan(req, plan, err)))
        return rc;
    char *args = ggfit_plan_args(plan);
    printf("ggfit's plan: %s\n", args ? args : "(out of memory)");
    ggfit_free(args);
    for (size_t i = 0; i < plan->n_devices; i++)
        printf("device %zu: %s, %" PRIu64 " MiB, %" PRIu64 " MiB free\n", i,
               plan->devices[i].name, plan->devices[i].total >> 20, plan->devices[i].free >> 20);
    return ggfit_llama_apply_plan(plan, lp, err);
}

int main(int argc, char **argv)
{
    options o = { .fit = true };
    bool want_request = false;
    for (int i = 1; i < argc; i++)
        want_request = want_request || !strcmp(argv[i], "--request");
    ggfit_request *req = want_request ? ggfit_request_new() : NULL;
    ggfit_plan *gplan = want_request ? ggfit_plan_new() : NULL;
    ggfit_params *p = ggfit_params_new();
    ggfit_fit_result *r = ggfit_fit_result_new();
    ggfit_projection *proj = ggfit_projection_new();
    ggfit_model *m = NULL;
    ggfit_llama_params *lp = NULL;
    struct llama_model *model = NULL;
    struct llama_context *ctx = NULL;
    ggfit_device devs[GGFIT_MAX_DEVICES];
    ggfit_host_info host;
    size_t n = 0;
    char *err = NULL;
    int rc = 2;
    const ggfit_params *use = NULL;
    const ggfit_projection *pr = NULL;

    if (!p || !r || !proj || (want_request && (!req || !gplan)))
        goto fail;
    if (want_request ? parse_request(argc, argv, &o, req, &err) : parse(argc, argv, &o, p, &err))
        goto fail;
    llama_log_set(on_log, &o.verbose);
    ggml_backend_load_all();
    llama_backend_init();
    if ((o.rpc && ggfit_llama_add_rpc(o.rpc, &err)) ||
        (o.register_rpc && ggfit_llama_add_rpc(o.register_rpc, &err)))
        goto fail;
    if (want_request) {
        if (plan_request(req, gplan, &lp, &err))
            goto fail;
        pr = &gplan->projection;
        goto load;
    }
    if (ggfit_llama_devices(devs, GGFIT_MAX_DEVICES, &n, &err))
        goto fail;
    /* the CPU's features decide its extra buffer types (CPU_REPACK, AMX) */
    if (ggfit_host_probe(NULL, &host, &err) ||
        ggfit_params_set(p, GGFIT_PARAM_CPU_FEATURES, host.cpu_features))
        goto fail;
    for (size_t i = 0; i < n; i++)
        printf("device %zu: %s (%s), %" PRIu64 " MiB, %" PRIu64 " MiB free\n", i, devs[i].name,
               devs[i].description, devs[i].total >> 20, devs[i].free >> 20);
    if (ggfit_model_open(o.model, &m, &err) ||
        plan(m, p, devs, n, &host, o.fit, r, proj, &use, &pr, &err) ||
        ggfit_llama_apply(use, pr, devs, n, &lp, &err))
        goto fail;

load:
    if (o.no_alloc) {
        /* as llama.cpp's fit measures (common/fit.cpp): nothing allocated,
         * nothing mapped (a mapped buffer cannot be measured) */
        lp->model.no_alloc = true;
        lp->model.load_mode = LLAMA_LOAD_MODE_NONE;
    }
    model = llama_model_load_from_file(o.model, lp->model);
    if (!model) {
        err = NULL;
        fprintf(stderr, "%s: llama.cpp could not load it (its log above says why)\n", o.model);
        goto done;
    }
    ctx = llama_init_from_model(model, lp->context);
    if (!ctx) {
        fprintf(stderr, "%s: llama.cpp could not make the context (its log above says why)\n",
                o.model);
        goto done;
    }

    llama_breakdown_row rows[MAX_ROWS];
    size_t n_rows = llama_breakdown(ctx, rows, MAX_ROWS);
    n_rows = fold_mapped(rows, n_rows < MAX_ROWS ? n_rows : MAX_ROWS);
    bool compute_exact = ggfit_projection_warning(pr)[0] == '\0' && !o.weights_kv;
    printf("n_ctx: llama.cpp %u, ggfit %u; layers offloaded %d\n", llama_n_ctx(ctx),
           ggfit_projection_n_ctx(pr), lp->model.n_gpu_layers);
    unsigned bad = compare(rows, n_rows, pr, lp, compute_exact);
    bad += llama_n_ctx(ctx) != ggfit_projection_n_ctx(pr);
    if (ggfit_projection_warning(pr)[0])
        printf("ggfit's compute is estimated: %s\n", ggfit_projection_warning(pr));
    printf("%s: weights and KV cache%s %s\n", o.model, compute_exact ? ", compute" : "",
           bad ? "differ" : "agree byte for byte");
    rc = o.check && bad ? 1 : 0;
    goto done;
fail:
    fprintf(stderr, "%s\n", err ? err : "out of memory");
done:
    ggfit_free(err);
    if (ctx)
        llama_free(ctx);
    if (model)
        llama_model_free(model);
    ggfit_llama_params_free(lp);
    ggfit_model_free(m);
    ggfit_projection_free(proj);
    ggfit_fit_result_free(r);
    ggfit_params_free(p);
    ggfit_plan_destroy(gplan);
    ggfit_request_free(req);
    return rc;
}
