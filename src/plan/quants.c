/*
 * quants.c - "which quant?": several models (a Hugging Face repo's files,
 * or several -m) planned for one machine as ggfit_request_plan plans one,
 * and ranked so that the best choice comes first. The renderers are
 * render/quant_table.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "plan/plan.h"
#include "render/render.h"
#include "remote/remote.h"

static char *dup_str(const char *s)
{
    return s ? ggfit__strndup(s, strlen(s)) : NULL;
}

/* Blocks on a device whose routed experts stay in system RAM. */
static uint32_t expert_blocks_in_ram(const ggfit_verdict *v)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n_ranges; i++) {
        const ggfit_layer_range *r = &v->ranges[i];
        if (!r->output && r->device >= 0 && (r->experts_on >> GGFIT_MAX_DEVICES & 1))
            n += r->last - r->first + 1;
    }
    return n;
}

/* The figures of q's plan and its rank. */
static void summarize(ggfit_quant *q, const ggfit_model *m)
{
    const ggfit_plan *pl = q->plan;
    const ggfit_projection *pr = pl->has_alternative ? &pl->alternative.projection
                                                     : &pl->projection;
    const ggfit_verdict *v = ggfit__plan_verdict(pl);
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    q->n_ctx = pr->n_ctx;
    q->n_ctx_asked = pl->asked.n_ctx ? pl->asked.n_ctx : hp->n_ctx_train;
    q->n_gpu_layers = pr->n_gpu_layers;
    q->n_layer = hp->n_layer;
    q->expert_blocks_in_ram = expert_blocks_in_ram(v);
    switch (ggfit_plan_exit_status(pl)) {
    case 0:
        if (pl->n_devices > 0 && (q->n_gpu_layers < (int32_t)q->n_layer + 1 ||
                                  q->expert_blocks_in_ram > 0))
            q->rank = GGFIT_RANK_PART_IN_RAM;
        else if (q->n_ctx < q->n_ctx_asked)
            q->rank = GGFIT_RANK_LESS_CONTEXT;
        else
            q->rank = GGFIT_RANK_ALL_ON_DEVICES;
        break;
    case 3:
        q->rank = GGFIT_RANK_HOST_SHORT;
        break;
    default:
        q->rank = GGFIT_RANK_NO_FIT;
        break;
    }
}

/* Plans one model of the list: sub names it (model or model_url). A
 * model's own error goes in its row; running out of memory, or a
 * statically linked program that cannot read it (GGFIT_ESTATIC: every
 * other row would say the same), ends the list with *fatal. */
static ggfit_status plan_one(ggfit_request *sub, const ggfit_device *devs, size_t n_devs,
                             ggfit_quant *q, char **fatal)
{
    ggfit_model *m = NULL;
    char mmproj[512] = "";
    char *err = NULL;
    ggfit_status rc = ggfit__request_model(sub, &m, mmproj, sizeof mmproj, &err);
    if (!rc) {
        const ggfit_gguf *g = ggfit_model_gguf(m);
        q->n_shards = ggfit_gguf_n_shards(g);
        q->size = ggfit_gguf_tensor_bytes(g);
        for (uint32_t i = 0; i < q->n_shards; i++)
            q->size += ggfit_gguf_data_offset(g, i);
        if (!(q->plan = ggfit__calloc(1, sizeof *q->plan))) {
            rc = ggfit__fail(&err, GGFIT_ENOMEM, "out of memory");
        } else {
            memcpy(q->plan->devices, devs, n_devs * sizeof *devs);
            q->plan->n_devices = n_devs;
            rc = ggfit__plan_model(sub, m, "", q->plan, &err);
            if (rc) {
                free(q->plan);
                q->plan = NULL;
            }
        }
    }
    if (rc == GGFIT_ENOMEM || rc == GGFIT_ESTATIC) {
        if (fatal)
            *fatal = err;
        else
            ggfit_free(err);
        ggfit_model_free(m);
        return rc;
    }
    q->status = rc;
    if (rc) {
        q->rank = GGFIT_RANK_ERROR;
        q->error = err ? err : dup_str(ggfit_status_str(rc));
    } else {
        summarize(q, m);
    }
    ggfit_model_free(m);
    return GGFIT_OK;
}

/* The group a rank sorts in: the whole context or the fit's smaller one
 * count alike when all is on the GPUs (without -c the fit picks it). */
static int group(ggfit_quant_rank r)
{
    return r == GGFIT_RANK_LESS_CONTEXT ? GGFIT_RANK_ALL_ON_DEVICES : (int)r;
}

/* a before b: by group; fitting ones the largest first (with part in
 * system RAM the fastest predicted generation first: there the bytes read
 * from RAM decide the speed, not the size), others the smallest. */
static bool before(const ggfit_quant *a, const ggfit_quant *b)
{
    if (group(a->rank) != group(b->rank))
        return group(a->rank) < group(b->rank);
    if (a->rank == GGFIT_RANK_PART_IN_RAM && a->plan->speed.ok && b->plan->speed.ok &&
        a->plan->speed.tg_tps != b->plan->speed.tg_tps)
        return a->plan->speed.tg_tps > b->plan->speed.tg_tps;
    if (a->rank <= GGFIT_RANK_PART_IN_RAM)
        return a->size > b->size;
    if (a->rank < GGFIT_RANK_ERROR)
        return a->size < b->size;
    return false;
}

static void sort_list(ggfit_quant_list *l)
{
    /* insertion sort: stable, and the lists are short */
    for (size_t i = 1; i < l->n; i++) {
        ggfit_quant q = l->quants[i];
        size_t j = i;
        while (j > 0 && before(&q, &l->quants[j - 1])) {
            l->quants[j] = l->quants[j - 1];
            j--;
        }
        l->quants[j] = q;
    }
}

ggfit_status ggfit_request_quants(ggfit_request *r, const char *const *models, size_t n,
                                  ggfit_quant_list *out, char **err)
{
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n_devs = 0;
    ggfit_hf_model hf;
    const char **files = NULL;
    uint32_t *shards = NULL;
    char (*tags)[64] = NULL;
    char *endpoint = NULL;
    ggfit_status rc;
    if (err)
        *err = NULL;
    if (!r || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_request_quants: NULL argument");
    memset(out, 0, sizeof *out);
    memset(&hf, 0, sizeof hf);
    if (!r->hf_repo && (!models || n == 0))
        return ggfit__fail(err, GGFIT_EINVAL, "-m FILE is needed");
    if (r->hf_repo && r->hf_file)
        return ggfit__fail(err, GGFIT_EINVAL, "-hff names one file; a list takes the "
                           "repository (and a quant: -hf USER/MODEL:QUANT)");
    /* the version and the devices first, as for one plan: a bad --gpu
     * before any model */
    if ((rc = ggfit_request_version(r, err)) ||
        (rc = ggfit_request_devices(r, devs, GGFIT_MAX_DEVICES, &n_devs, err)))
        return rc;
    out->llama = r->llama;
    if (r->hf_repo) {
        ggfit_remote_options o;
        ggfit_remote_options_init(&o);
        o.token = r->hf_token;
        o.offline = r->offline;
        o.progress = isatty(STDERR_FILENO);
        if ((rc = ggfit_hf_resolve(r->hf_repo, NULL, &o, NULL, &hf, err)))
            return rc;
        n = hf.n_files;
        files = ggfit__calloc(n ? n : 1, sizeof *files);
        shards = ggfit__calloc(n ? n : 1, sizeof *shards);
        tags = ggfit__calloc(n ? n : 1, sizeof *tags);
        if (!files || !shards || !tags) {
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
            goto out;
        }
        n = ggfit__hf_model_files(&hf, hf.tag, files, shards, tags, n);
        if (!(out->repo = dup_str(hf.repo)) || !(out->commit = dup_str(hf.commit))) {
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
            goto out;
        }
    }
    if (!(out->quants = ggfit__calloc(n ? n : 1, sizeof *out->quants))) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto out;
    }
    if (r->hf_repo && !(endpoint = ggfit_hf_endpoint())) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        ggfit_quant *q = &out->quants[out->n++];
        ggfit_request sub = *r;
        sub.hf_repo = sub.hf_file = sub.model_url = NULL;
        if (files) {
            ggfit_sb sb = {0};
            ggfit__sb_printf(&sb, "%s%s/resolve/%s/%s", endpoint, hf.repo, hf.commit,
                             files[i]);
            q->url = ggfit__sb_take(&sb);
            q->name = dup_str(files[i]);
            memcpy(q->tag, tags[i], sizeof q->tag);
            sub.model_url = q->url;
        } else {
            q->name = dup_str(models[i]);
            q->url = ggfit_is_url(models[i]) ? dup_str(models[i]) : NULL;
            ggfit__quant_tag(models[i], q->tag);
            sub.model = models[i];
        }
        if (!q->name || (files && !q->url)) {
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
            break;
        }
        q->n_shards = files ? shards[i] : 1;
        if ((rc = plan_one(&sub, devs, n_devs, q, err)) && err && !*err)
            ggfit__fail(err, rc, "out of memory");
    }
    if (!rc)
        sort_list(out);
out:
    free(endpoint);
    free(files);
    free(shards);
    free(tags);
    ggfit_hf_model_free(&hf);
    if (rc)
        ggfit_quant_list_free(out);
    return rc;
}
