/*
 * reorder.c - a model file rewritten so that what llama.cpp offloads is
 * contiguous: the input layer first, then the blocks in order (-ngl takes
 * them from the back), then the output layer, which llama.cpp offloads
 * with the last blocks (llama_model::load_tensors: il == n_layer). With
 * mmap, Metal maps one span per file from the first to the last tensor a
 * backend holds; in this order a partial offload's span is its tensors.
 * The routed experts of all blocks come before the blocks' other weights
 * (see group()). Within a group the tensors keep the order they had.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "gguf/gguf.h"
#include "load/reorder.h"

/* The name of shard k (0-based) of n, from the first's: NAME-00001-of-0000N. */
static ggfit_status shard_name(const char *first, uint32_t k, uint32_t n, char *buf, size_t size,
                               char **err)
{
    char pat[32];
    snprintf(pat, sizeof pat, "-%05u-of-%05u", 1u, n);
    const char *at = strstr(first, pat);
    if (!at)
        return ggfit__fail(err, GGFIT_EINVAL,
                           "%s: the model has %u shards, so the output must be named like "
                           "NAME%s.gguf", first, n, pat);
    int w = snprintf(buf, size, "%.*s-%05u-of-%05u%s", (int)(at - first), first, k + 1, n,
                     at + strlen(pat));
    if (w < 0 || (size_t)w >= size)
        return ggfit__fail(err, GGFIT_EINVAL, "%s: name too long", first);
    return GGFIT_OK;
}

/* The new place of a tensor: 0 the input layer; then the routed experts
 * of block 0, 1, ...; then the rest of block 0, 1, ...; then the output
 * layer. Experts first keeps every expert offload contiguous with the
 * blocks' dense weights (--cpu-moe, --n-cpu-moe N and the fit's overflow
 * all take the experts of the first blocks), while -ngl's partial offload
 * of the last blocks leaves out only the small dense weights of the blocks
 * before it. */
static uint64_t group(const ggfit_tensor *t, uint32_t n_layer)
{
    if (t->output_layer)
        return 1 + 2 * (uint64_t)n_layer;
    if (t->layer < 0 || t->layer >= (int32_t)n_layer)
        return 0;
    if (t->role == GGFIT_ROLE_EXPERTS)
        return 1 + (uint64_t)t->layer;
    return 1 + (uint64_t)n_layer + (uint64_t)t->layer;
}

uint64_t ggfit__reorder_shard(const ggfit_model *m, uint32_t shard, uint64_t *order)
{
    const ggfit_gguf *g = ggfit_model_gguf(m);
    uint32_t n_layer = ggfit_model_hparams(m)->n_layer;
    ggfit__gguf_shard_raw s;
    if (!ggfit__gguf_raw(g, shard, &s))
        return 0;
    uint64_t n = 0, n_groups = 2 + 2 * (uint64_t)n_layer;
    /* A stable pass per group keeps each group's own order. */
    for (uint64_t grp = 0; grp < n_groups; grp++)
        for (uint64_t i = s.first_tensor; i < s.first_tensor + s.n_tensors; i++)
            if (group(ggfit_model_tensor(m, i), n_layer) == grp)
                order[n++] = i;
    return n;
}

void ggfit__reorder_offsets(const ggfit_model *m, const uint64_t *order, uint64_t n,
                            uint32_t alignment, uint64_t *offset)
{
    uint64_t at = 0;
    for (uint64_t k = 0; k < n; k++) {
        offset[order[k]] = at;
        at = GGFIT_PAD(at + ggfit_model_tensor(m, order[k])->info->n_bytes, (uint64_t)alignment);
    }
}

ggfit_status ggfit_reorder(const char *in, const char *out, bool force, char **err)
{
    ggfit_model *m = NULL;
    ggfit_status rc;
    if (err)
        *err = NULL;
    if (!in || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_reorder: NULL argument");
    /* out before a byte of the input is read: a directory, a device or a
     * link there is refused at once, not after gigabytes are copied. */
    if ((rc = ggfit__gguf_check_target(out, &in, 1, force, err)) ||
        (rc = ggfit_model_open(in, &m, err)))
        return rc;
    const ggfit_gguf *g = ggfit_model_gguf(m);
    uint32_t n_shards = ggfit_gguf_n_shards(g);
    uint64_t nt = ggfit_model_n_tensors(m);
    uint64_t *order = ggfit__malloc((nt ? nt : 1) * sizeof *order);
    size_t name_size = strlen(out) + 32;
    char *name = ggfit__malloc(name_size);
    const char **inputs = ggfit__malloc(n_shards * sizeof *inputs);
    if (!order || !name || !inputs) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    /* Every shard's name first, so that a bad OUT, or another shard's name
     * that is taken, the input or no regular file, is refused before any
     * shard is written. */
    for (uint32_t k = 0; k < n_shards; k++)
        inputs[k] = ggfit_gguf_shard_path(g, k);
    for (uint32_t k = 0; k < n_shards && n_shards > 1; k++)
        if ((rc = shard_name(out, k, n_shards, name, name_size, err)) ||
            (rc = ggfit__gguf_check_target(name, inputs, n_shards, force, err)))
            goto done;
    for (uint32_t k = 0; k < n_shards; k++) {
        ggfit__gguf_shard_raw s;
        ggfit__gguf_raw(g, k, &s);
        uint64_t n = ggfit__reorder_shard(m, k, order);
        if (n != s.n_tensors) {
            rc = ggfit__fail(err, GGFIT_EINVAL, "%s: a tensor has no layer", s.path);
            goto done;
        }
        if (n_shards > 1)
            shard_name(out, k, n_shards, name, name_size, NULL);
        else
            snprintf(name, name_size, "%s", out);
        if ((rc = ggfit__gguf_rewrite(g, k, order, name, force, err)))
            goto done;
    }
done:
    free(order);
    free(name);
    free(inputs);
    ggfit_model_free(m);
    return rc;
}
