/*
 * state.c - a projection's state (proj.h) set up before its first stage
 * and released after its last: the rules override.c compiled, the
 * per-layer arrays layers.c made.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "project/proj.h"

void ggfit__proj_init(proj *pr, const ggfit_model *m, const ggfit_params *p,
                      ggfit_projection *out, struct ggfit__gcache *cache, int8_t *dev_of,
                      char **err)
{
    memset(pr, 0, sizeof *pr);
    pr->m = m;
    pr->hp = ggfit_model_hparams(m);
    pr->p = p;
    pr->out = out;
    pr->err = err;
    pr->cache = cache;
    pr->dev_of = dev_of;
    pr->cpu_buft = pr->host_buft = pr->tied_buft = -1;
    for (int e = 0; e < GGFIT__CPU_EXTRA_COUNT; e++)
        pr->extra_buft[e] = -1;
    for (int d = 0; d < GGFIT_MAX_DEVICES; d++)
        pr->dev_buft[d] = -1;
}

void ggfit__proj_free(proj *pr)
{
    for (uint32_t i = 0; i < pr->n_rules; i++)
        ggfit__regex_free(pr->rules[i].re);
    free(pr->rule_first);   /* the block holds rule_list too */
    pr->n_rules = 0;
    pr->n_regex = 0;
    pr->rule_first = NULL;
    pr->rule_list = NULL;
    pr->n_rule_blocks = 0;
    ggfit_free(pr->layer_buft);   /* the block holds the other arrays too */
    pr->layer_buft = pr->kv_buft = pr->layer_backend = NULL;
    pr->layer_flags = NULL;
}
