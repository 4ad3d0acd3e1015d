/*
 * plan_speed.c - the predicted speeds every plan carries: the plan's flags
 * projected once more with their placement (which tensor went where), then
 * ggfit_speed_of with the default options (llama-bench's pp512 and tg128
 * at depth 0).
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "speed/speed.h"

const ggfit_params *ggfit__plan_chosen(const ggfit_plan *pl)
{
    if (pl->print_memory)
        return &pl->asked;
    return pl->has_alternative ? &pl->alternative.params : &pl->fit.params;
}

ggfit_status ggfit__speed_on_host(const ggfit_model *m, const ggfit_params *p,
                                  const ggfit_projection *pr, const int32_t *placement,
                                  const ggfit_device *devs, size_t n, const ggfit_host_mem *host,
                                  const ggfit_speed_options *o, ggfit_speed *out, char **err)
{
    ggfit_status rc = ggfit_speed_of(m, p, pr, placement, devs, n, o, out, err);
    /* this machine's memory and a leg in it: its measured read rather than
     * the default (unless --host-bw; a unified device's own figure
     * stands), and its CPU's measured compute (unless --host-gflops or
     * --host-tflops) */
    if (rc || !host || !host->this_machine || o->host_bw_default || !out->host_used)
        return rc;
    bool need_bw = o->host_bw_gbs <= 0 && out->host_bw_kind == GGFIT_HOST_BW_DEFAULT;
    bool need_cpu = o->host_gflops <= 0 && o->host_tflops <= 0;
    if (!need_bw && !need_cpu)
        return rc;
    ggfit_host_bw_figure fig;
    if ((rc = ggfit_host_bw_cached(host->cpu_name, host->total, &fig, err)))
        return rc;
    ggfit_speed_options mo = *o;
    bool changed = false;
    if (need_bw && fig.gbs > 0) {
        mo.host_bw_gbs = fig.gbs;
        snprintf(mo.host_bw_from, sizeof mo.host_bw_from, "%s", fig.source);
        changed = true;
    }
    if (need_cpu && fig.gflops_thread > 0) {
        mo.host_gflops = fig.gflops_thread;
        mo.host_gflops_all = fig.gflops_all;
        if (!mo.n_threads && !p->n_threads)   /* llama.cpp's default: a thread per core */
            mo.n_threads = fig.n_cpus;
        changed = true;
    }
    return changed ? ggfit_speed_of(m, p, pr, placement, devs, n, &mo, out, err) : rc;
}

ggfit_status ggfit__speed_of_params(const ggfit_model *m, const ggfit_params *p,
                                    const ggfit_device *devs, size_t n,
                                    const ggfit_host_mem *host, const ggfit_speed_options *o,
                                    ggfit_projection *pr, ggfit_speed *out, char **err)
{
    int32_t *placement = ggfit__calloc(ggfit_model_n_tensors(m) + 1, sizeof *placement);
    if (!placement)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_status rc = ggfit_project(m, p, devs, n, pr, placement, err);
    if (!rc)
        rc = ggfit__speed_on_host(m, p, pr, placement, devs, n, host, o, out, err);
    ggfit_free(placement);
    return rc;
}

void ggfit__plan_speed_brief(const ggfit_speed *s, ggfit_plan_speed *b)
{
    memset(b, 0, sizeof *b);
    b->ok = true;
    b->n_prompt = s->n_prompt;
    b->n_gen = s->n_gen;
    b->depth = s->depth;
    b->pp_tps = s->pp_tps;
    b->tg_tps = s->tg_tps;
    b->host_used = s->host_used;
    b->host_bw_gbs = s->host_bw_gbs;
    b->host_bw_kind = s->host_bw_kind;
    snprintf(b->host_bw_from, sizeof b->host_bw_from, "%s", s->host_bw_from);
    for (uint32_t i = 0; i < s->n_legs; i++)
        if (s->legs[i].device < 0)
            b->host_bytes_per_token = s->legs[i].bytes_per_token;
}

ggfit_status ggfit__plan_speed(const ggfit_model *m, ggfit_plan *pl, char **err)
{
    ggfit_speed_options o;
    ggfit_speed_options_init(&o);
    ggfit_projection *pr = ggfit__calloc(1, sizeof *pr);
    ggfit_speed *s = ggfit__calloc(1, sizeof *s);
    ggfit_status rc = GGFIT_OK;
    memset(&pl->speed, 0, sizeof pl->speed);
    if (!pr || !s) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    /* a plan whose flags cannot be projected already failed before; a
     * speed that cannot be had is left out, not an error */
    char *why = NULL;
    ggfit_status sr = ggfit__speed_of_params(m, ggfit__plan_chosen(pl), pl->devices,
                                             pl->n_devices, &pl->host, &o, pr, s, &why);
    ggfit_free(why);
    if (sr == GGFIT_ENOMEM)
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    else if (!sr)
        ggfit__plan_speed_brief(s, &pl->speed);
done:
    ggfit_free(pr);
    ggfit_free(s);
    return rc;
}
