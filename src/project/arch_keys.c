/*
 * arch_keys.c - what an architecture's load_arch_hparams refuses, found
 * before anything is sized: the keys it requires, the fixed arrays it reads
 * (llama_model_loader::get_key_or_arr and get_arr) and the sliding-window
 * pattern in the form it reads it. The model description (model.c) reads
 * every key for every architecture, so it refuses only what llama.cpp
 * refuses for all of them; what one architecture refuses is checked here,
 * where the architecture is known.
 */
#include <stdio.h>

#include "base/base.h"
#include "project/arch_keys.h"
#include "versions/version.h"

/* The key "<arch>.<suffix>", or suffix past a leading '!' for a key of no
 * architecture (its name in key), and its value; false when the file has
 * no such key. */
static bool key_of(const proj *pr, const char *suffix, char *key, size_t n, ggfit_value *v)
{
    if (suffix[0] == '!')
        snprintf(key, n, "%s", suffix + 1);
    else
        snprintf(key, n, "%s.%s", pr->hp->arch, suffix);
    const ggfit_gguf *g = ggfit_model_gguf(pr->m);
    int64_t i = ggfit_gguf_find_key(g, key);
    return i >= 0 && ggfit_gguf_value(g, (uint64_t)i, v);
}

static ggfit_status refused(const proj *pr, const char *key, const char *why)
{
    return ggfit__fail(pr->err, GGFIT_EFORMAT, "%s: key '%s' %s; llama.cpp refuses the file",
                       ggfit__proj_path(pr), key, why);
}

/* The values get_key_or_arr or get_arr wants: n for its array form. */
static uint32_t arr_n(const proj *pr, uint8_t n)
{
    switch (n) {
    case GGFIT_ARR_BLOCKS: return pr->hp->n_layer;
    case GGFIT_ARR_MAIN: return pr->hp->n_layer - pr->hp->n_nextn;
    case GGFIT_ARR_FOUR: return 4;
    default: return 0;
    }
}

/* Whether an array of elem elements fills an array of C type `type`
 * (get_arr: uint32_t and int take uint32, int32 and bool elements; float
 * takes float32; another pairing asserts or throws). */
static bool elems_fit(uint32_t elem, uint8_t type)
{
    if (type == GGFIT_GGUF_FLOAT32)
        return elem == GGFIT_GGUF_FLOAT32;
    return elem == GGFIT_GGUF_UINT32 || elem == GGFIT_GGUF_INT32 || elem == GGFIT_GGUF_BOOL;
}

/* One key of an architecture's arr_keys, as llama_model_loader reads it. */
static ggfit_status check_arr_key(const proj *pr, const ggfit_arr_key *k)
{
    char key[160], why[200];
    ggfit_value v;
    if (!key_of(pr, k->suffix, key, sizeof key, &v))
        return k->required ? refused(pr, key, "is missing") : GGFIT_OK;
    uint32_t n = arr_n(pr, k->n);
    if (v.type != GGFIT_GGUF_ARRAY) {
        if (!k->key_or_arr)   /* get_arr takes arrays only */
            return k->required ? refused(pr, key, "is not an array") : GGFIT_OK;
        if (v.type != k->type) {   /* get_key: GGUFMeta's exact type */
            snprintf(why, sizeof why, "is a %s, not a %s", ggfit_gguf_type_name(v.type),
                     ggfit_gguf_type_name(k->type));
            return refused(pr, key, why);
        }
        return GGFIT_OK;
    }
    if (k->key_or_arr && v.n != n) {
        snprintf(why, sizeof why, "holds %llu values, not %u (wrong array length)",
                 (unsigned long long)v.n, n);
        return refused(pr, key, why);
    }
    if (!elems_fit(v.elem_type, k->type)) {
        snprintf(why, sizeof why, "is an array of %s, not of %s",
                 ggfit_gguf_type_name(v.elem_type), ggfit_gguf_type_name(k->type));
        return refused(pr, key, why);
    }
    if (v.n > GGFIT_MAX_LAYERS) {
        snprintf(why, sizeof why, "holds %llu values, more than %d (LLAMA_MAX_LAYERS)",
                 (unsigned long long)v.n, GGFIT_MAX_LAYERS);
        return refused(pr, key, why);
    }
    if (!k->key_or_arr && v.n < n) {   /* DeepSeek V4's compress_ratios */
        snprintf(why, sizeof why, "holds %llu values, fewer than the %u blocks",
                 (unsigned long long)v.n, n);
        return refused(pr, key, why);
    }
    return GGFIT_OK;
}

/* Whether load_arch_hparams reads the sliding-window pattern at all: an
 * architecture without sliding windows never does, and one that keeps them
 * for a window the file gives (swa_needs_window) only then. */
static bool reads_swa_pattern(const proj *pr)
{
    const ggfit_arch *a = pr->arch;
    if (a->swa_needs_window && pr->hp->n_swa == 0)
        return false;
    return a->swa_key != GGFIT_SWA_KEY_PERIOD || a->swa_period > 0;
}

/* attention.sliding_window_pattern in the form the architecture reads it
 * (ggfit_swa_key). */
static ggfit_status check_swa_key(const proj *pr)
{
    const ggfit_arch *a = pr->arch;
    char key[160], why[200];
    snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", pr->hp->arch);
    uint64_t len;
    int form = ggfit__model_swa_key(pr->m, &len);
    if (!reads_swa_pattern(pr))
        return GGFIT_OK;
    if (form == GGFIT_KEY_BAD)   /* the uint32 read's GGUFMeta type check */
        return refused(pr, key, "is not a uint32");
    if (form == GGFIT_KEY_SCALAR || a->swa_key == GGFIT_SWA_KEY_PERIOD)
        return GGFIT_OK;   /* a period, or an array the uint32 form passes over */
    if (form == GGFIT_KEY_ABSENT)
        return refused(pr, key, "is missing");
    uint32_t n = pr->hp->n_layer - (a->swa_key_main ? pr->hp->n_nextn : 0);
    if (len != n && a->swa_key != GGFIT_SWA_KEY_ARRAY) {
        snprintf(why, sizeof why, "holds %llu values, not %u (wrong array length)",
                 (unsigned long long)len, n);
        return refused(pr, key, why);
    }
    ggfit_value v;
    key_of(pr, "attention.sliding_window_pattern", key, sizeof key, &v);
    if (!elems_fit(v.elem_type, GGFIT_GGUF_UINT32)) {
        snprintf(why, sizeof why, "is an array of %s, not of bool or integers",
                 ggfit_gguf_type_name(v.elem_type));
        return refused(pr, key, why);
    }
    return GGFIT_OK;
}

ggfit_status ggfit__check_arch_keys(const proj *pr)
{
    if (!ggfit__llama_has(pr->p->llama_build, (ggfit__llama_change)pr->arch->added)) {
        const ggfit__change_row *c = &ggfit__llama_changes[pr->arch->added];
        return ggfit__fail(pr->err, GGFIT_EUNSUPPORTED,
                           "%s: llama.cpp b%u cannot load this architecture (%s: added in b%u, "
                           "%s): plan for a newer llama.cpp, --llama-version b%u",
                           ggfit__proj_path(pr), ggfit__llama_rules(pr->p->llama_build),
                           pr->hp->arch, c->build, c->commit, ggfit__llama_newest());
    }
    for (const char *const *k = pr->arch->required_keys; k && *k; k++) {
        char key[160];
        ggfit_value v;
        if (!key_of(pr, *k, key, sizeof key, &v))
            return ggfit__fail(pr->err, GGFIT_EFORMAT,
                               "%s: key not found in model: %s (llama.cpp refuses the file)",
                               ggfit__proj_path(pr), key);
    }
    bool since = ggfit__llama_has(pr->p->llama_build,
                                  (ggfit__llama_change)pr->arch->required_since);
    for (const char *const *k = pr->arch->required_keys_since; since && k && *k; k++) {
        char key[160];
        ggfit_value v;
        if (!key_of(pr, *k, key, sizeof key, &v))
            return ggfit__fail(pr->err, GGFIT_EFORMAT,
                               "%s: key not found in model: %s (llama.cpp b%u refuses the file)",
                               ggfit__proj_path(pr), key, ggfit__llama_rules(pr->p->llama_build));
    }
    for (const ggfit_arr_key *k = pr->arch->arr_keys; k && k->suffix; k++) {
        ggfit_status rc = check_arr_key(pr, k);
        if (rc)
            return rc;
    }
    return check_swa_key(pr);
}
