/*
 * llama_args.c - every flag llama.cpp's programs take (common/arg.cpp, as
 * data/llama_args.tsv lists them), so that a llama-server or llama-cli
 * command line pasted whole is understood: ggfit honours the flags that
 * change memory, recognises the others and says it ignored them, and
 * reads the LLAMA_ARG_* variables llama.cpp reads (a flag wins over its
 * variable, as in common_params_parse_ex).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/llama_args.h"

typedef struct llama_arg {
    const char *names;    /* comma-separated, as llama.cpp spells them */
    const char *negated;  /* the --no-... names, or "" */
    int values;           /* 0, 1 or 2 */
    const char *env;      /* LLAMA_ARG_..., or "" */
    const char *programs; /* COMMON, SERVER, CLI, ... */
} llama_arg;

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
    "--control-vector-scaled", "-md", "--model-draft", "-ngld", "--gpu-layers-draft",
    "--n-gpu-layers-draft", "-ctkd", "--cache-type-k-draft", "-ctvd", "--cache-type-v-draft",
    "-otd", "--override-tensor-draft", "-cmoed", "--cpu-moe-draft", "-ncmoed",
    "--n-cpu-moe-draft", "-cram", "--cache-ram", "-ctxcp", "--ctx-checkpoints",
    "--swa-checkpoints", "-dev", "--device", "-devd", "--device-draft", "--override-kv",
    "--embedding", "--embeddings", "--rerank", "--reranking", "--pooling", "-nopo",
    "--no-op-offload", "--spec-type", "-hf", "-hfr", "--hf-repo", "-hff", "--hf-file",
};

bool ggfit__llama_arg_counts_memory(const char *a)
{
    for (size_t i = 0; i < sizeof not_counted / sizeof not_counted[0]; i++)
        if (!strcmp(a, not_counted[i]))
            return true;
    return false;
}

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
    for (size_t i = 0; i < N_ARGS; i++) {
        const llama_arg *la = &llama_args[i];
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
