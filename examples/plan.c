/*
 * plan.c - the ggfit command line's answer from C: llama.cpp's flags and
 * ggfit's in, the flags to use out (exit 0), or why they cannot fit (1;
 * 3: the GPUs hold it, system memory does not).
 *
 *   cc plan.c -lggfit -o plan
 *   ./plan -m data/models/qwen3-14b-f16.gguf --gpu rtx-3090 -c 8192
 *   -c 8192 -ngl 33
 */
#include <stdio.h>

#include "ggfit_app.h"

int main(int argc, char **argv)
{
    /* A request and a plan are large (a plan is close to a megabyte): the
     * library makes them on the heap. */
    ggfit_request *req = ggfit_request_new();
    ggfit_plan *plan = ggfit_plan_new();
    char *err = NULL, *text = NULL, why[320];
    int rc = 2;
    if (!req || !plan)
        goto fail;
    for (int i = 1; i < argc;)
        if (ggfit_request_parse_arg(req, argc, argv, &i, NULL, &err) != GGFIT_OK)
            goto fail;
    if (ggfit_request_plan(req, plan, &err) != GGFIT_OK)
        goto fail;
    /* The flags to use or, with -fitp on, the memory and the verdict on the
     * whole machine; the exit status says whether it fits. */
    text = plan->print_memory ? ggfit_plan_text(plan, false) : ggfit_plan_args(plan);
    if (!text)
        goto fail;
    if (plan->print_memory)
        fputs(text, stdout);
    else if (text[0])
        printf("%s\n", text);
    else
        fprintf(stderr, "cannot fit: %s\n",
                ggfit_verdict_summary(&plan->verdict, why, sizeof why));
    rc = ggfit_plan_exit_status(plan);
    goto done;
fail:
    fprintf(stderr, "%s\n", err ? err : "out of memory");
done:
    ggfit_free(text);
    ggfit_free(err);
    ggfit_plan_destroy(plan);   /* with the log of the reasoning, not printed */
    ggfit_request_free(req);
    return rc;
}
