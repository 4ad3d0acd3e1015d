/*
 * check.h - a header's hyperparameters checked before anything is sized or
 * built from them. A hostile file must be refused with the key and its
 * value, never divide by zero, index past an array or ask for an
 * allocation of its choosing. Two kinds of rule, each in one place:
 *  - what llama.cpp refuses: load_hparams' GGML_ASSERTs and throws, and
 *    the asserts its graph would hit (ggml_can_mul_mat, a reshape that
 *    does not keep the element count);
 *  - what ggfit's own arithmetic needs: a divisor that is not 0, a count
 *    that fits the arrays it indexes, a number a builder converts to an
 *    integer that fits the integer.
 * The rules every architecture shares are check.c's (ggfit__check_model);
 * an architecture's own are its row's .check hook (arch.h), next to the
 * builder that relies on them; the projector types' are in src/mtmd/.
 */
#ifndef GGFIT_CHECK_H
#define GGFIT_CHECK_H

#include "base/base.h"
#include "ggfit.h"

struct ggfit_arch;

/* One file's checks in progress: the first rule broken is the answer, and
 * the checks after it do nothing, so a hook is a plain list of calls. */
typedef struct hp_check {
    const ggfit_gguf *g;
    const ggfit_model *m;       /* NULL for a projector file */
    const ggfit_hparams *hp;    /* NULL for a projector file */
    const char *path;           /* the file, for messages */
    const char *prefix;         /* of the keys: "llama", "clip.vision" */
    char **err;
    ggfit_status rc;            /* the first rule broken, GGFIT_OK */
} hp_check;

/* A check of g's keys under prefix (messages start with path). */
hp_check ggfit__check_init(const ggfit_gguf *g, const char *path, const char *prefix,
                           char **err);

/* Refuses the file (GGFIT_EFORMAT) with "<path>: " and the message, unless
 * an earlier rule did; returns false. */
bool hc_fail(hp_check *c, const char *fmt, ...) GGFIT_PRINTF(2, 3);

/* The rules. key is the name after "<prefix>." (the message spells it in
 * full); v its value as the reader gives it (the default when absent);
 * why ends the message: what llama.cpp or ggfit does with it. Each returns
 * whether the rule holds (false also after an earlier failure). */
bool hc_nonzero(hp_check *c, const char *key, uint64_t v, const char *why);
bool hc_range(hp_check *c, const char *key, int64_t v, int64_t lo, int64_t hi,
              const char *why);
/* v is a multiple of by (by_key's value; 0 breaks the rule as well). */
bool hc_multiple(hp_check *c, const char *key, uint64_t v, const char *by_key, uint64_t by,
                 const char *why);

/* A number a builder reads with gb_key or clip's readers (any integer or
 * float type), when the file has it: a whole number from lo to hi, so that
 * the builder's conversion to an integer is defined; absent: the builder's
 * default holds. The value through *out when given (def when absent). */
bool hc_key_int(hp_check *c, const char *key, int64_t lo, int64_t hi, int64_t def,
                int64_t *out, const char *why);

/* Layer il's rules: the message names the layer. */
bool hc_layer_multiple(hp_check *c, uint32_t il, const char *key, uint64_t v,
                       const char *by_key, uint64_t by, const char *why);

/* RWKV's time mix (rwkv6, rwkv7 and their Qwen2 kin): the embedding is a
 * whole, non-zero number of wkv.head_size heads, as llama.cpp's reshapes
 * assert, and the group norm divides by their count. */
void hc_wkv_heads(hp_check *c);

/* Everything a language model's file must satisfy before its projection,
 * with architecture a's own rules (its .check), under the limits of
 * llama.cpp at llama_build (0: the newest supported); GGFIT_OK or
 * GGFIT_EFORMAT with the key and value in *err. */
ggfit_status ggfit__check_model(const ggfit_model *m, const struct ggfit_arch *a,
                                uint32_t llama_build, char **err);

#endif
