/*
 * fit.c - llama.cpp's --fit decision (common/fit.cpp, common_params_fit_impl),
 * step for step, with ggfit's projection in place of llama.cpp's dry-run
 * model loads:
 *  1. project the user's flags; if every device keeps its margin, done;
 *  2. if -c was not given, shrink the context towards -fitc by linear
 *     interpolation between the projections at -fitc and the trained size;
 *  3. otherwise fill layers back to front per device (for MoE models with
 *     every expert tensor in system memory first), searching by false
 *     position over layer counts;
 *  4. for MoE models whose dense weights fit, turn dense-only layers into
 *     full layers front to back, then try to fit part of one more layer
 *     (up/gate, or attention only) with its overflow on the next device.
 * The search takes the same steps as llama.cpp so that it lands on the same
 * answer; each step costs a projection (microseconds) instead of a load.
 * Where llama.cpp aborts on a flag the user set, the caller's continuation
 * runs instead (ggfit_fit in fit_around.c passes --fit-around's), and the
 * steps it calls vary only at the hooks it sets (fitter.h's fit_hooks).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "common/fitter.h"
#include "common/params.h"
#include "project/graph_cache.h"
#include "project/project.h"
#include "llama/patterns.h"
#include "versions/version.h"

void ggfit_fit_options_init(ggfit_fit_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->n_ctx_min = 4096;
}

void ggfit__fit_log(fitter *f, const char *fmt, ...)
{
    if (f->no_log)
        return;   /* formatting the lines is most of what the log costs */
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ggfit__sb_printf(&f->log, "common_params_fit_impl: %s\n", line);
}

/* The KV streams the fit counts (FIT_N_STREAMS; one before it). */
static uint32_t fit_streams(const ggfit_params *p)
{
    if (!ggfit__llama_has(p->llama_build, LLAMA_CHANGE_FIT_N_STREAMS))
        return 1;
    return !p->kv_unified && p->n_seq > 1 ? p->n_seq : 1;
}

/* a x streams, saturated (llama.cpp keeps UINT32_MAX, -fitc's "the full
 * context" sentinel, so) */
static uint32_t times_streams(uint32_t a, uint32_t streams)
{
    uint64_t x = (uint64_t)a * streams;
    return x < UINT32_MAX ? (uint32_t)x : UINT32_MAX;
}

uint32_t ggfit__fit_ctx_max(const ggfit_model *m, const ggfit_params *p)
{
    return times_streams(ggfit_model_hparams(m)->n_ctx_train, fit_streams(p));
}

void ggfit__fit_extra_free(ggfit_fit_extra *e)
{
    if (e) {
        ggfit_model_free(e->own);
        free(e);
    }
}

/* The extra model's bytes at context n_ctx (add_extra_memory), projected
 * again when the context moved: on the fit's devices into
 * f->extra_mem[], the host's into f->extra_host. A projection that fails
 * leaves them zero, as llama.cpp fits without it then. */
static void extra_measure(fitter *f, uint32_t n_ctx)
{
    const ggfit_fit_extra *e = f->extra;
    if (f->extra_done && f->extra_ctx == n_ctx)
        return;
    f->extra_done = true;
    f->extra_ctx = n_ctx;
    memset(f->extra_mem, 0, sizeof f->extra_mem);
    memset(f->extra_model, 0, sizeof f->extra_model);
    f->extra_host = 0;
    ggfit__fit_log(f, "getting device memory data for the extra model at a context size of %u:",
                   n_ctx);
    ggfit_params p;
    ggfit__params_copy(&p, &e->params);
    p.n_ctx = n_ctx;
    ggfit_device devs[GGFIT_MAX_DEVICES];
    uint32_t n = 0;
    for (uint32_t j = 0; j < e->n_devs && j < GGFIT_MAX_DEVICES; j++)
        if (e->at[j] < f->n_caller_devs)
            devs[n++] = f->caller_devs[e->at[j]];
    ggfit_projection *pr = &f->scratch;
    char *why = NULL;
    ggfit_status rc = ggfit_project(e->own ? e->own : f->m, &p, devs, n, pr, NULL, &why);
    f->n_proj++;
    if (rc) {
        ggfit__fit_log(f, "failed to measure the memory of the extra model, fitting without it: "
                       "%s", why ? why : "");
        ggfit_free(why);
        return;
    }
    for (uint32_t j = 0; j < pr->n_devices; j++) {
        const ggfit_mem *r = &pr->devices[j];
        uint32_t caller = e->at[pr->device_of[j]];
        for (size_t d = 0; d < f->nd; d++)
            if (f->orig[d] == caller) {
                f->extra_mem[d] += (int64_t)((e->shares_model ? 0 : r->model) + r->context +
                                             r->compute);
                f->extra_model[d] += (int64_t)(e->shares_model ? 0 : r->model);
                break;
            }
    }
    f->extra_host = (int64_t)((e->shares_model ? 0 : pr->host.model + pr->cpu_extra.model) +
                              pr->host.context + pr->host.compute + pr->cpu_extra.context);
}

/* Projects params p: device totals into mem[], the host's into *host,
 * the devices' weights into *model_sum; with the extra model's bytes at
 * p's context added (FIT_N_STREAMS), its weights too (add_extra_memory
 * adds them before common_params_fit_impl sums sum_projected_model). */
ggfit_status ggfit__fit_project(fitter *f, const ggfit_params *p, int64_t *mem, int64_t *host,
                               int64_t *model_sum)
{
    ggfit_projection *pr = &f->scratch;
    ggfit_status rc = ggfit__project_cached(f->m, p, f->devs, f->nd, pr, NULL, f->cache, f->err);
    f->n_proj++;
    if (rc)
        return rc;
    int64_t models = 0;
    for (size_t d = 0; d < f->nd; d++) {
        const ggfit_mem *r = &pr->devices[d];
        mem[d] = (int64_t)(r->model + r->context + r->compute);
        models += (int64_t)r->model;
    }
    int64_t h = (int64_t)(pr->host.model + pr->host.context + pr->host.compute +
                          pr->cpu_extra.model + pr->cpu_extra.context);
    if (f->extra) {
        /* after the model's figures are read: the extra reuses the scratch */
        extra_measure(f, p->n_ctx);
        for (size_t d = 0; d < f->nd; d++) {
            mem[d] += f->extra_mem[d];
            models += f->extra_model[d];
        }
        h += f->extra_host;
    }
    if (host)
        *host = h;
    if (model_sum)
        *model_sum = models;
    return GGFIT_OK;
}

/* ---- flags for a layer distribution (set_ngl_tensor_split_tbo) ---------- */

/* "blk\.<il>\.<tail>", as snprintf(buf, n, "blk\\.%u\\.%s", ...) writes it:
 * the fit writes one for every block it moves, in every projection, and
 * printf's machinery was most of set_flags' cost. */
static void overflow_pattern(char *buf, size_t n, uint32_t il, fraction lf)
{
    size_t at = ggfit__str_put(buf, n, 0, "blk\\.");
    at = ggfit__str_put_u(buf, n, at, il);
    at = ggfit__str_put(buf, n, at, "\\.");
    ggfit__str_put(buf, n, at, ggfit__ffn_tail[lf]);
}

/* overflow[d]: device index the first partial layer of device d spills to,
 * or -1 for system memory. */
ggfit_status ggfit__fit_set_flags(fitter *f, const ngl_t *ngl, const int *overflow,
                                 ggfit_params *p)
{
    p->n_gpu_layers = 0;
    for (size_t d = 0; d < f->nd; d++) {
        p->n_gpu_layers += (int32_t)ngl[d].n_layer;
        if (f->nd > 1 && !f->hooks.keep_ts)
            p->tensor_split[d] = (float)ngl[d].n_layer;
    }
    uint32_t il0 = f->hp_ngl + 1 - (uint32_t)p->n_gpu_layers;
    p->n_overrides = f->hooks.n_keep;
    for (size_t d = 0; d < f->nd; d++) {
        il0 += ngl[d].n_layer - ngl[d].n_part;
        for (uint32_t il = il0; il < il0 + ngl[d].n_part; il++) {
            if (f->hooks.block_kept && f->hooks.block_kept(p, il))
                continue;
            if (p->n_overrides >= GGFIT_MAX_OVERRIDES)
                return ggfit__fail(f->err, GGFIT_ELIMIT,
                                   "the fit needs more than %d tensor overrides",
                                   GGFIT_MAX_OVERRIDES);
            ggfit_override *o = &p->overrides[p->n_overrides++];
            *o = (ggfit_override){ 0 };   /* the string tails too: results compare whole */
            bool first = il == il0;
            overflow_pattern(o->pattern, sizeof o->pattern, il, first ? ngl[d].overflow : LF_MOE);
            int to = first ? overflow[d] : -1;
            ggfit__str_put(o->buffer, sizeof o->buffer, 0, to < 0 ? "CPU" : f->devs[to].name);
        }
        il0 += ngl[d].n_part;
    }
    if (f->hooks.flags_done)
        f->hooks.flags_done(f, p);
    return GGFIT_OK;
}

/* Memory per device with the given layers per device (get_memory_for_layers). */
ggfit_status ggfit__fit_memory_for(fitter *f, const ngl_t *ngl, const int *overflow,
                                  int64_t *mem)
{
    ggfit_params p;
    ggfit__params_copy(&p, &f->p);
    ggfit_status rc = ggfit__fit_set_flags(f, ngl, overflow, &p);
    if (!rc)
        rc = ggfit__fit_project(f, &p, mem, NULL, NULL);
    if (!rc) {
        ggfit__fit_log(f, "memory for test allocation by device:");
        for (size_t d = 0; d < f->nd; d++)
            ggfit__fit_log(f, "id=%zu, n_layer=%2u, n_part=%2u, overflow_type=%d, mem=%6lld MiB", d,
                  ngl[d].n_layer, ngl[d].n_part, (int)ngl[d].overflow,
                  (long long)(mem[d] / MiB));
    }
    return rc;
}

/* ---- the steps ---------------------------------------------------------- */

/* Step 1: does the user's configuration fit as it is? */
static ggfit_status step_initial(fitter *f, int64_t *mem, int64_t *sum_used, int64_t *sum_free,
                        int64_t *sum_proj_free, int64_t *sum_model, bool *done)
{
    int64_t host;
    ggfit__fit_log(f, "getting device memory data for initial parameters:");
    if (f->ctx_auto && f->n_streams > 1 && f->p.n_ctx)
        ggfit__fit_log(f, "context size unset and KV cache not unified -> using %u for %u "
                       "sequences:", f->n_ctx_max, f->n_streams);
    ggfit_status rc = ggfit__fit_project(f, &f->p, mem, &host, sum_model);
    if (rc)
        return rc;
    *sum_used = *sum_free = *sum_proj_free = 0;
    *done = false;
    if (f->nd == 0) {
        *sum_used = host;
        *sum_free = f->free[0];
        *sum_proj_free = *sum_free - *sum_used;
        ggfit__fit_log(f, "projected to use %lld MiB of host memory vs. %lld MiB of total host memory",
              (long long)(*sum_used / MiB), (long long)(*sum_free / MiB));
        if (*sum_proj_free >= f->margin[0]) {
            ggfit__fit_log(f, "will leave %lld >= %lld MiB of system memory, no changes needed",
                  (long long)(*sum_proj_free / MiB), (long long)(f->margin[0] / MiB));
            *done = true;
        }
        return GGFIT_OK;
    }
    if (f->nd > 1)
        ggfit__fit_log(f, "projected memory use with initial parameters [MiB]:");
    bool all_ok = true;
    for (size_t d = 0; d < f->nd; d++) {
        int64_t proj_free = f->free[d] - mem[d];
        *sum_free += f->free[d];
        *sum_used += mem[d];
        *sum_proj_free += proj_free;
        all_ok &= proj_free >= f->margin[d];
        if (f->nd > 1)
            ggfit__fit_log(f, "  - %s: %6lld total, %6lld used, %6lld free vs. target of %6lld",
                  f->devs[d].name, (long long)(f->devs[d].total / MiB),
                  (long long)(mem[d] / MiB), (long long)(proj_free / MiB),
                  (long long)(f->margin[d] / MiB));
    }
    ggfit__fit_log(f, "projected to use %lld MiB of device memory vs. %lld MiB of free device memory",
          (long long)(*sum_used / MiB), (long long)(*sum_free / MiB));
    if (all_ok) {
        if (f->nd == 1)
            ggfit__fit_log(f, "will leave %lld >= %lld MiB of free device memory, no changes needed",
                  (long long)((f->free[0] - mem[0]) / MiB), (long long)(f->margin[0] / MiB));
        else
            ggfit__fit_log(f, "targets for free memory can be met on all devices, no changes needed");
        *done = true;
    }
    return GGFIT_OK;
}

/* Step 2: a smaller context, when -c was not given. */
/* a * b as llama.cpp's int64_t product comes out: wrapped where a
 * header's context length makes it overflow, which in C would be
 * undefined. */
static int64_t mul_wrapped(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

static ggfit_status step_context(fitter *f, int64_t sum_used, int64_t sum_free, int64_t sum_proj_free,
                        int64_t sum_model, bool *done)
{
    size_t nm = f->nd ? f->nd : 1;
    int64_t surplus = sum_proj_free;
    for (size_t d = 0; d < nm; d++)
        surplus -= f->margin[d];
    *done = false;
    if (surplus >= 0)
        return GGFIT_OK;
    if (f->nd <= 1)
        ggfit__fit_log(f, "cannot meet free memory target of %lld MiB, need to reduce device memory by "
                 "%lld MiB", (long long)(f->margin[0] / MiB), (long long)(-surplus / MiB));
    else
        ggfit__fit_log(f, "cannot meet free memory targets on all devices, need to use %lld MiB less in "
                 "total", (long long)(-surplus / MiB));
    if (!f->ctx_auto) {
        ggfit__fit_log(f, "context size set by user to %u -> no change", f->p.n_ctx);
        return GGFIT_OK;
    }
    uint32_t hi = f->n_ctx_max, lo = f->n_ctx_min_total;
    if (!(hi > lo)) {
        if (f->n_ctx_min == UINT32_MAX)
            ggfit__fit_log(f, "user has requested full context size of %u -> no change", hi);
        else
            ggfit__fit_log(f, "default model context size is %u which is <= the min. context size of "
                     "%u -> no change", hi, lo);
        return GGFIT_OK;
    }
    int64_t target = sum_free;
    for (size_t d = 0; d < nm; d++)
        target -= f->margin[d];
    if (f->nd > 1) {
        /* Whole layers (dense) or whole tensors (MoE, about a third of a
         * layer) per device waste about half of one each: leave room. */
        uint32_t ngl = (uint32_t)f->p.n_gpu_layers;
        int64_t per_layer = sum_model / (int64_t)(ngl < f->hp_ngl ? ngl : f->hp_ngl);
        target -= (int64_t)((uint64_t)(f->nd + 1) * (uint64_t)per_layer /
                            (f->hp_nex == 0 ? 2u : 6u));
    }
    int64_t mem[GGFIT_MAX_DEVICES], host, used_min = 0;
    f->p.n_ctx = lo;
    ggfit_status rc = ggfit__fit_project(f, &f->p, mem, &host, NULL);
    if (rc)
        return rc;
    if (f->nd == 0)
        used_min = host;
    for (size_t d = 0; d < f->nd; d++)
        used_min += mem[d];
    if (target > used_min) {
        int64_t add = mul_wrapped(hi - lo, target - used_min) / (sum_used - used_min);
        uint32_t n_ctx = (uint32_t)(f->p.n_ctx + (uint64_t)add);
        /* rounded down for CUDA, a multiple of the streams (FIT_N_STREAMS;
         * one stream before it) */
        n_ctx -= (uint32_t)(n_ctx % (256 * (uint64_t)f->n_streams));
        f->p.n_ctx = n_ctx > lo ? n_ctx : lo;
        int64_t per_ctx = (sum_used - used_min) / (int64_t)(hi - lo);
        ggfit__fit_log(f, "context size reduced from %u to %u -> need %lld MiB less memory in total",
              hi, f->p.n_ctx, (long long)(mul_wrapped(hi - f->p.n_ctx, per_ctx) / MiB));
        if (f->nd <= 1) {
            ggfit__fit_log(f, "entire model can be fit by reducing context");
            *done = true;
            return GGFIT_OK;
        }
        ggfit__fit_log(f, "entire model should be fit across devices by reducing context");
    } else {
        ggfit__fit_log(f, "context size reduced from %u to %u -> need %lld MiB less memory in total",
              hi, f->p.n_ctx, (long long)((sum_used - used_min) / MiB));
    }
    return GGFIT_OK;
}

/* The configuration is fixed by the user where llama.cpp would change it:
 * returns a reason, or NULL. */
static const char *locked(const fitter *f, const ggfit_params *user, char *buf, size_t n)
{
    if (user->n_gpu_layers != GGFIT_NGL_AUTO) {
        snprintf(buf, n, "n_gpu_layers already set by user to %d, abort", user->n_gpu_layers);
        return buf;
    }
    if (f->nd > 1) {
        for (size_t d = 0; d < f->nd; d++)
            if (user->tensor_split[d] != 0.0f)
                return "model_params::tensor_split already set by user, abort";
        if (user->split_mode == GGFIT_SPLIT_ROW)
            return "changing weight allocation for LLAMA_SPLIT_MODE_ROW not implemented, abort";
    }
    if (user->n_overrides || user->cpu_moe || user->n_cpu_moe)
        return "model_params::tensor_buft_overrides already set by user, abort";
    return NULL;
}

/* Shrinks the high bound towards the target by false position; step(test)
 * builds a candidate `step_size` layers up from the low bound. */
typedef struct search {
    ngl_t lo[GGFIT_MAX_DEVICES], hi[GGFIT_MAX_DEVICES];
    int64_t mem_lo[GGFIT_MAX_DEVICES], mem_hi[GGFIT_MAX_DEVICES];
} search;

static uint32_t step_size(uint32_t delta, int64_t target, int64_t lo, int64_t hi)
{
    /* llama.cpp divides by hi - lo unchecked; blocks that hold nothing can
     * make it 0, where ggfit steps by one layer instead of crashing. */
    uint32_t s = hi > lo ? (uint32_t)((int64_t)delta * (target - lo) / (hi - lo)) : 1;
    if (s < 1)
        s = 1;
    if (s > delta - 1)
        s = delta - 1;
    return s;
}

/* Step 3: fill (dense-only) layers back to front. */
static ggfit_status step_fill_dense(fitter *f, ngl_t *ngl, int64_t *mem, const int64_t *target,
                           const int *overflow)
{
    size_t nd = f->nd;
    ggfit_status rc;
    ggfit__fit_log(f, f->hp_nex == 0 ? "filling dense layers back-to-front:"
                            : "filling dense-only layers back-to-front:");
    for (int id = (int)nd - 1; id >= 0; id--) {
        uint32_t unassigned = f->hooks.n_place;
        for (size_t jd = (size_t)id + 1; jd < nd; jd++)
            unassigned -= ngl[jd].n_layer;
        ngl_t hi[GGFIT_MAX_DEVICES];
        int64_t mem_hi[GGFIT_MAX_DEVICES];
        memcpy(hi, ngl, nd * sizeof *hi);
        hi[id].n_layer = unassigned;
        if (f->hp_nex > 0)
            hi[id].n_part = (size_t)id < nd - 1 ? hi[id].n_layer : hi[id].n_layer - 1;
        if (hi[id].n_layer > 0) {
            if ((rc = ggfit__fit_memory_for(f, hi, overflow, mem_hi)))
                return rc;
            if (mem_hi[id] > target[id]) {
                uint32_t delta = hi[id].n_layer - ngl[id].n_layer;
                ggfit__fit_log(f, "start filling device %d, delta=%u", id, delta);
                while (delta > 1) {
                    uint32_t s = step_size(delta, target[id], mem[id], mem_hi[id]);
                    ngl_t test[GGFIT_MAX_DEVICES];
                    int64_t mem_test[GGFIT_MAX_DEVICES];
                    memcpy(test, ngl, nd * sizeof *test);
                    test[id].n_layer += s;
                    if (f->hp_nex)
                        /* on the last device the first layer is the output
                         * layer, which is always whole */
                        test[id].n_part += (size_t)id == nd - 1 && test[id].n_part == 0 ? s - 1 : s;
                    if ((rc = ggfit__fit_memory_for(f, test, overflow, mem_test)))
                        return rc;
                    if (mem_test[id] <= target[id]) {
                        memcpy(ngl, test, nd * sizeof *ngl);
                        memcpy(mem, mem_test, nd * sizeof *mem);
                        ggfit__fit_log(f, "set ngl_per_device[%d].n_layer=%u", id, ngl[id].n_layer);
                    } else {
                        memcpy(hi, test, nd * sizeof *hi);
                        memcpy(mem_hi, mem_test, nd * sizeof *mem_hi);
                        ggfit__fit_log(f, "set ngl_per_device_high[%d].n_layer=%u", id, hi[id].n_layer);
                    }
                    delta = hi[id].n_layer - ngl[id].n_layer;
                }
            } else {
                memcpy(ngl, hi, nd * sizeof *ngl);
                memcpy(mem, mem_hi, nd * sizeof *mem);
                ggfit__fit_log(f, "set ngl_per_device[%d].n_layer=%u", id, ngl[id].n_layer);
            }
        }
        ggfit__fit_log(f, "  - %s: %2u layers, %6lld MiB used, %6lld MiB free", f->devs[id].name,
              ngl[id].n_layer, (long long)(mem[id] / MiB),
              (long long)((f->free[id] - mem[id]) / MiB));
    }
    return GGFIT_OK;
}

static uint32_t n_full(const ngl_t *n)
{
    return n->n_layer - n->n_part;
}

/* Tries part of one more layer on device id (the last step of step 4). */
static ggfit_status try_extra_layer(fitter *f, size_t id, ngl_t *ngl, int64_t *mem, const int64_t *target,
                           int *overflow, size_t *dense_start)
{
    size_t nd = f->nd;
    if (!(ngl[*dense_start].n_layer > (id < nd - 1 ? 0u : 1u)))
        return GGFIT_OK;
    ngl_t test[GGFIT_MAX_DEVICES];
    int64_t mem_test[GGFIT_MAX_DEVICES];
    int over_test[GGFIT_MAX_DEVICES];
    memcpy(test, ngl, nd * sizeof *test);
    memcpy(over_test, overflow, nd * sizeof *over_test);
    size_t ds_test = *dense_start;
    test[ds_test].n_layer--;
    test[ds_test].n_part--;
    test[id].n_layer++;
    test[id].n_part++;
    if (test[ds_test].n_part == 0)
        ds_test++;
    test[id].overflow = LF_UP;
    if (id < nd - 1)
        over_test[id] = (int)id + 1;
    ggfit__fit_log(f, "trying to fit one extra layer with overflow_type=LAYER_FRACTION_UP");
    ggfit_status rc = ggfit__fit_memory_for(f, test, over_test, mem_test);
    if (rc)
        return rc;
#define FITS(m) ((m)[id] < target[id] && (id + 1 == nd || (m)[id + 1] < target[id + 1]))
#define ACCEPT(name) do { \
        memcpy(ngl, test, nd * sizeof *ngl); \
        memcpy(overflow, over_test, nd * sizeof *overflow); \
        memcpy(mem, mem_test, nd * sizeof *mem); \
        *dense_start = ds_test; \
        ggfit__fit_log(f, "set ngl_per_device[%zu].(n_layer, n_part, overflow_type)=(%u, %u, " name \
                 "), id_dense_start=%zu", id, ngl[id].n_layer, ngl[id].n_part, *dense_start); \
    } while (0)
    if (FITS(mem_test)) {
        ACCEPT("UP");
        test[id].overflow = LF_GATE;
        ggfit__fit_log(f, "trying to fit one extra layer with overflow_type=LAYER_FRACTION_GATE");
        if ((rc = ggfit__fit_memory_for(f, test, over_test, mem_test)))
            return rc;
        if (FITS(mem_test))
            ACCEPT("GATE");
    } else {
        test[id].overflow = LF_ATTN;
        ggfit__fit_log(f, "trying to fit one extra layer with overflow_type=LAYER_FRACTION_ATTN");
        if ((rc = ggfit__fit_memory_for(f, test, over_test, mem_test)))
            return rc;
        if (FITS(mem_test))
            ACCEPT("ATTN");
    }
#undef FITS
#undef ACCEPT
    return GGFIT_OK;
}

/* Step 4: MoE models whose dense weights fit get full layers front to back. */
static ggfit_status step_fill_moe(fitter *f, ngl_t *ngl, int64_t *mem, const int64_t *target,
                         int *overflow)
{
    size_t nd = f->nd, dense_start = nd;
    ggfit_status rc;
    for (int id = (int)nd - 1; id >= 0; id--) {
        if (ngl[id].n_layer > 0) {
            dense_start = (size_t)id;
            continue;
        }
        break;
    }
    ggfit__fit_log(f, "converting dense-only layers to full layers and filling them front-to-back with "
             "overflow to next device/system memory:");
    for (size_t id = 0; id <= dense_start && dense_start < nd; id++) {
        ngl_t hi[GGFIT_MAX_DEVICES];
        int64_t mem_hi[GGFIT_MAX_DEVICES];
        memcpy(hi, ngl, nd * sizeof *hi);
        for (size_t jd = dense_start; jd < nd; jd++) {
            uint32_t move = jd < nd - 1 ? hi[jd].n_layer : hi[jd].n_layer - 1;
            hi[id].n_layer += move;
            hi[jd].n_layer -= move;
            hi[jd].n_part = 0;
        }
        size_t dense_start_hi = nd - 1;
        if ((rc = ggfit__fit_memory_for(f, hi, overflow, mem_hi)))
            return rc;
        if (mem_hi[id] > target[id]) {
            uint32_t delta = n_full(&hi[id]) - n_full(&ngl[id]);
            while (delta > 1) {
                uint32_t s = step_size(delta, target[id], mem[id], mem_hi[id]);
                ngl_t test[GGFIT_MAX_DEVICES];
                int64_t mem_test[GGFIT_MAX_DEVICES];
                memcpy(test, ngl, nd * sizeof *test);
                size_t ds_test = dense_start;
                uint32_t converted = 0;
                for (; ds_test < nd; ds_test++) {
                    uint32_t c = s - converted < test[ds_test].n_part ? s - converted
                                                                     : test[ds_test].n_part;
                    test[ds_test].n_layer -= c;
                    test[ds_test].n_part -= c;
                    test[id].n_layer += c;
                    converted += c;
                    if (test[ds_test].n_part > 0)
                        break;
                }
                if ((rc = ggfit__fit_memory_for(f, test, overflow, mem_test)))
                    return rc;
                if (mem_test[id] <= target[id]) {
                    memcpy(ngl, test, nd * sizeof *ngl);
                    memcpy(mem, mem_test, nd * sizeof *mem);
                    dense_start = ds_test;
                    ggfit__fit_log(f, "set ngl_per_device[%zu].(n_layer, n_part)=(%u, %u), "
                             "id_dense_start=%zu", id, ngl[id].n_layer, ngl[id].n_part, dense_start);
                } else {
                    memcpy(hi, test, nd * sizeof *hi);
                    memcpy(mem_hi, mem_test, nd * sizeof *mem_hi);
                    dense_start_hi = ds_test;
                    ggfit__fit_log(f, "set ngl_per_device_high[%zu].(n_layer, n_part)=(%u, %u), "
                             "id_dense_start_high=%zu", id, hi[id].n_layer, hi[id].n_part,
                          dense_start_hi);
                }
                delta = n_full(&hi[id]) - n_full(&ngl[id]);
            }
        } else {
            memcpy(ngl, hi, nd * sizeof *ngl);
            memcpy(mem, mem_hi, nd * sizeof *mem);
            dense_start = dense_start_hi;
            ggfit__fit_log(f, "set ngl_per_device[%zu].(n_layer, n_part)=(%u, %u), id_dense_start=%zu",
                  id, ngl[id].n_layer, ngl[id].n_part, dense_start);
        }
        if ((rc = try_extra_layer(f, id, ngl, mem, target, overflow, &dense_start)))
            return rc;
        ggfit__fit_log(f, "  - %s: %2u layers (%2u overflowing), %6lld MiB used, %6lld MiB free",
              f->devs[id].name, ngl[id].n_layer, ngl[id].n_part, (long long)(mem[id] / MiB),
              (long long)((f->free[id] - mem[id]) / MiB));
    }
    for (size_t id = dense_start + 1; id < nd; id++)
        ggfit__fit_log(f, "  - %s: %2u layers (%2u overflowing), %6lld MiB used, %6lld MiB free",
              f->devs[id].name, ngl[id].n_layer, ngl[id].n_part, (long long)(mem[id] / MiB),
              (long long)((f->free[id] - mem[id]) / MiB));
    return GGFIT_OK;
}

/* Steps 3 and 4 (everything after the context). */
ggfit_status ggfit__fit_layers(fitter *f, ggfit_fit_result *out)
{
    size_t nd = f->nd;
    ggfit_status rc;
    int64_t target[GGFIT_MAX_DEVICES], mem[GGFIT_MAX_DEVICES];
    int overflow[GGFIT_MAX_DEVICES];
    ngl_t ngl[GGFIT_MAX_DEVICES];
    memset(ngl, 0, sizeof ngl);
    for (size_t d = 0; d < GGFIT_MAX_DEVICES; d++)
        overflow[d] = -1;   /* all of them: what gcc cannot see is read only below nd */
    for (size_t d = 0; d < nd; d++)
        ngl[d].overflow = LF_MOE;
    int64_t surplus_cpu_moe = 0;
    if (f->hp_nex > 0) {
        ggfit_params p;
        ggfit__params_copy(&p, &f->p);
        int64_t m[GGFIT_MAX_DEVICES];
        if (f->hooks.n_keep >= GGFIT_MAX_OVERRIDES)
            return ggfit__fail(f->err, GGFIT_ELIMIT, "the fit needs more than %d tensor "
                               "overrides", GGFIT_MAX_OVERRIDES);
        ggfit_override *all = &p.overrides[f->hooks.n_keep];
        *all = (ggfit_override){ 0 };
        p.n_overrides = f->hooks.n_keep + 1;
        snprintf(all->pattern, sizeof all->pattern,
                 "blk\\.\\d+\\.ffn_(up|down|gate_up|gate)_(ch|)exps");
        snprintf(all->buffer, sizeof all->buffer, "CPU");
        ggfit__fit_log(f, "getting device memory data with all MoE tensors moved to system memory:");
        if ((rc = ggfit__fit_project(f, &p, m, NULL, NULL)))
            return rc;
        for (size_t d = 0; d < nd; d++)
            surplus_cpu_moe += f->free[d] - m[d] - f->margin[d];
        if (surplus_cpu_moe > 0)
            ggfit__fit_log(f, "with only dense weights in device memory there is a total surplus of %lld MiB",
                  (long long)(surplus_cpu_moe / MiB));
        else
            ggfit__fit_log(f, "with only dense weights in device memory there is still a total deficit of "
                     "%lld MiB", (long long)(-surplus_cpu_moe / MiB));
    }
    for (size_t d = 0; d < nd; d++) {
        target[d] = f->free[d] - f->margin[d];
        ggfit__fit_log(f, "id=%zu, target=%lld MiB", d, (long long)(target[d] / MiB));
    }
    if ((rc = ggfit__fit_memory_for(f, ngl, overflow, mem)) ||
        (rc = step_fill_dense(f, ngl, mem, target, overflow)))
        return rc;
    if (f->hp_nex > 0 && surplus_cpu_moe > 0 &&
        (rc = step_fill_moe(f, ngl, mem, target, overflow)))
        return rc;
    rc = ggfit__fit_set_flags(f, ngl, overflow, &f->p);
    if (!rc)
        out->status = GGFIT_FIT_FITS;
    if (f->hooks.layers_done)
        f->hooks.layers_done(f, ngl, overflow);
    return rc;
}

ggfit_status ggfit__fit_run(const ggfit_model *m, const ggfit_params *p, const ggfit_device *devs,
                            size_t n, const ggfit_fit_options *opt, ggfit_fit_result *out,
                            ggfit__fit_on_set_fn on_set, char **err)
{
    if (err)
        *err = NULL;
    if (!m || !p || !out || (n && !devs))
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_fit: NULL argument");
    if (n > GGFIT_MAX_DEVICES)
        return ggfit__fail(err, GGFIT_EINVAL, "more than %d devices", GGFIT_MAX_DEVICES);
    /* All but the overrides, which are read only below n_overrides and
     * copied so (ggfit__params_copy): they are nearly all of the result. */
    const ggfit__hole ov = { offsetof(ggfit_fit_result, params.overrides),
                             sizeof out->params.overrides };
    ggfit__zero_except(out, sizeof *out, &ov, 1);
    ggfit_fit_options defaults;
    if (!opt || opt->size < sizeof *opt) {
        /* a program built with fewer fields: those it set, the defaults for
         * the others (ggfit.h's size) */
        ggfit_fit_options_init(&defaults);
        if (opt)
            memcpy(&defaults, opt, opt->size);
        defaults.size = sizeof defaults;
        opt = &defaults;
    }
    /* All zero but the overrides of the flags being fitted, which are read
     * only below n_overrides: they are nearly all of the fitter, and zeroing
     * them touched some twenty fresh pages (faults) whenever the allocator
     * had to clear the block. */
    fitter *f = ggfit__malloc(sizeof *f);
    if (!f)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    const ggfit__hole fov = { offsetof(fitter, p.overrides), sizeof f->p.overrides };
    ggfit__zero_except(f, sizeof *f, &fov, 1);
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    f->cache = ggfit__gcache_take(m);
    if (!f->cache) {
        free(f);
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    }
    f->cache->cached_split = true;   /* the model's splits resume the last one */
    f->m = m;
    ggfit__params_copy(&f->p, p);
    f->err = err;
    f->no_log = opt->no_log;
    f->n_ctx_min = p->set_n_ctx && p->n_ctx == 0 ? UINT32_MAX : opt->n_ctx_min;
    /* common_get_device_memory_data: load_mtp counts the NextN blocks */
    f->hp_ngl = hp->n_layer - (p->load_mtp ? 0 : hp->n_nextn);
    f->hp_nct = hp->n_ctx_train;
    f->hp_nex = hp->n_expert;
    f->hooks.n_place = f->hp_ngl + 1;
    /* The context's range. FIT_N_STREAMS: each of -np's streams (no -kvu)
     * holds a whole context, and the unset context is resolved to the
     * largest before anything is measured (so the fit always sets -c);
     * before it, the unset context stays 0 (the trained size in total). */
    f->ctx_auto = p->n_ctx == 0;
    f->n_streams = fit_streams(p);
    f->n_ctx_max = times_streams(f->hp_nct, f->n_streams);
    f->n_ctx_min_total = times_streams(f->n_ctx_min, f->n_streams);
    if (ggfit__llama_has(p->llama_build, LLAMA_CHANGE_FIT_N_STREAMS)) {
        /* (-fit off: llama-server runs no fit, the context stays unset) */
        if (f->ctx_auto && !opt->check_only)
            f->p.n_ctx = f->n_ctx_max;
        f->extra = opt->extra;
    }
    f->caller_devs = devs;
    f->n_caller_devs = n;
    /* Devices that report no memory are not used (as llama.cpp's fit);
     * with -sm none the model has only the main one. orig[] maps back. */
    ggfit_device used[GGFIT_MAX_DEVICES];
    uint32_t *orig = f->orig;
    if (p->split_mode == GGFIT_SPLIT_NONE && n > 0) {
        if (p->main_gpu < 0 || (size_t)p->main_gpu >= n) {
            ggfit__gcache_give(m, f->cache);
            free(f);
            return ggfit__fail(err, GGFIT_EINVAL, "-mg %d: there are %zu devices", p->main_gpu, n);
        }
        orig[0] = (uint32_t)p->main_gpu;
        used[f->nd++] = devs[p->main_gpu];
        f->p.main_gpu = 0;
    } else {
        for (size_t d = 0; d < n; d++)
            if (devs[d].total || devs[d].free) {
                orig[f->nd] = (uint32_t)d;
                used[f->nd++] = devs[d];
            }
    }
    f->devs = used;
    size_t nm = f->nd ? f->nd : 1;
    for (size_t d = 0; d < nm; d++) {
        uint64_t mg = opt->n_margins == 0 ? (uint64_t)1024 << 20
                      : opt->margin[d < opt->n_margins ? d : opt->n_margins - 1];
        /* llama-server adds a draft's bytes per device to the target
         * (and a projector's); the extra model's are measured instead */
        if (f->nd)
            mg += opt->extra_used[orig[d]] - (f->extra ? opt->extra_in_used[orig[d]] : 0);
        f->margin[d] = (int64_t)mg;
        f->free[d] = f->nd ? (int64_t)f->devs[d].free : (int64_t)opt->host_free;
    }

    ggfit_status rc;
    bool done;
    int64_t mem[GGFIT_MAX_DEVICES], sum_used, sum_free, sum_proj_free, sum_model;
    rc = step_initial(f, mem, &sum_used, &sum_free, &sum_proj_free, &sum_model, &done);
    if (!rc && done)
        out->status = GGFIT_FIT_UNCHANGED;
    if (!rc && !done && opt->check_only) {
        out->status = GGFIT_FIT_FAILED;
        snprintf(out->reason, sizeof out->reason,
                 "the flags as given do not leave every device its margin, and fitting is "
                 "off (-fit off)");
        done = true;
    }
    if (!rc && !done) {
        rc = step_context(f, sum_used, sum_free, sum_proj_free, sum_model, &done);
        if (!rc && done)
            out->status = GGFIT_FIT_FITS;
    }
    if (!rc && !done) {
        char buf[128];
        const char *why = f->nd == 0 ? "was unable to fit model into system memory by reducing "
                                       "context, abort"
                                     : locked(f, p, buf, sizeof buf);
        if (why && on_set && strstr(why, "already set by user")) {
            rc = on_set(f, p, out);
        } else if (why) {
            out->status = GGFIT_FIT_FAILED;
            snprintf(out->reason, sizeof out->reason, "%s", why);
            if (!f->no_log)
                ggfit__sb_printf(&f->log, "common_fit_params: failed to fit params to free "
                                          "device memory: %s\n", why);
        } else {
            rc = ggfit__fit_layers(f, out);
        }
    }
    if (!rc) {
        /* The memory of the result; of the flags as given when it failed. */
        if (out->status != GGFIT_FIT_FAILED) {
            if (!f->no_log)
                ggfit__sb_printf(&f->log, "common_fit_params: successfully fit params to free "
                                          "device memory\n");
        } else {
            ggfit__params_copy(&f->p, p);
        }
        if (p->split_mode == GGFIT_SPLIT_NONE && f->nd > 0)
            f->p.main_gpu = 0;   /* f->devs holds the main device alone */
        rc = ggfit__project_cached(m, &f->p, f->devs, f->nd, &out->projection, NULL, f->cache,
                                   err);
        f->n_proj++;
        /* Rows name the caller's devices. */
        for (uint32_t d = 0; d < out->projection.n_devices; d++)
            out->projection.device_of[d] = orig[out->projection.device_of[d]];
    }
    ggfit__params_copy(&out->params, &f->p);   /* the overrides in use, whole */
    out->params.main_gpu = p->main_gpu;
    out->n_projections = f->n_proj;
    out->log = ggfit__sb_take(&f->log);
    ggfit__gcache_give(m, f->cache);
    free(f);
    if (rc) {
        ggfit_free(out->log);
        out->log = NULL;
    }
    return rc;
}

void ggfit_fit_result_clear(ggfit_fit_result *r)
{
    if (r) {
        ggfit_free(r->log);
        r->log = NULL;
    }
}
