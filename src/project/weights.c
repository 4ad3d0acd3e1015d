/*
 * weights.c - where each weight goes and what it takes there
 * (llama_model::load_tensors): an override's target if one matches, else
 * its layer's device, else the CPU list; the input layer stays on the
 * CPU; rope factors get one copy per buffer type of the blocks; a tied
 * output reads token_embd, copied to the output layer's buffer type when
 * that is another. NextN/MTP blocks are not loaded.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "llama/model.h"
#include "project/weights.h"

/* ---- the override rules (override.c made them), matched ---------------- */

/* Per block: the first rule matching a tensor of each FFN kind, and the
 * kinds that have one (bit k: kind k). */
typedef struct block_rules {
    uint16_t first[GGFIT_FFN_KIND_COUNT];
    uint8_t kinds;
} block_rules;

/* With block rules only (n_regex == 0) the rule a tensor of block il
 * matches depends on il and the tensor's FFN kinds alone: fills, for blocks
 * il < n, the first rule matching a tensor of each kind and the kinds that
 * have one, so that block_target gives override_target's answer without a
 * scan. */
static void override_table(const proj *pr, block_rules *tab, uint32_t n)
{
    for (uint32_t il = 0; il < n; il++) {
        for (uint32_t k = 0; k < GGFIT_FFN_KIND_COUNT; k++)
            tab[il].first[k] = UINT16_MAX;
        tab[il].kinds = 0;
    }
    /* From the last rule to the first, so that the first one matching wins. */
    for (uint32_t i = pr->n_rules; i-- > 0;) {
        const struct rule *r = &pr->rules[i];
        uint32_t lo = 0, hi = n;   /* the blocks it matches, [lo, hi) */
        if (r->layer >= 0) {
            lo = (uint32_t)r->layer;
            hi = lo < n ? lo + 1 : lo;
        } else if (r->layer == -2 && pr->p->n_cpu_moe < n) {
            hi = pr->p->n_cpu_moe;
        }
        for (uint32_t il = lo; il < hi; il++) {
            tab[il].first[r->kind] = (uint16_t)i;
            tab[il].kinds |= (uint8_t)(1u << r->kind);
        }
    }
}

/* Target of the first override matching a tensor: a device, -1 for the
 * CPU, or -2 when none matches. facts are the tensor's GGFIT_TFACT_*, which
 * say which FFN kinds its name is. */
static int override_target(const proj *pr, const char *name, int32_t layer, uint16_t facts)
{
    bool listed = layer >= 0 && (uint32_t)layer < pr->n_rule_blocks;
    uint32_t k = listed ? pr->rule_first[layer] : 0;
    uint32_t end = listed ? pr->rule_first[layer + 1] : pr->n_rules;
    for (; k < end; k++) {
        const struct rule *r = &pr->rules[listed ? pr->rule_list[k] : k];
        if (r->re) {
            if (ggfit__regex_search(r->re, name))
                return r->target;
            continue;
        }
        if (layer < 0 || (r->layer >= 0 && r->layer != layer) ||
            (r->layer == -2 && (uint32_t)layer >= pr->p->n_cpu_moe))
            continue;
        if (facts & (1u << (GGFIT_TFACT_FFN_SHIFT + r->kind)))
            return r->target;
    }
    return -2;
}

/* override_target's answer for a tensor of a block with these facts, from
 * the block's row of the table. */
static inline int block_target(const proj *pr, const block_rules *br, uint16_t facts)
{
    unsigned kinds = (facts >> GGFIT_TFACT_FFN_SHIFT) & br->kinds;
    if (!kinds)
        return -2;
    unsigned best = UINT16_MAX;
    for (unsigned k = 0; kinds; k++, kinds >>= 1)
        if ((kinds & 1) && br->first[k] < best)
            best = br->first[k];
    return pr->rules[best].target;
}

/* ---- the weights ---------------------------------------------------------- */

/* Layer of a tensor for placement: block index, n_layer for the output
 * layer, -1 for the input layer, unless the architecture places a tensor
 * outside the blocks with another layer (its tensor_layer hook). */
static int64_t placement_layer(const proj *pr, const ggfit_tensor *t)
{
    if (t->layer >= 0)
        return t->layer;
    if (t->output_layer)
        return pr->hp->n_layer;
    int64_t il = pr->arch->tensor_layer ? pr->arch->tensor_layer(pr->m, t) : -2;
    return il == -2 ? -1 : il;
}

/* The CPU list's choice for weight t (select_weight_buft), probed with the
 * op and shape load_tensors creates it with (the weight_probe hook). */
static int select_cpu(proj *pr, const ggfit_tensor *t, weight_op op)
{
    if (!pr->arch->weight_probe)
        return ggfit__select_cpu(pr, t->info, op);
    ggfit_tensor_info created = *t->info;
    op = pr->arch->weight_probe(pr->m, t, op, &created);
    return ggfit__select_cpu(pr, &created, op);
}

/* Places the tensors from i on that are block il's, as long as they go to
 * buffer type b, the block's, with nothing to decide: not read by
 * GET_ROWS, of no FFN kind in stop (the block's rules) and not an
 * embedding or output tensor. The common case; returns the end of the
 * run, i when it is empty. */
static uint64_t place_run(const proj *pr, const ggfit_tensor *tensors, const uint16_t *facts,
                          uint64_t i, uint64_t n, int32_t il, int b, unsigned stop,
                          int32_t *placement, uint64_t *model)
{
    const uint32_t align = pr->buft_align[b];
    const unsigned rule = pr->buft_alloc[b];
    stop |= GGFIT_TFACT_TOKEN_EMBD | GGFIT_TFACT_OUTPUT;
    uint64_t sum = 0;
    for (; i < n && tensors[i].layer == il; i++) {
        uint16_t f = facts[i];
        if ((f & stop) || (f & GGFIT_TFACT_OP) == OP_GET_ROWS)
            break;
        sum += ggfit__alloc_bytes_in(align, rule, tensors[i].info);
        if (placement)
            placement[i] = b;
    }
    model[b] += sum;
    return i;
}

ggfit_status ggfit__project_weights(proj *pr, int32_t *placement)
{
    const ggfit_model *m = pr->m;
    const ggfit_hparams *hp = pr->hp;
    uint64_t n = ggfit_model_n_tensors(m);
    const ggfit_tensor *tensors = ggfit__model_tensors(m);
    const uint16_t *facts = ggfit__model_facts(m);
    const unsigned ffn = ((1u << GGFIT_FFN_KIND_COUNT) - 1) << GGFIT_TFACT_FFN_SHIFT;
    const uint32_t n_layer = hp->n_layer;
    const bool nextn = hp->n_nextn != 0;
    /* Worked out once per projection, not per tensor: with block rules
     * only, the first rule for each block and FFN kind, and the buffer type
     * of each layer's weights, il <= n_layer (-1: the CPU list, which
     * depends on the tensor; the devices' types exist already, see
     * project.c). On the heap: arrays for GGFIT_MAX_LAYERS on the stack
     * would fault in fresh pages of it. */
    block_rules *rules = ggfit__malloc(n_layer * sizeof *rules + n_layer + 1);
    if (!rules)
        return ggfit__fail(pr->err, GGFIT_ENOMEM, "out of memory");
    int8_t *layer_buft = (int8_t *)(rules + n_layer);
    for (uint32_t il = 0; il <= n_layer; il++) {
        int d = ggfit__dev_layer(pr, il);
        layer_buft[il] = (int8_t)(d < 0 ? -1 : ggfit__device_buft(pr, d));
    }
    bool by_table = pr->n_rules && !pr->n_regex;
    if (by_table)
        override_table(pr, rules, n_layer);
    /* Summed here and added to the buffer types at the end. */
    uint64_t model[GGFIT_MAX_BUFTS] = {0};
    int embd_buft = -1;
    const ggfit_tensor *embd = NULL;
    uint16_t embd_facts = 0;
    bool has_output = false;
    for (uint64_t i = 0; i < n; i++) {
        const ggfit_tensor *t = &tensors[i];
        /* Runs of block tensors that go where their block does, with a
         * regex only one at a time, below; so are NextN/MTP blocks. */
        if (!pr->n_regex && t->layer >= 0 && (uint32_t)t->layer < n_layer &&
            layer_buft[t->layer] >= 0 &&
            !(nextn && ggfit_model_layer(m, (uint32_t)t->layer)->nextn)) {
            unsigned stop = by_table ? (unsigned)rules[t->layer].kinds << GGFIT_TFACT_FFN_SHIFT : 0;
            uint64_t end = place_run(pr, tensors, facts, i, n, t->layer, layer_buft[t->layer], stop,
                                     placement, model);
            if (end > i) {
                i = end - 1;   /* the loop's i++ moves past the run */
                continue;
            }
        }
        uint16_t f = facts[i];
        int b;
        /* NextN/MTP blocks are loaded only for speculative decoding. */
        if (nextn && t->layer >= 0 && ggfit_model_layer(m, (uint32_t)t->layer)->nextn &&
            !(pr->arch->nextn_loaded && pr->arch->nextn_loaded(m, t)) &&
            !(pr->p->load_mtp && pr->arch->mtp)) {
            if (placement)
                placement[i] = -1;
            continue;
        }
        weight_op op = (weight_op)(f & GGFIT_TFACT_OP);
        int64_t layer = t->layer >= 0 ? t->layer : placement_layer(pr, t);
        if (op == OP_ROPE && layer < 0) {
            /* One copy per distinct buffer type among the blocks' layers. */
            int seen[GGFIT_MAX_BUFTS] = {0};
            int first = -1;
            uint32_t n_blocks = hp->n_layer - (pr->arch->rope_freqs_nextn ? 0 : hp->n_nextn);
            for (uint32_t il = 0; il < n_blocks; il++) {
                if (pr->arch->rope_freqs_layer && !pr->arch->rope_freqs_layer(m, il))
                    continue;
                b = layer_buft[il] >= 0 ? layer_buft[il] : ggfit__select_cpu(pr, t->info, op);
                if (first < 0)
                    first = b;
                if (!seen[b]++)
                    model[b] += ggfit__alloc_bytes(pr, b, t->info);
            }
            if (placement)
                placement[i] = first;
            continue;
        }
        /* An override's target, else the layer's buffer type, else the
         * CPU list; the input layer and embeddings go to the CPU list. */
        int target = -2;
        if (by_table) {
            if ((f & ffn) && t->layer >= 0)
                target = (uint32_t)t->layer < n_layer
                         ? block_target(pr, &rules[t->layer], f)
                         : override_target(pr, t->info->name, t->layer, f);
        } else if (pr->n_regex) {
            target = override_target(pr, t->info->name, t->layer, f);
        }
        if (target >= 0)
            b = ggfit__device_buft(pr, target);
        else if (target == -1 || layer < 0 || op == OP_GET_ROWS)
            b = select_cpu(pr, t, op);
        else if (layer <= n_layer)
            b = layer_buft[layer] >= 0 ? layer_buft[layer] : select_cpu(pr, t, op);
        else {
            int d = ggfit__dev_layer(pr, (uint32_t)layer);
            b = d < 0 ? select_cpu(pr, t, op) : ggfit__device_buft(pr, d);
        }
        model[b] += ggfit__alloc_bytes(pr, b, t->info);
        if (placement)
            placement[i] = b;
        if (f & (GGFIT_TFACT_TOKEN_EMBD | GGFIT_TFACT_OUTPUT)) {
            if (f & GGFIT_TFACT_TOKEN_EMBD) {
                embd = t;
                embd_buft = b;
                embd_facts = f;
            }
            has_output |= (f & GGFIT_TFACT_OUTPUT) != 0;
        }
    }
    for (uint32_t b = 0; b < pr->out->n_bufts; b++)
        pr->out->bufts[b].mem.model += model[b];
    /* Tied embeddings: the output layer gets token_embd again, unless its
     * buffer type already holds it. */
    if (!has_output && embd && !pr->arch->no_output) {
        int d = ggfit__dev_layer(pr, hp->n_layer);
        int target = override_target(pr, embd->info->name, -1, embd_facts);
        int b = target >= 0 ? ggfit__device_buft(pr, target)
                : target == -1 || d < 0 ? ggfit__select_cpu(pr, embd->info, OP_MUL_MAT)
                                        : ggfit__device_buft(pr, d);
        if (b != embd_buft || pr->arch->tied_output_copied)
            pr->out->bufts[b].mem.model += ggfit__alloc_bytes(pr, b, embd->info);
        pr->tied_buft = b;
    }
    free(rules);
    return GGFIT_OK;
}

