/*
 * ggfit.c - the command-line tool, a thin client of libggfit.
 *
 * Exit status: 0 success (the plan fits the whole machine), 1 it does not
 * fit, 2 bad input or usage, 3 the devices hold it but system memory does
 * not.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggfit_app.h"
/* The table of flags (data/flags.tsv), for the usage text: internal to the
 * library until ggfit.h gives it a public face. */
#include "common/llama_args.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GGFIT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define GGFIT_SANITIZED 1
#endif
#endif

#ifdef __GLIBC__
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#endif

#define EXIT_BAD_INPUT 2

/* The usage text's head (print_usage) */
static const char usage_head[] =
    "usage: ggfit -m FILE [--gpu DEVICES] [--rpc HOST:PORT,...] [llama.cpp flags]\n"
    "             [--host-mem TOTAL[/FREE]] [-fit on|off] [-fitt MIB,...] [-fitc N]\n"
    "             [--cpu CPU] [-fitp on] [--json] [-q | -v]\n"
    "       ggfit inspect -m FILE|URL | -hf USER/MODEL[:QUANT] [--json [--tensors]]\n"
    "       ggfit devices [--json] [--sysroot DIR]\n"
    "       ggfit archs [--json | --markdown]\n"
    "       ggfit reorder IN OUT [--force]\n"
    "       ggfit --version | --help\n"
    "\n"
    "commands:\n"
    "  (none)    decide what llama.cpp's --fit decides: prints the flags to use\n"
    "            (-c N -ngl N [-ts ..] [-ot \"..\"]) on stdout; the memory per\n"
    "            device, where the layers went and the verdict on the whole\n"
    "            machine (GPUs, system memory, unified memory, Metal's span) on\n"
    "            stderr; exit 0 fits, 1 does not, 3 the GPUs hold it but system\n"
    "            memory does not, 2 bad input. -fitp on (--print-memory)\n"
    "            reports the flags as given instead, on stdout\n"
    "  inspect   read a GGUF header (any shard of a split model) and describe\n"
    "            the model: architecture, sizes, and bytes per layer and role\n"
    "  devices   what ggfit sees on this machine: memory, CPU features and\n"
    "            GPUs (name, kind, total, free, held by others, bandwidth)\n"
    "  archs     every architecture llama.cpp loads, and whether ggfit's\n"
    "            figures for it are exact or estimated\n"
    "  reorder   rewrite a model (all shards) with the tensors llama.cpp\n"
    "            offloads contiguous (blocks in order, output layer last), so\n"
    "            that Metal's mapped span of a partial offload is its tensors\n"
    "\n"
    "options:\n"
    "  --gpu SPEC         devices to plan for instead of this machine's: none,\n"
    "                     or a comma list of [KIND:]SIZE[/FREE] or [KIND:]ID\n"
    "                     KIND cuda (default), rocm, vulkan, metal, rpc;\n"
    "                     SIZE 24GiB, 24077MiB, 24000MB; ID from the catalog\n"
    "                     (data/gpus.tsv): rtx-3090, h100-sxm ...; repeatable\n"
    "  --rpc HOST:PORT,... llama.cpp rpc-servers: their devices and free memory,\n"
    "                     asked over the network, come first (RPC0[host:port] ...)\n"
    "  --host-mem TOTAL[/FREE]  system memory of the machine planned for (with\n"
    "                     TOTAL alone, 1/8 of it, 1 to 4 GiB, is kept for the\n"
    "                     system); default: this machine's available memory, or\n"
    "                     a catalog Mac's own\n"
    "  -fit on|off        fit (default on) or keep the flags as given\n"
    "  -fitt MIB,...      memory to keep free per device (default 1024)\n"
    "  -fitc N            smallest context the fit may choose (default 4096)\n"
    "  --fit-around       where llama.cpp's fit stops at a set -ngl, -ts, -ot,\n"
    "                     -cmoe or -ncmoe, keep them and fit the rest around them\n"
    "  --for PROGRAM      server (default: llama-server's own fit, -np auto =\n"
    "                     4 slots -kvu, --cache-ram, what it loads beside the\n"
    "                     model), cli, bench, or fit-params (its own line)\n"
    "  -- llama-server ... a whole command line (as --for server)\n";

/* After usage_head and the llama.cpp flags ggfit applies (llama_flags_help). */
static const char usage_tail[] =
    "  -m, --model FILE   the GGUF file; a header-only file is enough; an\n"
    "                     http(s):// URL (-mu URL too) reads the header only\n"
    "  -hf USER/MODEL[:QUANT]  a Hugging Face repo's GGUF, chosen as llama.cpp\n"
    "                     does (default Q4_K_M, then Q8_0); -hff FILE names the\n"
    "                     file; HF_TOKEN (-hft) for gated models; HF_ENDPOINT\n"
    "                     or MODEL_ENDPOINT for another hub\n"
    "  --offline          remote headers from the cache only (GGFIT_CACHE_DIR,\n"
    "                     else $XDG_CACHE_HOME/ggfit or ~/.cache/ggfit)\n"
    "  --json             print JSON (bytes) instead of text\n"
    "  -q, --quiet        print the flags only\n"
    "  -v, --verbose      print llama.cpp's whole log of the fit too\n"
    "  --tensors          with inspect --json, list every tensor\n";

/* After usage with --help (one string literal holds at most 4095 bytes). */
static const char usage_more[] =
    "  what llama-server loads beside the model, counted (but with --for\n"
    "  fit-params or bench) as its own fit counts them, each on its rows:\n"
    "                     --mmproj FILE (-mm; --no-mmproj-offload,\n"
    "                     --image-min-tokens N, --image-max-tokens N), a draft\n"
    "                     -md FILE (-ngld -ctkd -ctvd -otd -devd ...), MTP\n"
    "                     (--spec-type draft-mtp), --spec-draft-n-max N\n"
    "\n"
    "       ggfit bench -m FILE [flags as above] [-p N] [-n N] [-d N] [--json]\n"
    "  bench     what llama-bench would report (pp and tg tokens/s) for the plan:\n"
    "            bytes per token against bandwidth, FLOPs against throughput\n"
    "            (ggfit bench -h)\n"
    "       ggfit [--gpu DEVICES] -- llama-bench -m FILE [its flags]: each test of a\n"
    "            llama-bench line planned at the context llama-bench creates for it\n"
    "       ggfit sweep -m FILE [flags as above] [--over ctx|ngl|ncmoe] [--svg FILE]\n"
    "  sweep     memory and predicted tokens/s against the context, -ngl or\n"
    "            -ncmoe, as a table, --csv, --json and an SVG picture (ggfit sweep -h)\n"
    "       ggfit -m FILE [flags as above] --objective speed|pp [--min-ctx N]\n"
    "             [--quant-cache] [bench's constants]\n"
    "  --objective speed  the plan with the fastest predicted generation (pp: prompt)\n"
    "            that fits, at a context of at least --min-ctx (default 4096), beside\n"
    "            llama.cpp's own (--objective context, the default: the largest\n"
    "            context); tries llama.cpp's fit, -ngl, -ncmoe, -ts filling the\n"
    "            fastest GPU first, -fa off, and with --quant-cache a q8_0 cache;\n"
    "            its flags on stdout, both plans and their speeds on stderr\n"
    "       ggfit devices --measure: this machine's host memory read bandwidth\n";

/* Which quant? (after usage with --help, as usage_more) */
static const char usage_quants[] =
    "\n"
    "       ggfit -hf USER/MODEL[:QUANT] --list [flags as above] [--json]\n"
    "       ggfit -m FILE -m FILE ... [flags as above] [--json]\n"
    "  --list    which quant?: plan every model file of the repo (split models\n"
    "            once; with :QUANT those of that quant) for this machine or the\n"
    "            --gpu given, and print one row each, best first: fits with\n"
    "            everything on the GPUs, then with part in system RAM (the\n"
    "            largest file first), then host short, then no fit (the\n"
    "            smallest first); then the best one's flags. Without --list,\n"
    "            -hf USER/MODEL picks as llama.cpp does. Two or more -m (or\n"
    "            one with --list) list those files the same way; exit status\n"
    "            the best one's plan's\n";

/* Prints the words of text after column *col, wrapped at 80 columns to
 * --help's description column. */
static void wrapped(FILE *f, int *col, const char *text)
{
    while (*text) {
        size_t n = strcspn(text, " ");
        if (n) {
            if (*col > 21 && *col + 1 + (int)n > 80) {
                fputs("\n                     ", f);
                *col = 21;
            }
            fprintf(f, "%s%.*s", *col > 21 ? " " : "", (int)n, text);
            *col += (*col > 21) + (int)n;
        }
        text += n + (text[n] == ' ');
    }
}

/* --cpu's entry of --help (printed after usage, whose literal is full),
 * with the features and classes the library knows. */
static void cpu_help(FILE *f)
{
    int col = 21;
    fputs("  --cpu CPU          ", f);
    wrapped(f, &col, "the CPU planned for: its features decide which weights llama.cpp "
                     "puts in the CPU's AMX and CPU_REPACK buffers (host memory its table "
                     "leaves out); default this machine's, a catalog Mac's or APU's own, "
                     "else (--gpu) avx2,avx512. CPU: features, comma-separated");
    char names[128] = "(";
    size_t at = 1;
    for (unsigned k = 0; k < 32; k++)
        if (ggfit_cpu_feature_name(1u << k) && at < sizeof names)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s ",
                                   ggfit_cpu_feature_name(1u << k));
    wrapped(f, &col, names);
    wrapped(f, &col, "or none), or classes:");
    for (size_t i = 0; i < ggfit_cpu_class_count(); i++)
        wrapped(f, &col, ggfit_cpu_class_get(i)->id);
    fputc('\n', f);
}

/* Whether row i of the table is one of llama.cpp's model and context flags
 * that ggfit applies, and not the repeat of an earlier row (llama.cpp lists
 * -np twice); *programs: those of every row with its names. */
static bool applied_row(size_t i, const ggfit__flag *f, unsigned *programs)
{
    ggfit__flag g;
    if (f->lands < GGFIT__AT_PARAMS_FIRST || f->lands > GGFIT__AT_PARAMS_LAST ||
        f->scope == GGFIT__SCOPE_DRAFT)
        return false;
    *programs = 0;
    for (size_t j = 0; ggfit__flag_row(j, &g); j++) {
        if (strcmp(g.names, f->names))
            continue;
        if (j < i)
            return false;
        *programs |= g.programs;
    }
    return true;
}

/* The usage text's entry of the llama.cpp flags ggfit applies, from the
 * table (data/flags.tsv): each by its first name and first negated name,
 * those of llama-server alone last. */
static void llama_flags_help(FILE *f)
{
    int col = 21;
    ggfit__flag row;
    char name[64];
    fputs("  llama.cpp flags    ", f);
    for (int server = 0; server < 2; server++) {
        if (server)
            wrapped(f, &col, "and llama-server's");
        for (size_t i = 0; ggfit__flag_row(i, &row); i++) {
            unsigned programs;
            if (!applied_row(i, &row, &programs) ||
                server != !(programs & (GGFIT__PROG_CLI | GGFIT__PROG_FIT_PARAMS)))
                continue;
            wrapped(f, &col, ggfit__flag_first(row.names, name, sizeof name));
            if (row.negated[0])
                wrapped(f, &col, ggfit__flag_first(row.negated, name, sizeof name));
        }
    }
    fputc('\n', f);
}

static void print_usage(FILE *f)
{
    fputs(usage_head, f);
    llama_flags_help(f);
    fputs(usage_tail, f);
}

static int fail(const char *msg)
{
    fprintf(stderr, "ggfit: %s\n", msg);
    return EXIT_BAD_INPUT;
}

/* The CLI is linked statically where make can (no dynamic loader to start:
 * a tenth of a short run). Such a program cannot load libcurl, NVML or the
 * resolver's NSS modules (src/base/linking.c): a request that needs one
 * fails with GGFIT_ESTATIC before anything is printed on stdout, and is
 * then run again, whole, by the dynamically linked build beside this one,
 * ggfit-dynamic (what is buffered for stdout goes with this process). */
static char **main_argv;

static void run_dynamic(void)
{
    static const char twin[] = "ggfit-dynamic";
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path);
    if (n <= 0 || (size_t)n >= sizeof path - sizeof twin || getenv("GGFIT_FROM_STATIC"))
        return;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash)
        return;
    memcpy(slash + 1, twin, sizeof twin);
    if (access(path, X_OK) != 0 || setenv("GGFIT_FROM_STATIC", "1", 1) != 0)
        return;
    execv(path, main_argv);
}

/* Prints the library's message for status rc (and frees it). */
static int report(int rc, char *err)
{
    if (rc == GGFIT_ESTATIC)
        run_dynamic();   /* returns only when it could not */
    fprintf(stderr, "ggfit: %s\n", err ? err : ggfit_status_str(rc));
    if (rc == GGFIT_ESTATIC)
        fputs("ggfit: this ggfit is linked statically, and could not run ggfit-dynamic, the "
              "dynamically linked build that make puts beside it\n", stderr);
    ggfit_free(err);
    return EXIT_BAD_INPUT;
}

/* Prints rendered text (NULL: the renderer ran out of memory), frees it. */
static int emit(char *text, bool json)
{
    if (!text)
        return fail("out of memory");
    fputs(text, stdout);
    if (json)
        fputc('\n', stdout);
    ggfit_free(text);
    return 0;
}

/* A model by path, URL (-m URL, -mu URL) or Hugging Face repo (-hf, -hff):
 * the token (-hft, else HF_TOKEN) goes to Hugging Face only. */
static int open_model(const char *path, const char *hf, const char *hff, const char *token,
                      bool offline, ggfit_model **m, char **err)
{
    if (!hf && !ggfit_is_url(path))
        return ggfit_model_open(path, m, err);
    ggfit_remote_options o;
    ggfit_remote_options_init(&o);
    o.offline = offline;
    o.progress = isatty(STDERR_FILENO);
    if (!hf)
        return ggfit_model_open_url(path, &o, NULL, m, err);
    o.token = token ? token : getenv("HF_TOKEN");
    ggfit_hf_model h;
    int rc = ggfit_hf_resolve(hf, hff, &o, NULL, &h, err);
    if (rc)
        return rc;
    rc = ggfit_model_open_url(h.url, &o, NULL, m, err);
    ggfit_hf_model_free(&h);
    return rc;
}

/* What inspect says when a flag of the model's source (by where its row of
 * the table lands) has no value; "" for one that takes none; NULL: not such
 * a flag. */
static const char *model_source(ggfit__flag_at at)
{
    switch (at) {
    case GGFIT__AT_MODEL:
    case GGFIT__AT_MODEL_URL: return "-m needs a file name";
    case GGFIT__AT_HF_REPO: return "-hf needs a repository";
    case GGFIT__AT_HF_FILE: return "-hff needs a file";
    case GGFIT__AT_HF_TOKEN: return "-hft needs a token";
    case GGFIT__AT_OFFLINE: return "";
    default: return NULL;
    }
}

/* inspect's flags: the model's source, taken as a plan takes it
 * (ggfit_request_parse_arg), and its own. 0, or the exit status. */
static int inspect_args(ggfit_request *req, int argc, char **argv, bool *json, bool *tensors)
{
    for (int i = 0; i < argc;) {
        const char *a = argv[i];
        ggfit__flag row;
        bool negated;
        int k = ggfit__flag_find(a, &negated);
        const char *missing = k >= 0 && ggfit__flag_row((size_t)k, &row) ? model_source(row.lands)
                                                                         : NULL;
        char *err = NULL;
        if (missing && row.values && i + 1 >= argc)
            return fail(missing);
        if (missing) {
            int rc = ggfit_request_parse_arg(req, argc, argv, &i, NULL, &err);
            if (rc)
                return report(rc, err);
            continue;
        }
        if (!strcmp(a, "--json")) {
            *json = true;
        } else if (!strcmp(a, "--tensors")) {
            *tensors = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            print_usage(stdout);
            return -1;
        } else {
            fprintf(stderr, "ggfit inspect: unknown argument '%s'\n", a);
            print_usage(stderr);
            return EXIT_BAD_INPUT;
        }
        i++;
    }
    return 0;
}

static int cmd_inspect(int argc, char **argv)
{
    bool json = false, tensors = false;
    /* a request for its model's fields alone: most of it is flags' overrides */
    ggfit_request *req = calloc(1, sizeof *req);
    if (!req)
        return fail("out of memory");
    ggfit_request_init(req);
    int rc = inspect_args(req, argc, argv, &json, &tensors);
    const char *path = req->model_url ? req->model_url : req->model;
    if (!rc && !path && !req->hf_repo)
        rc = fail("inspect needs -m FILE");
    ggfit_model *m = NULL;
    char *err = NULL;
    if (!rc && (rc = open_model(path, req->hf_repo, req->hf_file, req->hf_token, req->offline,
                                &m, &err)))
        rc = report(rc, err);
    free(req);
    if (rc)
        return rc < 0 ? 0 : rc;   /* -1: --help */
    char *text = json ? ggfit_inspect_json(m, tensors) : ggfit_inspect_text(m);
    ggfit_model_free(m);
    return emit(text, json);
}

/* Rewrites a model with what llama.cpp offloads contiguous in the file. */
static int cmd_reorder(int argc, char **argv)
{
    const char *files[2];
    int n = 0;
    bool force = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--force")) {
            force = true;
        } else if (argv[i][0] == '-' || n == 2) {
            fprintf(stderr, "ggfit reorder: unexpected argument '%s'\n", argv[i]);
            print_usage(stderr);
            return EXIT_BAD_INPUT;
        } else {
            files[n++] = argv[i];
        }
    }
    if (n != 2)
        return fail("reorder needs IN and OUT files");
    char *err = NULL;
    int rc = ggfit_reorder(files[0], files[1], force, &err);
    if (rc)
        return report(rc, err);
    fprintf(stderr, "ggfit: wrote %s\n", files[1]);
    return 0;
}

/* Lists this machine's host memory and devices; --sysroot reads /proc and
 * /sys under DIR instead (as GGFIT_SYSROOT does). */
/* The architectures and what ggfit does with each. */
static int cmd_archs(int argc, char **argv)
{
    bool json = false, markdown = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--markdown")) {
            markdown = true;
        } else {
            fprintf(stderr, "ggfit: archs: unknown argument '%s'\n", argv[i]);
            print_usage(stderr);
            return EXIT_BAD_INPUT;
        }
    }
    return emit(json ? ggfit_archs_json() : markdown ? ggfit_archs_markdown() : ggfit_archs_text(),
                json);
}

static int cmd_devices(int argc, char **argv)
{
    ggfit_probe_options o = {NULL, NULL};
    bool json = false, measure = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--sysroot")) {
            if (++i >= argc)
                return fail("--sysroot needs a directory");
            o.sysroot = argv[i];
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--measure")) {
            measure = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            print_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "ggfit devices: unknown argument '%s'\n", a);
            print_usage(stderr);
            return EXIT_BAD_INPUT;
        }
    }
    ggfit_host_info host;
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n = 0;
    char *err = NULL;
    int rc = ggfit_host_probe(&o, &host, &err);
    if (rc || (rc = ggfit_devices_discover(&o, devs, GGFIT_MAX_DEVICES, &n, &err)))
        return report(rc, err);
    if (!measure)
        return emit(json ? ggfit_devices_json(&host, devs, n)
                         : ggfit_devices_text(&host, devs, n), json);
    /* --measure: this machine's memory read, beside the model's assumption */
    ggfit_host_bw bw;
    if ((rc = ggfit_host_measure(0, &bw, &err)))
        return report(rc, err);
    /* kept as the speed model's figure for this machine; a cache folder
     * that cannot be written costs only the next plan's measuring */
    if (!o.sysroot && !getenv("GGFIT_SYSROOT") &&   /* a fake root is not this machine */
        ggfit_host_bw_keep(host.cpu_name, host.total, &bw, &err) != GGFIT_OK) {
        ggfit_free(err);
        err = NULL;
    }
    if (json)
        return emit(ggfit_devices_json_measured(&host, devs, n, &bw), true);
    if ((rc = emit(ggfit_devices_text(&host, devs, n), false)))
        return rc;
    return emit(ggfit_host_bw_text(&bw), false);
}

/* Prints a plan: the flags to use on stdout, the reasoning, the memory
 * and the verdict on stderr; with -fitp on the memory and the verdict on
 * stdout; or everything as JSON. The exit status is the plan's. */
static int print_plan(const ggfit_plan *pl, bool json, bool quiet, bool verbose)
{
    char *out = json ? ggfit_plan_json(pl) : ggfit_plan_text(pl, verbose);
    char *args = ggfit_plan_args(pl);
    int rc = ggfit_plan_exit_status(pl);
    char why[320];
    if (!args || !out) {
        ggfit_free(args);
        ggfit_free(out);
        return fail("out of memory");
    }
    if (json) {
        fputs(out, stdout);
        fputc('\n', stdout);
    } else if (pl->print_memory) {
        fputs(out, stdout);
    } else {
        if (!quiet)
            fputs(out, stderr);
        if (args[0])
            printf("%s\n", args);
        else if (quiet)
            fprintf(stderr, "ggfit: %s\n", ggfit_verdict_summary(&pl->verdict, why, sizeof why));
    }
    ggfit_free(args);
    ggfit_free(out);
    return rc;
}

/* After "--": a llama.cpp command line, llama-server -m M ... (any path);
 * the program decides the syntax the plan is printed in. */
static int program_of(ggfit_request *req, int argc, char **argv, int *i)
{
    if (++*i >= argc)
        return fail("--: expected a llama.cpp command, e.g. -- llama-server -m M ...");
    if (ggfit__program_named(argv[*i], &req->program)) {
        (*i)++;
        return 0;
    }
    fprintf(stderr, "ggfit: --: '%s' is not llama-server, llama-cli, llama-fit-params or "
                    "llama-bench\n", argv[*i]);
    return EXIT_BAD_INPUT;
}

static int speed_flag(ggfit_speed_options *so, const char *cmd, int argc, char **argv, int *i,
                      bool *used);
static int bench_line(ggfit_request *req, ggfit_speed_options *so, int argc, char **argv, int i,
                      bool json, bool quiet);

/* --objective speed|pp: the fastest plan beside llama.cpp's, its flags on
 * stdout (the comparison on stderr), or JSON. */
static int print_fastest(ggfit_request *req, const ggfit_fastest_options *fo, bool json,
                         bool quiet)
{
    ggfit_fastest *f = calloc(1, sizeof *f);   /* two plans: large for a stack */
    char *err = NULL;
    if (!f)
        return fail("out of memory");
    int rc = ggfit_request_fastest(req, fo, f, &err);
    if (rc) {
        free(f);
        return report(rc, err);
    }
    const ggfit_plan *pl = f->faster && f->has_best_plan ? &f->best : &f->own;
    char *out = json ? ggfit_fastest_json(f) : ggfit_fastest_text(f);
    char *args = ggfit_plan_args(pl);
    rc = f->found ? 0 : ggfit_plan_exit_status(&f->own);
    if (!out || !args) {
        rc = fail("out of memory");
    } else if (json) {
        printf("%s\n", out);
    } else {
        if (!quiet)
            fputs(out, stderr);
        if (args[0])
            printf("%s\n", args);
    }
    ggfit_free(out);
    ggfit_free(args);
    ggfit_fastest_free(f);
    free(f);
    return rc;
}

/* --objective's value */
static int objective_of(const char *v, ggfit_objective *o)
{
    if (!strcmp(v, "speed") || !strcmp(v, "tg"))
        *o = GGFIT_OBJECTIVE_TG;
    else if (!strcmp(v, "pp"))
        *o = GGFIT_OBJECTIVE_PP;
    else if (!strcmp(v, "context"))
        *o = GGFIT_OBJECTIVE_CONTEXT;
    else
        return fail("--objective: expected speed, pp or context");
    return 0;
}

/* --min-ctx's value */
static int min_ctx_of(const char *v, uint32_t *n)
{
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    if (*end || end == v || x == 0 || x > 100000000)
        return fail("--min-ctx: expected a number of tokens");
    *n = (uint32_t)x;
    return 0;
}

/* The main mode: fit llama.cpp's flags, or project its memory use. The
 * plan (which devices, which host, fit or projection) is the library's;
 * the CLI adds --json and prints. */
static int project_with(ggfit_request *req, ggfit_plan *plan, int argc, char **argv)
{
    bool json = false, quiet = false, verbose = false, list = false;
    bool speed_consts = false;
    ggfit_fastest_options fo;
    char *err = NULL;
    int rc;
    ggfit_fastest_options_init(&fo);
    fo.objective = GGFIT_OBJECTIVE_CONTEXT;
    /* every -m given: two or more (or --list) plan each, best first */
    const char **models = calloc((size_t)argc, sizeof *models);
    size_t n_models = 0;
    if (!models)
        return fail("out of memory");
    ggfit_request_init(req);
    /* llama.cpp's LLAMA_ARG_* variables first: a flag wins over them. */
    if ((rc = ggfit_request_env(req, &err))) {
        free(models);
        return report(rc, err);
    }
    for (int i = 1; i < argc;) {
        bool used;
        /* ggfit's own first (-v is also llama.cpp's --verbose) */
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
            quiet = true;
        } else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
            verbose = true;
        } else if (!strcmp(argv[i], "--list")) {
            list = true;
        } else if (!strcmp(argv[i], "--objective") || !strcmp(argv[i], "--min-ctx")) {
            bool objective = !strcmp(argv[i], "--objective");
            if (i + 1 >= argc) {
                free(models);
                return fail("--objective and --min-ctx need a value");
            }
            rc = objective ? objective_of(argv[i + 1], &fo.objective)
                           : min_ctx_of(argv[i + 1], &fo.n_ctx_min);
            if (rc) {
                free(models);
                return rc;
            }
            i += 2;
            continue;
        } else if (!strcmp(argv[i], "--quant-cache")) {
            fo.quant_cache = true;
        } else if ((rc = speed_flag(&fo.speed, "", argc, argv, &i, &used)) || used) {
            if (rc) {
                free(models);
                return rc;
            }
            speed_consts = true;
            continue;
        } else if (!strcmp(argv[i], "--")) {
            /* a whole llama.cpp command: its program, then its flags */
            if ((rc = program_of(req, argc, argv, &i))) {
                free(models);
                return rc;
            }
            /* llama-bench's own flags, and its tests planned as it runs them */
            if (req->program == GGFIT_FOR_BENCH) {
                free(models);
                return bench_line(req, &fo.speed, argc, argv, i, json, quiet);
            }
            continue;
        } else {
            if ((!strcmp(argv[i], "-m") || !strcmp(argv[i], "--model")) && i + 1 < argc)
                models[n_models++] = argv[i + 1];
            if ((rc = ggfit_request_parse_arg(req, argc, argv, &i, &used, &err))) {
                free(models);
                return report(rc, err);
            }
            if (used)
                continue;
            free(models);
            fprintf(stderr, "ggfit: unknown argument '%s'\n", argv[i]);
            print_usage(stderr);
            return EXIT_BAD_INPUT;
        }
        i++;
    }
    if (list || n_models > 1) {
        /* which quant?: -hf USER/MODEL --list, or several -m */
        ggfit_quant_list l;
        if (req->hf_repo)
            n_models = 0;
        req->fit.no_log = !json;   /* the table never shows the fits' logs */
        rc = ggfit_request_quants(req, models, n_models, &l, &err);
        free(models);
        if (rc)
            return report(rc, err);
        rc = emit(json ? ggfit_quant_list_json(&l) : ggfit_quant_list_text(&l), json);
        if (!rc)
            rc = ggfit_quant_list_exit_status(&l);
        ggfit_quant_list_free(&l);
        return rc;
    }
    free(models);
    if (fo.objective == GGFIT_OBJECTIVE_CONTEXT && (speed_consts || fo.n_ctx_min || fo.quant_cache))
        return fail("--min-ctx, --quant-cache and the speed constants (--host-bw ...) go with "
                    "--objective speed|pp (the constants also with bench and sweep)");
    /* The fit's log is in the JSON, and in the text with -v only; the
     * fastest plan's text never shows it. */
    req->fit.no_log = !json && (!verbose || fo.objective != GGFIT_OBJECTIVE_CONTEXT);
    if (fo.objective != GGFIT_OBJECTIVE_CONTEXT)
        return print_fastest(req, &fo, json, quiet);
    if ((rc = ggfit_request_plan(req, plan, &err)))
        return report(rc, err);
    rc = print_plan(plan, json, quiet, verbose);
    ggfit_plan_free(plan);
    return rc;
}

static int cmd_project(int argc, char **argv)
{
    /* The request and the plan are a megabyte of flags (copies of
     * ggfit_params, mostly override slots a run never touches): on the
     * heap, which main puts on huge pages, rather than on the stack, where
     * each of the pages their initialisation touches is a fault. */
    struct { ggfit_request req; ggfit_plan plan; } *w = malloc(sizeof *w);
    if (!w)
        return fail("out of memory");
    int rc = project_with(&w->req, &w->plan, argc, argv);
    free(w);
    return rc;
}

/* ggfit bench: the plan's predicted llama-bench speeds (the library's
 * ggfit_bench); llama-bench's -p, -n, -d and the model's constants. */
static const char bench_usage[] =
    "usage: ggfit bench -m FILE [--gpu DEVICES] [placement flags] [-p N] [-n N] [-d N]\n"
    "                   [constants] [--as-type TYPE] [--json]\n"
    "       ggfit bench [--gpu DEVICES] [--json] -- llama-bench -m FILE [its flags]\n"
    "  predicts what llama-bench reports (pp and tg tokens/s) for the plan: the\n"
    "  fitted one without placement flags (-ngl, -ncmoe, -ot, -ts ...), at -c\n"
    "  (default -p + -n + -d), with the plan's verdict; exit status the plan's\n"
    "  (0 fits, 1 does not, 3 system memory short). Generation: bytes read per\n"
    "  token on each device against its bandwidth, the devices in series; prompt:\n"
    "  FLOPs against each device's throughput, and the weights in system RAM\n"
    "  copied to the GPU once per ubatch. System memory of this machine: its\n"
    "  measured read (kept in the cache folder; GGFIT_HOST_BW=default|GBS).\n"
    "  -p N, -n N, -d N    llama-bench's prompt, generated tokens, depth (512, 128, 0)\n"
    "  -- llama-bench ...  a llama-bench line: each of its tests planned at the\n"
    "                      context llama-bench creates (n_prompt + n_gen + n_depth),\n"
    "                      its flags as given (no fit unless -fitt/-fitc), a row each\n"
    "  constants           --bandwidth GBS (every GPU), --host-bw GBS|default,\n"
    "                      --efficiency F, --host-efficiency F, --fixed-ms MS,\n"
    "                      --link-bw GBS, --cross-ms MS, --tflops T, --host-tflops T,\n"
    "                      --pp-efficiency F\n"
    "  --as-type TYPE      count the weights as another quant (F16, Q8_0, ...)\n";

/* The speed model's constants (bench, sweep, --objective): *used says
 * whether argv[*i] was one (and *i moved past its value); 0, or the exit
 * status of a bad value. */
static int speed_flag(ggfit_speed_options *so, const char *cmd, int argc, char **argv, int *i,
                      bool *used)
{
    bool negated;
    ggfit__flag row;
    int k = ggfit__flag_find(argv[*i], &negated);
    /* the constant's field, by where its row of the table lands */
    double *field = k >= 0 && ggfit__flag_row((size_t)k, &row) ? ggfit__speed_field(so, row.lands)
                                                             : NULL;
    *used = false;
    if (!field)
        return 0;
    /* --host-bw default: the model's default even for this machine's own
     * memory (no measuring) */
    if (row.lands == GGFIT__AT_HOST_BW && *i + 1 < argc && !strcmp(argv[*i + 1], "default")) {
        so->host_bw_default = true;
        *i += 2;
        *used = true;
        return 0;
    }
    char *end;
    if (*i + 1 >= argc || (*field = strtod(argv[*i + 1], &end), *end) || end == argv[*i + 1] ||
        *field < 0) {
        fprintf(stderr, "ggfit%s: %s needs a number >= 0\n", cmd, argv[*i]);
        return EXIT_BAD_INPUT;
    }
    *i += 2;
    *used = true;
    return 0;
}

/* ggfit bench's answer (or a llama-bench line's) on stdout; the exit
 * status is the plan's (the deciding test's for a line). Frees b. */
static int print_bench(ggfit_bench_result *b, bool json, bool quiet)
{
    int rc = b->exit_status;
    char *out = quiet ? NULL : json ? ggfit_bench_json(b) : ggfit_bench_text(b);
    char why[320];
    if (quiet && rc)
        fprintf(stderr, "ggfit: %s: %s\n", b->tests[b->decides].name,
                ggfit_verdict_summary(&b->tests[b->decides].verdict, why, sizeof why));
    else if (!quiet && emit(out, json))
        rc = EXIT_BAD_INPUT;
    ggfit_bench_result_free(b);
    free(b);
    return rc;
}

/* The rest of a llama-bench command line, from argv[i] (after its
 * program's name): llama-bench's flags, the machine's (--gpu, --host-mem)
 * and ggfit's output and speed flags; its tests planned (ggfit_bench_line). */
static int bench_line(ggfit_request *req, ggfit_speed_options *so, int argc, char **argv, int i,
                      bool json, bool quiet)
{
    ggfit_bench_args *a = calloc(1, sizeof *a);
    char *err = NULL;
    int rc;
    if (!a)
        return fail("out of memory");
    ggfit_bench_args_init(a);
    while (i < argc) {
        bool used;
        if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
            *(argv[i][2] == 'j' ? &json : &quiet) = true;
            i++;
            continue;
        }
        if ((rc = speed_flag(so, "", argc, argv, &i, &used))) {
            free(a);
            return rc;
        }
        if (!used && (rc = ggfit_bench_parse_arg(a, req, argc, argv, &i, &used, &err))) {
            free(a);
            return report(rc, err);
        }
        if (!used) {
            fprintf(stderr, "ggfit: llama-bench has no flag '%s' (tools/llama-bench/"
                            "llama-bench.cpp), nor has ggfit beside it\n", argv[i]);
            free(a);
            return EXIT_BAD_INPUT;
        }
    }
    ggfit_bench_result *b = calloc(1, sizeof *b);   /* a plan: large for a stack */
    if (!b) {
        free(a);
        return fail("out of memory");
    }
    req->fit.no_log = true;
    rc = ggfit_bench_line(req, a, so, b, &err);
    free(a);
    if (rc) {
        free(b);
        return report(rc, err);
    }
    return print_bench(b, json, quiet);
}

static int cmd_bench(int argc, char **argv)
{
    ggfit_request req;
    ggfit_speed_options so;
    bool json = false;
    char *err = NULL;
    int rc;
    ggfit_request_init(&req);
    ggfit_speed_options_init(&so);
    if ((rc = ggfit_request_env(&req, &err)))
        return report(rc, err);
    for (int i = 0; i < argc;) {
        const char *a = argv[i];
        bool used, mine = false;
        if (!strcmp(a, "--json")) {
            json = true;
            i++;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(bench_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--")) {   /* a llama-bench line: its tests, planned */
            int k = i;
            if ((rc = program_of(&req, argc, argv, &k)))
                return rc;
            if (req.program != GGFIT_FOR_BENCH)
                return fail("bench -- : expected a llama-bench command line");
            return bench_line(&req, &so, argc, argv, k, json, false);
        }
        if (!strcmp(a, "-p") || !strcmp(a, "-n") || !strcmp(a, "-d") || !strcmp(a, "--as-type")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ggfit bench: %s needs a value\n", a);
                return EXIT_BAD_INPUT;
            }
            const char *v = argv[i + 1];
            if (!strcmp(a, "--as-type")) {
                so.as_type = ggfit_type_from_name(v);
                if (so.as_type < 0) {
                    fprintf(stderr, "ggfit bench: unknown type '%s'\n", v);
                    return EXIT_BAD_INPUT;
                }
            } else {
                char *end;
                unsigned long x = strtoul(v, &end, 10);
                if (*end || end == v || x > 10000000) {
                    fprintf(stderr, "ggfit bench: bad value for %s: '%s'\n", a, v);
                    return EXIT_BAD_INPUT;
                }
                *(a[1] == 'p' ? &so.n_prompt : a[1] == 'n' ? &so.n_gen : &so.depth) = (uint32_t)x;
            }
            i += 2;
            continue;
        }
        if ((rc = speed_flag(&so, " bench", argc, argv, &i, &mine)))
            return rc;
        if (mine)
            continue;
        if ((rc = ggfit_request_parse_arg(&req, argc, argv, &i, &used, &err)))
            return report(rc, err);
        if (!used) {
            fprintf(stderr, "ggfit bench: unknown argument '%s'\n%s", a, bench_usage);
            return EXIT_BAD_INPUT;
        }
    }
    /* llama-bench's context: the prompt, the generated tokens and the depth */
    if (!req.params.set_n_ctx) {
        req.params.n_ctx = so.depth + so.n_prompt + so.n_gen;
        req.params.set_n_ctx = true;
    }
    req.fit.no_log = true;   /* the speeds are printed, not the fit */
    ggfit_bench_result *b = calloc(1, sizeof *b);   /* a plan: large for a stack */
    if (!b)
        return fail("out of memory");
    if ((rc = ggfit_bench(&req, &so, b, &err))) {
        free(b);
        return report(rc, err);
    }
    return print_bench(b, json, false);
}

/* ggfit sweep: memory and predicted speed against the context, -ngl or
 * -ncmoe (the library's ggfit_request_sweep), as a table, CSV, JSON, and
 * an SVG picture. */
static const char sweep_usage[] =
    "usage: ggfit sweep -m FILE [--gpu DEVICES] [flags] [--over ctx|ngl|ncmoe]\n"
    "                   [--svg FILE] [--csv | --json] [-p N] [-n N] [constants]\n"
    "  for each context (512 doubling to the trained one, llama.cpp's fit at each),\n"
    "  -ngl (0 to all) or -ncmoe (0 to every block; -ngl all) at -c (default 4096):\n"
    "  memory per device and system memory, whether it fits, and predicted pp and\n"
    "  tg tokens/s (tg with an empty and a full cache). --svg FILE draws them;\n"
    "  the constants are bench's (ggfit bench -h).\n";

static int cmd_sweep(int argc, char **argv)
{
    ggfit_request req;
    ggfit_speed_options so;
    ggfit_sweep_axis axis = GGFIT_SWEEP_CTX;
    const char *svg = NULL;
    bool json = false, csv = false;
    char *err = NULL;
    int rc;
    ggfit_request_init(&req);
    ggfit_speed_options_init(&so);
    if ((rc = ggfit_request_env(&req, &err)))
        return report(rc, err);
    for (int i = 0; i < argc;) {
        const char *a = argv[i];
        bool used;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(sweep_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--json") || !strcmp(a, "--csv")) {
            *(a[2] == 'j' ? &json : &csv) = true;
            i++;
            continue;
        }
        if (!strcmp(a, "--over") || !strcmp(a, "--svg") || !strcmp(a, "-p") || !strcmp(a, "-n")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ggfit sweep: %s needs a value\n", a);
                return EXIT_BAD_INPUT;
            }
            const char *v = argv[i + 1];
            if (!strcmp(a, "--svg")) {
                svg = v;
            } else if (!strcmp(a, "--over")) {
                if (!strcmp(v, "ctx") || !strcmp(v, "context"))
                    axis = GGFIT_SWEEP_CTX;
                else if (!strcmp(v, "ngl"))
                    axis = GGFIT_SWEEP_NGL;
                else if (!strcmp(v, "ncmoe"))
                    axis = GGFIT_SWEEP_NCMOE;
                else
                    return fail("sweep --over: expected ctx, ngl or ncmoe");
            } else {
                char *end;
                unsigned long x = strtoul(v, &end, 10);
                if (*end || end == v || x == 0 || x > 1000000) {
                    fprintf(stderr, "ggfit sweep: bad value for %s: '%s'\n", a, v);
                    return EXIT_BAD_INPUT;
                }
                *(a[1] == 'p' ? &so.n_prompt : &so.n_gen) = (uint32_t)x;
            }
            i += 2;
            continue;
        }
        if ((rc = speed_flag(&so, " sweep", argc, argv, &i, &used)))
            return rc;
        if (used)
            continue;
        if ((rc = ggfit_request_parse_arg(&req, argc, argv, &i, &used, &err)))
            return report(rc, err);
        if (!used) {
            fprintf(stderr, "ggfit sweep: unknown argument '%s'\n%s", a, sweep_usage);
            return EXIT_BAD_INPUT;
        }
    }
    ggfit_sweep *sw = calloc(1, sizeof *sw);
    if (!sw)
        return fail("out of memory");
    req.fit.no_log = true;   /* the points are printed, not the fits */
    if ((rc = ggfit_request_sweep(&req, axis, &so, sw, &err))) {
        free(sw);
        return report(rc, err);
    }
    if (svg) {
        char *pic = ggfit_sweep_svg(sw);
        FILE *f = pic ? fopen(svg, "w") : NULL;
        if (!f || fputs(pic, f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "ggfit sweep: cannot write %s\n", svg);
            ggfit_free(pic);
            free(sw);
            return EXIT_BAD_INPUT;
        }
        ggfit_free(pic);
        fprintf(stderr, "ggfit: wrote %s\n", svg);
    }
    rc = emit(json ? ggfit_sweep_json(sw) : csv ? ggfit_sweep_csv(sw) : ggfit_sweep_text(sw),
              json);
    free(sw);
    return rc;
}

static int run(int argc, char **argv);

/*
 * The heap on transparent huge pages. A run is short and touches 2 to 3 MB
 * of fresh heap (graphs, the scheduler's and ggml-alloc's tables): 400 to 700
 * page faults at about 2 us each, a fifth of a fit's time. Where the kernel
 * gives huge pages on request (transparent_hugepage "madvise" or "always"),
 * the heap is grown once by 8 MB past its start, the part from the next 2 MB
 * boundary on is marked MADV_HUGEPAGE before anything touches it, and the
 * gap up to that boundary is held by one block never touched, so that
 * malloc's later blocks come from the marked part: one fault per 2 MB.
 * Large blocks stay on the heap too (M_MMAP_THRESHOLD), and it is not
 * trimmed. glibc's malloc only: another allocator (valgrind's, a
 * sanitizer's) fails the check on where the block landed, and nothing is
 * marked. GGFIT_HEAP=plain leaves the heap alone.
 */
static void *heap_gap;

static void heap_on_huge_pages(void)
{
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE) && !defined(GGFIT_SANITIZED)
    const uintptr_t huge = (uintptr_t)2 << 20;
    const char *env = getenv("GGFIT_HEAP");
    if (env && !strcmp(env, "plain"))
        return;
    /* Room to grow the heap by 10 MB (a memory limit may not leave it),
     * asked of the kernel and handed back before malloc is told anything. */
    if (sbrk(10 << 20) == (void *)-1)
        return;
    sbrk(-(10 << 20));
    if (!mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TRIM_THRESHOLD, 64 << 20))
        return;
    void *volatile first = malloc(1);   /* the arena exists from here */
    free(first);
    struct mallinfo2 mi = mallinfo2();
    uintptr_t end = (uintptr_t)sbrk(0);
    if (end == (uintptr_t)-1 || mi.keepcost == 0 || mi.keepcost > end)
        return;
    uintptr_t top = end - mi.keepcost;  /* malloc's top block: the free end */
    /* The first 2 MB boundary past the heap's end (a static program's C
     * library has started the arena before main, and its top may hold the
     * next one): the gap's block, past the top, then grows the heap by it
     * and the top pad, and ends 48 bytes before the boundary, where malloc
     * writes the next block's header at once. The boundary's huge page
     * stays untouched until it is marked. */
    uintptr_t start = (top + 4096 + huge - 1) & ~(huge - 1);
    while (start <= end)
        start += huge;
    if (!mallopt(M_TOP_PAD, 8 << 20))
        return;
    heap_gap = malloc(start - top - 64);
    if ((uintptr_t)heap_gap != top + 16 || (uintptr_t)sbrk(0) < start + huge) {
        /* not the heap expected (or no room to grow it: a memory limit):
         * glibc's defaults back (without its sliding mmap threshold) */
        free(heap_gap);
        heap_gap = NULL;
        mallopt(M_TOP_PAD, 128 << 10);
        mallopt(M_TRIM_THRESHOLD, 128 << 10);
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
        return;
    }
    end = (uintptr_t)sbrk(0) & ~(huge - 1);
    madvise((void *)start, end - start, MADV_HUGEPAGE);
#endif
}

/* Output that could not be written (a full disk, a closed pipe) is a
 * failure, not a success. */
int main(int argc, char **argv)
{
    main_argv = argv;
    heap_on_huge_pages();
    int rc = run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ggfit: cannot write the output: %s\n", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    return rc;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return EXIT_BAD_INPUT;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ggfit %s\n", GGFIT_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        print_usage(stdout);
        cpu_help(stdout);
        fputs(usage_more, stdout);
        fputs(usage_quants, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "inspect"))
        return cmd_inspect(argc - 2, argv + 2);
    if (!strcmp(argv[1], "devices"))
        return cmd_devices(argc - 2, argv + 2);
    if (!strcmp(argv[1], "archs"))
        return cmd_archs(argc - 2, argv + 2);
    if (!strcmp(argv[1], "reorder"))
        return cmd_reorder(argc - 2, argv + 2);
    if (!strcmp(argv[1], "bench"))
        return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sweep"))
        return cmd_sweep(argc - 2, argv + 2);
    if (argv[1][0] == '-')
        return cmd_project(argc, argv);
    fprintf(stderr, "ggfit: unknown command '%s'\n", argv[1]);
    print_usage(stderr);
    return EXIT_BAD_INPUT;
}
