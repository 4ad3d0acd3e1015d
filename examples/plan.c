/*
 * plan.c - the ggfit command line's answer from C: llama.cpp's flags and
 * ggfit's in, the flags to use out (exit 0), or why they cannot fit (1).
 *
 *   cc plan.c -lggfit -o plan
 *   ./plan -m data/models/qwen3-14b-f16.gguf --gpu cuda:24077MiB -c 8192
 *   -c 8192 -ngl 33
 */
#include <stdio.h>

#include "ggfit.h"

int main(int argc, char **argv)
{
    ggfit_request req;
    ggfit_plan plan;
    char *err = NULL;
    ggfit_request_init(&req);
    for (int i = 1; i < argc;)
        if (ggfit_request_parse_arg(&req, argc, argv, &i, NULL, &err) != GGFIT_OK)
            goto fail;
    if (ggfit_request_plan(&req, &plan, &err) != GGFIT_OK)
        goto fail;
    ggfit_plan_free(&plan);   /* the log of the reasoning: not printed here */
    if (!plan.print_memory && plan.fit.status == GGFIT_FIT_FAILED) {
        fprintf(stderr, "cannot fit: %s\n", plan.fit.reason);
        return 1;
    }
    /* The flags to use or, with -fitp on, the memory of the flags as given. */
    char *text = plan.print_memory ? ggfit_projection_text(&plan.projection, plan.devices)
                                   : ggfit_fit_args(&plan.fit, plan.devices, plan.n_devices);
    if (!text) {
        fputs("out of memory\n", stderr);
        return 2;
    }
    printf(plan.print_memory ? "%s" : "%s\n", text);
    ggfit_free(text);
    return 0;
fail:
    fprintf(stderr, "%s\n", err ? err : "out of memory");
    ggfit_free(err);
    return 2;
}
