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

static const char usage[] =
    "usage: ggfit inspect -m FILE [--json [--tensors]]\n"
    "       ggfit --version | --help\n"
    "\n"
    "commands:\n"
    "  inspect   read a GGUF header (any shard of a split model) and describe\n"
    "            the model: architecture, sizes, and bytes per layer and role\n"
    "\n"
    "options:\n"
    "  -m, --model FILE   the GGUF file; a header-only file is enough\n"
    "  --json             print JSON (bytes) instead of the report\n"
    "  --tensors          with --json, list every tensor\n";

static int fail(const char *msg)
{
    fprintf(stderr, "ggfit: %s\n", msg);
    return EXIT_BAD_INPUT;
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
    if (rc) {
        fprintf(stderr, "ggfit: %s\n", err ? err : ggfit_status_str(rc));
        ggfit_free(err);
        return EXIT_BAD_INPUT;
    }
    char *text = json ? ggfit_inspect_json(m, tensors) : ggfit_inspect_text(m);
    ggfit_model_free(m);
    if (!text)
        return fail("out of memory");
    fputs(text, stdout);
    if (json)
        fputc('\n', stdout);
    ggfit_free(text);
    return 0;
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
    fprintf(stderr, "ggfit: unknown command '%s'; projection and fitting are not built yet, "
                    "'ggfit inspect -m FILE' describes a model\n%s", argv[1], usage);
    return EXIT_BAD_INPUT;
}
