/*
 * plan_result.c - what a plan (request.c's ggfit_plan, plan/request_plan.c
 * makes it) and a list of quants (plan/quants.c) hold once made: freeing
 * them, the exit status each gives, a quant's rank in words. Below the
 * planning, for the renderers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/fitter.h"

void ggfit_plan_free(ggfit_plan *plan)
{
    if (plan) {
        ggfit_fit_result_clear(&plan->fit);
        ggfit_fit_result_clear(&plan->alternative);
        plan->has_alternative = false;
        /* the plan's own (common/draft.c made it) */
        ggfit__fit_extra_free((ggfit_fit_extra *)(uintptr_t)plan->fit_options.extra);
        plan->fit_options.extra = NULL;
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

static const char *const rank_names[] = {
    "fits", "fits, less context", "fits, part in RAM", "host memory short", "does not fit",
    "error",
};

const char *ggfit_quant_rank_str(int rank)
{
    return rank >= 0 && rank <= GGFIT_RANK_ERROR ? rank_names[rank] : NULL;
}

void ggfit_quant_list_free(ggfit_quant_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        ggfit_quant *q = &l->quants[i];
        free(q->name);
        free(q->url);
        free(q->error);
        if (q->plan) {
            ggfit_plan_free(q->plan);
            free(q->plan);
        }
    }
    free(l->quants);
    free(l->repo);
    free(l->commit);
    memset(l, 0, sizeof *l);
}

int ggfit_quant_list_exit_status(const ggfit_quant_list *l)
{
    if (!l || !l->n || !l->quants[0].plan)
        return 1;
    return ggfit_plan_exit_status(l->quants[0].plan);
}
