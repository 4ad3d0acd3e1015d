/*
 * llama_args.c - every flag llama.cpp's programs take (common/arg.cpp, as
 * data/llama_args.tsv lists them), so that a llama-server or llama-cli
 * command line pasted whole is understood: ggfit honours the flags that
 * change memory, recognises the others and says it ignored them, and
 * reads the LLAMA_ARG_* variables llama.cpp reads (common/request.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/llama_args.h"

/* The table, one row per flag (struct llama_arg), generated. */
#include "llama_args_data.h"

#define N_ARGS (sizeof llama_args / sizeof llama_args[0])

/* Whether a is one of the comma-separated names in list. */
static bool named(const char *list, const char *a)
{
    size_t n = strlen(a);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, a, n))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

int ggfit__llama_arg_values(const char *a)
{
    for (size_t i = 0; i < N_ARGS; i++)
        if (named(llama_args[i].names, a) || named(llama_args[i].negated, a))
            return named(llama_args[i].negated, a) ? 0 : llama_args[i].values;
    return -1;
}

/* Flags that change memory but that ggfit does not count yet: a note says
 * so instead of calling them harmless. */
static const char *const not_counted[] = {
    "--mmproj", "-mm", "--mmproj-url", "-mmu", "--lora", "--lora-scaled", "--control-vector",
    "--control-vector-scaled", "-cram", "--cache-ram", "-ctxcp", "--ctx-checkpoints",
    "--swa-checkpoints", "-dev", "--device", "-devd", "--device-draft", "--spec-draft-device",
    "--override-kv",
    "-nopo",
    "--no-op-offload", "--spec-type", "-hf", "-hfr", "--hf-repo", "-hff", "--hf-file",
};

bool ggfit__llama_arg_counts_memory(const char *a)
{
    for (size_t i = 0; i < sizeof not_counted / sizeof not_counted[0]; i++)
        if (!strcmp(a, not_counted[i]))
            return true;
    return false;
}

bool ggfit__llama_arg_row(size_t i, const char **names, const char **negated, int *values,
                          const char **env)
{
    if (i >= N_ARGS)
        return false;
    *names = llama_args[i].names;
    *negated = llama_args[i].negated;
    *values = llama_args[i].values;
    *env = llama_args[i].env;
    return true;
}
