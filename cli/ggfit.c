/*
 * ggfit.c - the command-line tool, a thin client of libggfit.
 *
 * Exit status: 0 success, 1 the answer is "no" (reserved for fits),
 * 2 bad input or usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggfit.h"

#define EXIT_BAD_INPUT 2
#define RPC_TIMEOUT_MS 5000   /* per rpc-server connection and reply */

static const char usage[] =
    "usage: ggfit -m FILE [--gpu DEVICES] [--rpc HOST:PORT,...] [llama.cpp flags]\n"
    "             [-fit on|off] [-fitt MIB,...] [-fitc N] [-fitp on] [--json]\n"
    "       ggfit inspect -m FILE [--json [--tensors]]\n"
    "       ggfit devices [--json] [--sysroot DIR]\n"
    "       ggfit --version | --help\n"
    "\n"
    "commands:\n"
    "  (none)    decide what llama.cpp's --fit decides: prints the flags to use\n"
    "            (-c N -ngl N [-ts ..] [-ot \"..\"]) on stdout, the reasoning and\n"
    "            the memory per device on stderr; exit 0 fits, 1 cannot, 2 bad\n"
    "            input. -fitp on (--print-memory) prints llama.cpp's memory\n"
    "            breakdown for the flags as given instead\n"
    "  inspect   read a GGUF header (any shard of a split model) and describe\n"
    "            the model: architecture, sizes, and bytes per layer and role\n"
    "  devices   what ggfit sees on this machine: memory, CPU features and\n"
    "            GPUs (name, kind, total, free, held by others, bandwidth)\n"
    "\n"
    "options:\n"
    "  --gpu SPEC         devices to plan for instead of this machine's: none,\n"
    "                     or a comma list of [KIND:]SIZE[/FREE] or [KIND:]ID\n"
    "                     KIND cuda (default), rocm, vulkan, metal, rpc;\n"
    "                     SIZE 24GiB, 24077MiB, 24000MB; ID from the catalog\n"
    "                     (data/gpus.tsv): rtx-3090, h100-sxm, m3-pro-18gb ...\n"
    "  --rpc HOST:PORT,... llama.cpp rpc-servers: their devices and free memory,\n"
    "                     asked over the network, come first (RPC0[host:port] ...)\n"
    "  --host-mem SIZE    system memory available to llama.cpp (CPU-only fits);\n"
    "                     default: what this machine has available\n"
    "  -fit on|off        fit (default on) or keep the flags as given\n"
    "  -fitt MIB,...      memory to keep free per device (default 1024)\n"
    "  -fitc N            smallest context the fit may choose (default 4096)\n"
    "  llama.cpp flags    -c -b -ub -np -kvu -fa -ctk -ctv --swa-full -ngl -ts -sm\n"
    "                     -mg -ot -cmoe -ncmoe -nkvo --no-repack --mmap --no-mmap\n"
    "  -m, --model FILE   the GGUF file; a header-only file is enough\n"
    "  --json             print JSON (bytes) instead of text\n"
    "  --tensors          with inspect --json, list every tensor\n";

static int fail(const char *msg)
{
    fprintf(stderr, "ggfit: %s\n", msg);
    return EXIT_BAD_INPUT;
}

/* Prints the library's message for status rc (and frees it). */
static int report(int rc, char *err)
{
    fprintf(stderr, "ggfit: %s\n", err ? err : ggfit_status_str(rc));
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

static int cmd_inspect(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false, tensors = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            if (++i >= argc)
                return fail("-m needs a file name");
            path = argv[i];
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--tensors")) {
            tensors = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else {
            fprintf(stderr, "ggfit inspect: unknown argument '%s'\n%s", a, usage);
            return EXIT_BAD_INPUT;
        }
    }
    if (!path)
        return fail("inspect needs -m FILE");

    ggfit_model *m;
    char *err = NULL;
    int rc = ggfit_model_open(path, &m, &err);
    if (rc)
        return report(rc, err);
    char *text = json ? ggfit_inspect_json(m, tensors) : ggfit_inspect_text(m);
    ggfit_model_free(m);
    return emit(text, json);
}

/* Lists this machine's host memory and devices; --sysroot reads /proc and
 * /sys under DIR instead (as GGFIT_SYSROOT does). */
static int cmd_devices(int argc, char **argv)
{
    ggfit_probe_options o = {NULL, NULL};
    bool json = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--sysroot")) {
            if (++i >= argc)
                return fail("--sysroot needs a directory");
            o.sysroot = argv[i];
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else {
            fprintf(stderr, "ggfit devices: unknown argument '%s'\n%s", a, usage);
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
    return emit(json ? ggfit_devices_json(&host, devs, n) : ggfit_devices_text(&host, devs, n),
                json);
}

/* Prints a fit: the flags on stdout, the reasoning and the memory on
 * stderr; or everything as JSON. Exit 0 when it fits, 1 when it cannot. */
static int run_fit(ggfit_model *m, const ggfit_params *p, const ggfit_device *devs, size_t n,
                   const ggfit_fit_options *fo, bool enabled, bool json)
{
    ggfit_fit_result r;
    char *err = NULL;
    int rc;
    ggfit_fit_options o = *fo;
    o.check_only = !enabled;
    rc = ggfit_fit(m, p, devs, n, &o, &r, &err);
    if (rc) {
        ggfit_model_free(m);
        return report(rc, err);
    }
    char *args = ggfit_fit_args(&r, devs, n);
    char *out = json ? ggfit_fit_json(&r, devs, n) : ggfit_projection_text(&r.projection, devs);
    if (!args || !out) {
        ggfit_free(args);
        ggfit_free(out);
        ggfit_free(r.log);
        ggfit_model_free(m);
        return fail("out of memory");
    }
    if (json) {
        fputs(out, stdout);
        fputc('\n', stdout);
    } else {
        if (r.log)
            fputs(r.log, stderr);
        fputs(out, stderr);   /* the memory of the result, or of the flags as given */
        if (r.status == GGFIT_FIT_FAILED)
            fprintf(stderr, "ggfit: cannot fit: %s\n", r.reason);
        else
            printf("%s\n", args);
    }
    int status = r.status == GGFIT_FIT_FAILED ? 1 : 0;
    ggfit_free(args);
    ggfit_free(out);
    ggfit_free(r.log);
    ggfit_model_free(m);
    return status;
}

/* The main mode: project or fit llama.cpp's memory use. */
static int cmd_project(int argc, char **argv)
{
    const char *path = NULL, *gpu = NULL, *rpc = NULL, *host_mem = NULL;
    bool json = false, print = false, fit = true;
    ggfit_params p;
    ggfit_fit_options fo;
    char *err = NULL;
    ggfit_params_init(&p);
    ggfit_fit_options_init(&fo);
    for (int i = 1; i < argc;) {
        const char *a = argv[i];
        int prc = ggfit_params_parse_arg(&p, argc, argv, &i, &err);
        if (prc == GGFIT_OK)
            continue;
        if (prc > 0)
            return report(prc, err);
        if ((!strcmp(a, "-m") || !strcmp(a, "--model") || !strcmp(a, "--gpu") ||
             !strcmp(a, "--rpc") || !strcmp(a, "--host-mem") ||
             !strcmp(a, "-fitp") || !strcmp(a, "--fit-print") || !strcmp(a, "-fit") ||
             !strcmp(a, "--fit") || !strcmp(a, "-fitt") || !strcmp(a, "--fit-target") ||
             !strcmp(a, "-fitc") || !strcmp(a, "--fit-ctx")) && i + 1 >= argc) {
            fprintf(stderr, "ggfit: %s needs a value\n", a);
            return EXIT_BAD_INPUT;
        }
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            path = argv[++i];
        } else if (!strcmp(a, "--gpu")) {
            gpu = argv[++i];
        } else if (!strcmp(a, "--rpc")) {
            rpc = argv[++i];
        } else if (!strcmp(a, "--host-mem")) {
            host_mem = argv[++i];
        } else if (!strcmp(a, "-fitp") || !strcmp(a, "--fit-print")) {
            print = !strcmp(argv[++i], "on");
        } else if (!strcmp(a, "--print-memory")) {
            print = true;
        } else if (!strcmp(a, "-fit") || !strcmp(a, "--fit")) {
            const char *v = argv[++i];
            if (strcmp(v, "on") && strcmp(v, "off"))
                return fail("-fit: expected on or off");
            fit = !strcmp(v, "on");
        } else if (!strcmp(a, "-fitt") || !strcmp(a, "--fit-target")) {
            const char *v = argv[++i];
            fo.n_margins = 0;
            while (*v) {
                char item[64];
                size_t len = strcspn(v, ",");
                if (len == 0 || len >= sizeof item || fo.n_margins >= GGFIT_MAX_DEVICES)
                    return fail("-fitt: expected MiB values like 1024 or 512,2048");
                memcpy(item, v, len);
                item[len] = '\0';
                if (ggfit_size_parse(item, &fo.margin[fo.n_margins++]))
                    return fail("-fitt: expected MiB values like 1024 or 512,2048");
                v += len + (v[len] == ',');
            }
        } else if (!strcmp(a, "-fitc") || !strcmp(a, "--fit-ctx")) {
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end || end == argv[i] || v > UINT32_MAX)
                return fail("-fitc: expected a context size");
            fo.n_ctx_min = (uint32_t)v;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else {
            fprintf(stderr, "ggfit: unknown argument '%s'\n%s", a, usage);
            return EXIT_BAD_INPUT;
        }
        i++;
    }
    if (!path)
        return fail("-m FILE is needed");
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n_dev = 0, n_rpc = 0;
    /* llama.cpp lists the --rpc servers' devices before the local ones. */
    int rc;
    if (rpc && (rc = ggfit_rpc_query(rpc, RPC_TIMEOUT_MS, devs, GGFIT_MAX_DEVICES, &n_rpc, &err)))
        return report(rc, err);
    if (gpu && (rc = ggfit_devices_parse(gpu, devs + n_rpc, GGFIT_MAX_DEVICES - n_rpc, &n_dev,
                                         &err)))
        return report(rc, err);
    for (size_t d = n_rpc, k = n_rpc; d < n_rpc + n_dev; d++)   /* RPC names go on counting */
        if (devs[d].kind == GGFIT_BACKEND_RPC)
            snprintf(devs[d].name, sizeof devs[d].name, "RPC%zu", k++);
    n_dev += n_rpc;
    if (!gpu) {
        /* No --gpu: this machine's devices (after the RPC servers', as in
         * llama.cpp), its CPU features, and its memory for CPU-only fits. */
        ggfit_host_info host;
        size_t n_local = 0;
        if ((rc = ggfit_host_probe(NULL, &host, &err)) ||
            (rc = ggfit_devices_discover(NULL, devs + n_dev, GGFIT_MAX_DEVICES - n_dev, &n_local,
                                         &err)))
            return report(rc, err);
        n_dev += n_local;
        p.cpu_features = host.cpu_features;
        fo.host_free = host.available;
    } else if (!host_mem) {
        /* Described devices: CPU-only fits still need a host; this one's
         * memory, unless --host-mem describes another. */
        ggfit_host_info host;
        if ((rc = ggfit_host_probe(NULL, &host, &err)))
            return report(rc, err);
        fo.host_free = host.available;
    }
    if (host_mem && ggfit_size_parse(host_mem, &fo.host_free))
        return fail("--host-mem: expected a size like 64GiB");

    ggfit_model *m;
    if ((rc = ggfit_model_open(path, &m, &err)))
        return report(rc, err);
    if (!print)
        return run_fit(m, &p, devs, n_dev, &fo, fit, json);
    ggfit_projection pr;
    rc = ggfit_project(m, &p, devs, n_dev, &pr, NULL, &err);
    if (rc) {
        ggfit_model_free(m);
        return report(rc, err);
    }
    char *text = json ? ggfit_projection_json(&pr, devs) : ggfit_projection_text(&pr, devs);
    ggfit_model_free(m);
    return emit(text, json);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_BAD_INPUT;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ggfit %s\n", GGFIT_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "inspect"))
        return cmd_inspect(argc - 2, argv + 2);
    if (!strcmp(argv[1], "devices"))
        return cmd_devices(argc - 2, argv + 2);
    if (argv[1][0] == '-')
        return cmd_project(argc, argv);
    fprintf(stderr, "ggfit: unknown command '%s'\n%s", argv[1], usage);
    return EXIT_BAD_INPUT;
}
