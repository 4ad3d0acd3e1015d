/*
 * graph_cache.c - keys, slots and re-targeting of the kept graphs.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "project/graph_cache.h"
#include "llama/model.h"

void ggfit__gkey_make(gkey *k, const gb_params *p)
{
    memset(k, 0, sizeof *k);   /* padding too: keys are compared with memcmp */
    k->model = ggfit__model_serial(p->m);
    k->n_tokens = p->n_tokens;
    k->n_outputs = p->n_outputs;
    k->n_seqs = p->n_seqs;
    k->n_stream = p->n_stream;
    k->n_kv = p->n_kv;
    k->n_kv_swa = p->n_kv_swa;
    k->swa_period = p->swa_period;
    k->type_k = p->type_k;
    k->type_v = p->type_v;
    k->cpu_backend = p->cpu_backend;
    k->pooling = p->pooling;
    k->swa = p->swa;
    k->flash_attn = p->flash_attn;
    k->v_trans = p->v_trans;
    k->no_kv_offload = p->no_kv_offload;
    k->pin_norms = p->pin_norms;
    k->mtp = p->mtp;
    k->n_rs_seq = p->n_rs_seq;
    k->llama_build = p->llama_build;
    /* A tied output reads token_embd where it is, or a copy of it in the
     * output's buffer type: one leaf more (gb_output_weight). */
    const ggfit_gguf *g = ggfit_model_gguf(p->m);
    int64_t embd = ggfit_gguf_find_tensor(g, "token_embd.weight");
    k->tied_copy = ggfit_gguf_find_tensor(g, "output.weight") < 0 && embd >= 0 &&
                   p->tied_output_buft != p->placement[embd];
}

/* Lists in mv the tensors a retarget may change: those whose fields tested
 * below say so, which no retarget changes. False when out of memory. */
bool ggfit__gcache_moving_make(const gg_graph *g, gmoving *mv)
{
    int32_t *idx = ggfit__buf_get(&mv->idx, (g->n ? g->n : 1) * sizeof *idx);
    if (!idx)
        return false;
    mv->n = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        const gg_tensor *t = &g->t[i];
        if (t->tied || t->weight || t->il >= 0 || t->pin_il >= 0)
            idx[mv->n++] = (int32_t)i;
    }
    mv->valid = true;
    return true;
}

void ggfit__gcache_retarget(gg_graph *g, gmoving *mv, const ggfit_model *m,
                            const int32_t *placement, const int32_t *kv_buft,
                            const int32_t *layer_backend, int32_t tied_buft)
{
    const ggfit_tensor_info *base = ggfit_gguf_tensor(ggfit_model_gguf(m), 0);
    if (!mv->valid && !ggfit__gcache_moving_make(g, mv))
        mv = NULL;   /* out of memory: every tensor, as it may */
    const int32_t *idx = mv ? mv->idx.p : NULL;
    uint32_t n = mv ? mv->n : g->n;
    for (uint32_t k = 0; k < n; k++) {
        gg_tensor *t = &g->t[idx ? (uint32_t)idx[k] : k];
        if (t->tied)
            t->buft = (int16_t)tied_buft;
        else if (t->weight && !t->dup)   /* each copy keeps its buffer type */
            t->buft = placement[t->weight - base];
        else if (t->buft >= 0 && t->il >= 0)
            t->buft = kv_buft[t->il];
        if (t->pin_il >= 0)
            t->backend = layer_backend[t->pin_il];
    }
}

/* Placement also decides which copy of the rope factors (one per buffer
 * type, see gb_rope_factors) each layer's rope nodes read, and where each
 * copy first appears in the lists. Points every such node at its layer's
 * copy, making the copy when the graph has none yet; returns 1 when a
 * source changed (the lists must then be expanded again), 0 when none did,
 * -1 when out of memory. */
int ggfit__gcache_retarget_dups(gg_graph *g, const gmoving *mv, const ggfit_model *m,
                                const int32_t *placement, const int32_t *layer_buft)
{
    const ggfit_tensor_info *base = ggfit_gguf_tensor(ggfit_model_gguf(m), 0);
    enum { MAX_DUPS = 4 * GGFIT_MAX_BUFTS };
    int32_t dups[MAX_DUPS];
    int n_dups = 0, changed = 0;
    /* The copies are weights, so listed when mv is valid. */
    const int32_t *idx = mv->valid ? mv->idx.p : NULL;
    uint32_t n_look = mv->valid ? mv->n : g->n;
    for (uint32_t k = 0; k < n_look && n_dups < MAX_DUPS; k++) {
        int32_t i = idx ? idx[k] : (int32_t)k;
        if (g->t[i].dup)
            dups[n_dups++] = i;
    }
    if (n_dups == 0)
        return 0;
    uint32_t n = g->n;
    for (uint32_t i = 0; i < n; i++) {
        const gg_tensor *t = &g->t[i];
        if (t->op != GGFIT_OP_ROPE || t->il < 0 || t->n_src < 3 || t->src[2] < 0)
            continue;
        const gg_tensor *f = &g->t[t->src[2]];
        const ggfit_tensor_info *w = f->weight;
        int32_t want = gb_copy_buft(layer_buft, placement, w - base, t->il);
        if (f->buft == want)
            continue;
        int32_t copy = -1;
        for (int k = 0; k < n_dups && copy < 0; k++)
            if (g->t[dups[k]].weight == w && g->t[dups[k]].buft == want)
                copy = dups[k];
        if (copy < 0) {
            if (n_dups == MAX_DUPS)
                return -1;
            copy = gg_memory(g, w, w->name, w->type, 1, w->ne, want, true);
            if (g->oom)
                return -1;
            g->t[copy].dup = true;
            g->t[copy].size = gg_nbytes(g, copy);
            dups[n_dups++] = copy;
        }
        g->t[i].src[2] = copy;
        changed = 1;
    }
    return changed;
}

/* The key of a projection's inputs: the model, the flags and the devices,
 * byte for byte, except that only the overrides in use count, their
 * strings zero-padded (set_flags writes a pattern over an older one and
 * leaves its tail), so that equal flags make equal keys. Returns the
 * key's size, 0 when out of memory. */
static size_t pmemo_key(ggfit__buf *b, const ggfit_model *m, const ggfit_params *p,
                        const ggfit_device *devs, size_t n)
{
    const size_t head = offsetof(ggfit_params, overrides), tail = head + sizeof p->overrides;
    size_t n_ov = p->n_overrides < GGFIT_MAX_OVERRIDES ? p->n_overrides : GGFIT_MAX_OVERRIDES;
    uint64_t model = ggfit__model_serial(m);
    size_t size = sizeof model + sizeof n + head + (sizeof *p - tail) +
                  n_ov * sizeof(ggfit_override) + n * sizeof *devs;
    char *k = ggfit__buf_get(b, size);
    if (!k)
        return 0;
    memcpy(k, &model, sizeof model);
    k += sizeof model;
    memcpy(k, &n, sizeof n);
    k += sizeof n;
    memcpy(k, p, head);
    k += head;
    memcpy(k, (const char *)p + tail, sizeof *p - tail);
    k += sizeof *p - tail;
    memset(k, 0, n_ov * sizeof(ggfit_override));
    for (size_t i = 0; i < n_ov; i++, k += sizeof(ggfit_override)) {
        const ggfit_override *o = &p->overrides[i];
        memcpy(k, o->pattern, strnlen(o->pattern, sizeof o->pattern));
        memcpy(k + sizeof o->pattern, o->buffer, strnlen(o->buffer, sizeof o->buffer));
    }
    if (n)
        memcpy(k, devs, n * sizeof *devs);
    return size;
}

bool ggfit__pmemo_find(struct ggfit__gcache *c, const ggfit_model *m, const ggfit_params *p,
                       const ggfit_device *devs, size_t n, ggfit_projection *out,
                       int32_t *placement)
{
    c->n_memo_key = 0;
    if (getenv("GGFIT_DEBUG_GRAPH"))
        return false;
    size_t size = pmemo_key(&c->memo_key, m, p, devs, n);
    for (int k = 0; size && k < PMEMO_SLOTS; k++) {
        pmemo *e = &c->memo[k];
        if (e->n_key != size || memcmp(e->key.p, c->memo_key.p, size) != 0)
            continue;
        e->used = ++c->clock;
        *out = e->out;
        if (placement)
            memcpy(placement, e->placement.p, ggfit_model_n_tensors(m) * sizeof *placement);
        return true;
    }
    c->n_memo_key = size;
    return false;
}

void ggfit__pmemo_put(struct ggfit__gcache *c, const ggfit_projection *out,
                      const int32_t *placement, uint64_t n_tensors)
{
    if (c->n_memo_key == 0)
        return;
    pmemo *e = &c->memo[0];
    for (int k = 1; k < PMEMO_SLOTS; k++)
        if (c->memo[k].used < e->used)
            e = &c->memo[k];
    size_t bytes = (size_t)n_tensors * sizeof *placement;
    void *pl = ggfit__buf_get(&e->placement, bytes ? bytes : 1);
    if (!pl) {
        e->n_key = 0;
        return;
    }
    memcpy(pl, placement, bytes);
    /* The slot takes the key's buffer, and hands its own over for the next. */
    ggfit__buf key = e->key;
    e->key = c->memo_key;
    c->memo_key = key;
    e->n_key = c->n_memo_key;
    e->out = *out;
    e->used = ++c->clock;
    c->n_memo_key = 0;
}

bool ggfit__famemo_find(struct ggfit__gcache *c, size_t n, bool *mismatch)
{
    c->n_fa_key = 0;
    for (int k = 0; n && k < FAMEMO_SLOTS; k++) {
        famemo *e = &c->fa[k];
        if (e->n_key == n && memcmp(e->key.p, c->fa_key.p, n) == 0) {
            e->used = ++c->clock;
            *mismatch = e->mismatch;
            return true;
        }
    }
    c->n_fa_key = n;
    return false;
}

void ggfit__famemo_put(struct ggfit__gcache *c, bool mismatch)
{
    if (c->n_fa_key == 0)
        return;
    famemo *e = &c->fa[0];
    for (int k = 1; k < FAMEMO_SLOTS; k++)
        if (c->fa[k].used < e->used)
            e = &c->fa[k];
    ggfit__buf key = e->key;   /* the slot takes the key's buffer */
    e->key = c->fa_key;
    c->fa_key = key;
    e->n_key = c->n_fa_key;
    e->mismatch = mismatch;
    e->used = ++c->clock;
    c->n_fa_key = 0;
}

void ggfit__gentry_changed(gentry *e)
{
    e->gen++;
}

/* The graph cache of the model freed last, emptied, kept for the next
 * model's projections: its graphs' arrays and the scheduler's and
 * ggml-alloc's buffers are pages touched already. Freed, they went back to
 * the system (the C library trims the heap's top), and each first
 * projection of a model opened after paid some 250 fresh pages, 2 ms on a
 * virtual machine where a page fault costs 8 us (make bench). One cache,
 * a few MB, is kept until the next model takes it or the program ends. */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ggfit__gcache *spare;

struct ggfit__gcache *ggfit__gcache_new(void)
{
    pthread_mutex_lock(&spare_lock);
    struct ggfit__gcache *c = spare;
    spare = NULL;
    pthread_mutex_unlock(&spare_lock);
    return c ? c : ggfit__calloc(1, sizeof(struct ggfit__gcache));
}

/* Forgets c's graphs and memos, keeping their memory, for another model:
 * as a graph built in a slot that held another (graph_reserve.c), and each
 * slot's generation moves on, so that the scheduler's and ggml-alloc's
 * keeps no longer match a graph of the model before. */
static void gcache_empty(struct ggfit__gcache *c)
{
    for (int k = 0; k < GCACHE_SLOTS; k++) {
        gentry *e = &c->e[k];
        e->valid = false;
        e->moving.valid = false;
        ggfit__sched_prep_free(&e->prep);
        ggfit__gentry_changed(e);
        gg_reset(&e->g);
    }
    for (int k = 0; k < PMEMO_SLOTS; k++)
        c->memo[k].n_key = 0;
    c->n_memo_key = 0;
    for (int k = 0; k < FAMEMO_SLOTS; k++)
        c->fa[k].n_key = 0;
    c->n_fa_key = 0;
    c->cached_split = false;   /* another model's splits start plain */
}

/* At the program's end (or the library's unloading) the kept cache is
 * freed, so that nothing is left allocated. */
#if defined(__GNUC__)
__attribute__((destructor)) static void spare_free(void)
{
    ggfit__gcache_free(spare);
    spare = NULL;
}
#endif

static void gentry_clear(gentry *e)
{
    gg_free(&e->g);
    ggfit__sched_prep_free(&e->prep);
    ggfit__buf_free(&e->moving.idx);
    e->moving.valid = false;
    e->valid = false;
}

void ggfit__gcache_free(struct ggfit__gcache *c)
{
    if (c) {
        for (int k = 0; k < GCACHE_SLOTS; k++)
            gentry_clear(&c->e[k]);
        for (int k = 0; k < GGFIT_SCHED_WORK + 1; k++)
            ggfit__buf_free(&c->work[k]);
        ggfit__sched_keep_free(c->keep);
        for (int k = 0; k < PMEMO_SLOTS; k++) {
            ggfit__buf_free(&c->memo[k].key);
            ggfit__buf_free(&c->memo[k].placement);
        }
        ggfit__buf_free(&c->memo_key);
        for (int k = 0; k < FAMEMO_SLOTS; k++)
            ggfit__buf_free(&c->fa[k].key);
        ggfit__buf_free(&c->fa_key);
        free(c);
    }
}

/* The entry holding key's graph, or NULL. */
gentry *ggfit__gcache_find(struct ggfit__gcache *c, const gkey *key)
{
    for (int k = 0; c && k < GCACHE_SLOTS; k++)
        if (c->e[k].valid && !memcmp(&c->e[k].key, key, sizeof *key)) {
            c->e[k].used = ++c->clock;
            return &c->e[k];
        }
    return NULL;
}

/* The entry a new graph for key replaces: one with the same graph but for
 * another context (a fit reduces the context once and never returns, so
 * that graph is done with, and reusing its memory spares a second graph's
 * fresh pages), else an empty one, else the least recently used. */
gentry *ggfit__gcache_victim(struct ggfit__gcache *c, const gkey *key)
{
    for (int k = 0; k < GCACHE_SLOTS; k++) {
        gkey other = c->e[k].key;
        other.n_kv = key->n_kv;
        other.n_kv_swa = key->n_kv_swa;
        if (c->e[k].valid && !memcmp(&other, key, sizeof other))
            return &c->e[k];
    }
    gentry *v = &c->e[0];
    for (int k = 0; k < GCACHE_SLOTS; k++) {
        if (!c->e[k].valid)
            return &c->e[k];
        if (c->e[k].used < v->used)
            v = &c->e[k];
    }
    return v;
}

/* Builds llama.cpp's graph for the model and sizes its compute buffers.
 * Returns GGFIT_EUNSUPPORTED when ggfit has no graph for the architecture. */

/* A model's cache when the model is freed: emptied and kept for the next
 * (the one kept before it freed). */
static void gcache_free_kept(void *p)
{
    struct ggfit__gcache *c = p;
    gcache_empty(c);
    pthread_mutex_lock(&spare_lock);
    struct ggfit__gcache *old = spare;
    spare = c;
    pthread_mutex_unlock(&spare_lock);
    ggfit__gcache_free(old);
}

struct ggfit__gcache *ggfit__gcache_take(const ggfit_model *m)
{
    struct ggfit__gcache *c = ggfit__model_keep_take(m);
    return c ? c : ggfit__gcache_new();
}

void ggfit__gcache_give(const ggfit_model *m, struct ggfit__gcache *c)
{
    ggfit__model_keep_give(m, c, gcache_free_kept);
}

uint32_t ggfit__cache_pieces(const struct ggfit__gcache *c)
{
    uint32_t dflt = GGFIT_CACHE_GRAPHS | GGFIT_CACHE_PROJECTIONS | GGFIT_CACHE_PROBES |
                    (c && c->cached_split ? GGFIT_CACHE_RESUME : 0);
    const char *e = getenv("GGFIT_CACHE");
    if (!e || !*e)
        return dflt;
    if (!strcmp(e, "all"))
        return GGFIT_CACHE_GRAPHS | GGFIT_CACHE_PROJECTIONS | GGFIT_CACHE_RESUME |
               GGFIT_CACHE_PROBES;
    static const struct { const char *name; uint32_t bit; } names[] = {
        { "graphs", GGFIT_CACHE_GRAPHS },
        { "projections", GGFIT_CACHE_PROJECTIONS },
        { "resume", GGFIT_CACHE_RESUME },
        { "probes", GGFIT_CACHE_PROBES },
    };
    uint32_t on = 0;
    for (const char *w = e; *w;) {
        size_t n = strcspn(w, ",");
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            if (strlen(names[k].name) == n && !strncmp(w, names[k].name, n))
                on |= names[k].bit;
        w += n + (w[n] == ',');
    }
    return on;   /* "none", or only unknown names: nothing */
}

ggfit_status ggfit__gcache_split(struct ggfit__gcache *c, gentry *e, const ggfit_sched_in *in,
                                 ggfit_sched_out *out, char **err)
{
    if (!c || !e || !(ggfit__cache_pieces(c) & GGFIT_CACHE_RESUME))
        return ggfit__sched_split(in, out, err);
    if (!c->keep && !(c->keep = ggfit__sched_keep_new()))
        return ggfit__sched_split(in, out, err);
    return ggfit__sched_split_cached(in, c->keep, e, e->gen,
                                     e->moving.valid ? e->moving.idx.p : NULL,
                                     e->moving.valid ? e->moving.n : 0, out, err);
}
