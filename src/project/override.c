/*
 * override.c - tensor buffer type overrides (-ot PATTERN=BUFT, in order,
 * the first match wins; llama_model_loader's tensor_buft_overrides), and
 * the ones -cmoe and -ncmoe add (common/arg.cpp). Patterns are ECMAScript
 * regexes searched in tensor names (std::regex_search), run with PCRE2;
 * the patterns llama.cpp's own fit and -cmoe write are recognised and
 * matched from the tensor's facts instead, which is the same set of
 * tensors at a fraction of the cost. Here they are made into rules;
 * weights.c matches the tensors against them.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "llama/model.h"
#include "llama/patterns.h"
#include "project/override.h"

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Recognises "blk\.N\.<tail>" and "blk\.\d+\.<tail>" with one of the tails
 * of ggfit__ffn_tail: the patterns of llama.cpp's fit, -cmoe and -ncmoe, matched without
 * a regex engine (they select exactly the same tensors). */
static bool block_rule(const char *pattern, int32_t *layer, uint8_t *kind)
{
    const char *p;
    if (!starts_with(pattern, "blk\\."))
        return false;
    p = pattern + 5;
    if (starts_with(p, "\\d+")) {
        *layer = -1;
        p += 3;
    } else {
        long n = 0;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9' && n < 1000000)
            n = n * 10 + (*p++ - '0');
        *layer = (int32_t)n;
    }
    if (!starts_with(p, "\\."))
        return false;
    p += 2;
    for (uint8_t k = 0; k < GGFIT_FFN_KIND_COUNT; k++)
        if (strcmp(p, ggfit__ffn_tail[k]) == 0) {
            *kind = k;
            return true;
        }
    return false;
}

static ggfit_status add_rule(proj *pr, const char *pattern, int target)
{
    struct rule *r = &pr->rules[pr->n_rules];
    memset(r, 0, sizeof *r);
    r->target = target;
    if (block_rule(pattern, &r->layer, &r->kind)) {
        pr->n_rules++;
        return GGFIT_OK;
    }
    char msg[200];
    ggfit_status rc = ggfit__regex_new(pattern, &r->re, msg, sizeof msg);
    if (rc == GGFIT_ENOMEM)
        return ggfit__fail(pr->err, rc, "out of memory");
    if (rc)
        return ggfit__fail(pr->err, rc, "-ot pattern '%s': %s", pattern, msg);
    pr->n_rules++;
    pr->n_regex++;
    return GGFIT_OK;
}

/* The fit writes one rule per block it moves, so a tensor would be tested
 * against every block's rule, nearly all for other blocks. Lists, per
 * block up to the last one a rule names (at most n_layer + 1), the rules
 * that can match its tensors, in order: its own, those for any block, the
 * regexes. Tensors of other blocks, or of none, scan all the rules. */
static void index_rules(proj *pr)
{
    uint32_t n_blocks = 0, n_any = 0;
    for (uint32_t i = 0; i < pr->n_rules; i++) {
        const struct rule *r = &pr->rules[i];
        if (r->re || r->layer < 0)
            n_any++;
        else if ((uint32_t)r->layer >= n_blocks && (uint32_t)r->layer <= pr->hp->n_layer)
            n_blocks = (uint32_t)r->layer + 1;
    }
    if (pr->n_rules < 8 || n_blocks == 0)
        return;
    size_t n_list = (size_t)n_blocks * n_any + (pr->n_rules - n_any);
    pr->rule_first = ggfit__malloc((n_blocks + 1) * sizeof *pr->rule_first +
                                   n_list * sizeof *pr->rule_list);
    if (!pr->rule_first)
        return;   /* every tensor then scans all the rules, as it may */
    pr->rule_list = (uint16_t *)(void *)(pr->rule_first + n_blocks + 1);
    pr->n_rule_blocks = n_blocks;
    uint32_t k = 0;
    for (uint32_t b = 0; b < n_blocks; b++) {
        pr->rule_first[b] = k;
        for (uint32_t i = 0; i < pr->n_rules; i++) {
            const struct rule *r = &pr->rules[i];
            if (r->re || r->layer < 0 || (uint32_t)r->layer == b)
                pr->rule_list[k++] = (uint16_t)i;
        }
    }
    pr->rule_first[n_blocks] = k;
}

ggfit_status ggfit__setup_overrides(proj *pr)
{
    const ggfit_params *p = pr->p;
    ggfit_status rc;
    for (uint32_t i = 0; i < p->n_overrides; i++) {
        const char *buf = p->overrides[i].buffer;
        int target = -2;
        if (strcmp(buf, "CPU") == 0)
            target = -1;
        for (uint32_t d = 0; d < pr->n_dev && target == -2; d++) {
            size_t len = strlen(pr->devs[d]->name);
            /* "RPC0[host:port]" names the device "RPC0" too. */
            if (strcmp(buf, pr->devs[d]->name) == 0 ||
                (strncmp(buf, pr->devs[d]->name, len) == 0 && buf[len] == '['))
                target = (int)d;
        }
        if (target == -2)
            return ggfit__fail(pr->err, GGFIT_EINVAL,
                               "-ot %s=%s: unknown buffer type '%s' (CPU or a device name)",
                               p->overrides[i].pattern, buf, buf);
        if ((rc = add_rule(pr, p->overrides[i].pattern, target)))
            return rc;
    }
    /* -cmoe: GGFIT_FFN_EXPS_REGEX, every block's experts. */
    if (p->cpu_moe)
        pr->rules[pr->n_rules++] = (struct rule){ .layer = -1, .kind = GGFIT_FFN_EXPERTS, .target = -1 };
    /* -ncmoe N: one such pattern per block below N. */
    if (p->n_cpu_moe)
        pr->rules[pr->n_rules++] = (struct rule){ .layer = -2, .kind = GGFIT_FFN_EXPERTS, .target = -1 };
    /* With block rules only, weights.c looks targets up in a table per
     * block instead. */
    if (pr->n_regex)
        index_rules(pr);
    return GGFIT_OK;
}
