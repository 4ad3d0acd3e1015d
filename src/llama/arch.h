/*
 * arch.h - what llama.cpp does differently per architecture, as one
 * registry row each (src/models/<arch>.c, listed in src/models/registry.c):
 * its memory (KV cache, iSWA, recurrent state), its graph and its quirks.
 */
#ifndef GGFIT_ARCH_H
#define GGFIT_ARCH_H

#include "ggfit.h"

typedef enum ggfit_mem_kind {
    GGFIT_MEM_KV,          /* a KV cache (iSWA when the model has a window) */
    GGFIT_MEM_RECURRENT,   /* recurrent state only */
    GGFIT_MEM_HYBRID,      /* KV for attention layers, state for the rest */
} ggfit_mem_kind;

typedef enum ggfit_rec_rule {
    GGFIT_REC_NONE,        /* no recurrent layers */
    GGFIT_REC_ALL,         /* every layer */
    GGFIT_REC_NO_KV_HEADS, /* layers with head_count_kv 0 */
    GGFIT_REC_NEMOTRON_H,  /* kv heads 0 and ffn 0; attention: kv heads > 0 */
    GGFIT_REC_INTERVAL,    /* all but every full_attention_interval-th */
    GGFIT_REC_BOTH,        /* every layer has attention and state */
} ggfit_rec_rule;

typedef struct ggfit_arch {
    const char *name;
    ggfit_mem_kind mem;
    uint32_t swa_period;       /* default sliding_window_pattern; 0: no SWA */
    bool swa_dense_first;      /* layer il%p == 0 is the dense one */
    uint32_t swa_default;      /* n_swa when the file gives none */
    bool swa_needs_window;     /* SWA only when sliding_window > 0 */
    bool nextn_kv;             /* NextN blocks still get KV cells */
    ggfit_rec_rule rec;
    /* Only the first kv_from_start layers hold KV cells; each later layer
     * reads the cache of layer kv_from_start - 2 when it is a sliding-window
     * layer, else of layer kv_from_start - 1 (gemma3n). 0: every layer. */
    uint32_t kv_from_start;
} ggfit_arch;

/* Rules for an architecture; *known is false for the generic fallback. */
const ggfit_arch *ggfit__arch(const char *name, bool *known);

#endif
