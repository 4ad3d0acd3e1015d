/*
 * fitter.h - llama.cpp's fit in progress (fit.c, common/fit.cpp's
 * common_params_fit_impl), internal: its state, the steps that
 * --fit-around (fit_around.c), which continues where llama.cpp's fit
 * aborts on a set flag, builds on, and the hooks it varies them by. fit.c
 * knows nothing of --fit-around: ggfit_fit (fit_around.c) hands it the
 * continuation, which sets the hooks.
 */
#ifndef GGFIT_COMMON_FITTER_H
#define GGFIT_COMMON_FITTER_H

#include <stdarg.h>

#include "base/base.h"
#include "ggfit.h"
#include "llama/patterns.h"

#define MiB ((int64_t)1 << 20)

/* Which tensors of the first partial layer overflow (common_layer_fraction_t):
 * all but attention, all but up, down only, the experts; each is the
 * pattern of its kind in llama/patterns.h. */
typedef enum fraction {
    LF_ATTN = GGFIT_FFN_ALL,
    LF_UP = GGFIT_FFN_NOT_UP,
    LF_GATE = GGFIT_FFN_DOWN,
    LF_MOE = GGFIT_FFN_EXPERTS,
} fraction;

typedef struct ngl_t {
    uint32_t n_layer;         /* layers on the device */
    uint32_t n_part;          /* of which partial (experts elsewhere) */
    fraction overflow;        /* what the first partial layer gives away */
} ngl_t;

typedef struct fitter fitter;

/* llama.cpp b10587's extra model (common/fit.h common_fit_extra_model):
 * llama-server's draft model or MTP context, fitted beside the model
 * (FIT_N_STREAMS). Its context follows the fit's: it is projected again
 * at every context the fit tries, and its bytes on the fit's devices
 * (those the model does not use dropped) and the host's are added to
 * every measurement; an MTP context's weights are the model's, not
 * counted again. common/draft.c makes one for a plan (ggfit.h's
 * ggfit_fit_options.extra); ggfit_plan_free frees it. */
struct ggfit_fit_extra {
    ggfit_model *own;         /* -md's model, opened for the fit; NULL:
                                 the fitted model (an MTP context) */
    ggfit_params params;      /* its flags; n_ctx is the fit's */
    uint32_t n_devs;          /* its devices (-devd): their index among */
    uint32_t at[GGFIT_MAX_DEVICES]; /* the devices ggfit_fit is given */
    bool shares_model;        /* its weights are the model's (MTP) */
};

/* The context the fit resolves an unset one to (FIT_N_STREAMS): the
 * trained context times the KV streams (-np N without -kvu), saturated;
 * before FIT_N_STREAMS, the trained context. */
uint32_t ggfit__fit_ctx_max(const ggfit_model *m, const ggfit_params *p);

/* Frees e and the model it opened (NULL does nothing). */
void ggfit__fit_extra_free(ggfit_fit_extra *e);

/* Where a fit departs from llama.cpp's: the points a caller above the port
 * (fit_around.c) varies. ggfit__fit_run starts every fit with llama.cpp's
 * own: n_place hp_ngl + 1, the rest zero. */
typedef struct fit_hooks {
    uint32_t n_place;         /* layers steps 3 and 4 place (n_unassigned's
                                 start): llama.cpp's hp_ngl + 1 */
    uint32_t n_keep;          /* overrides of the flags kept in front of those
                                 set_ngl_tensor_split_tbo writes: none */
    bool keep_ts;             /* the flags' -ts kept, not written from the
                                 layers per device */
    /* Whether block il's experts stay where flags p put them, with no
     * override written for them (NULL: none do). */
    bool (*block_kept)(const ggfit_params *p, uint32_t il);
    /* Finishes the flags set_ngl_tensor_split_tbo wrote (NULL: as written). */
    void (*flags_done)(const fitter *f, ggfit_params *p);
    /* The layers per device and overflows steps 3 and 4 ended with (NULL:
     * not wanted). */
    void (*layers_done)(fitter *f, const ngl_t *ngl, const int *overflow);
    void *ctx;                /* the caller's, for its hooks */
} fit_hooks;

struct fitter {
    const ggfit_model *m;
    const ggfit_device *devs;
    size_t nd;
    ggfit_params p;           /* the flags being fitted (mparams/cparams) */
    int64_t margin[GGFIT_MAX_DEVICES];
    int64_t free[GGFIT_MAX_DEVICES];
    uint32_t hp_ngl, hp_nct, hp_nex;
    uint32_t n_ctx_min;
    /* the context's range (FIT_N_STREAMS: every KV stream counted, with
     * -np N and no -kvu; before it one stream): n_ctx_train and -fitc
     * times n_streams, saturated; the context as the fit found it unset */
    uint32_t n_streams, n_ctx_max, n_ctx_min_total;
    bool ctx_auto;
    uint32_t orig[GGFIT_MAX_DEVICES]; /* devs[d] is the caller's orig[d] */
    /* the extra model (NULL: none) and its bytes at extra_ctx */
    const ggfit_fit_extra *extra;
    bool extra_done;
    uint32_t extra_ctx;
    int64_t extra_mem[GGFIT_MAX_DEVICES], extra_host;
    int64_t extra_model[GGFIT_MAX_DEVICES]; /* of extra_mem: its weights (none
                                               when it shares the model's) */
    const ggfit_device *caller_devs;
    size_t n_caller_devs;
    ggfit_projection scratch;
    struct ggfit__gcache *cache;  /* the graph shared by the projections */
    ggfit_sb log;
    bool no_log;              /* ggfit_fit_options.no_log: log nothing */
    char **err;
    uint32_t n_proj;
    fit_hooks hooks;
};

/* A line of the fit's log, as common_params_fit_impl's (nothing with
 * no_log). */
void ggfit__fit_log(fitter *f, const char *fmt, ...) GGFIT_PRINTF(2, 3);
/* Projects flags p: device totals into mem[], the host's into *host, the
 * devices' weights into *model_sum (each NULL: not wanted). */
ggfit_status ggfit__fit_project(fitter *f, const ggfit_params *p, int64_t *mem, int64_t *host,
                               int64_t *model_sum);
/* Flags p for ngl layers per device (set_ngl_tensor_split_tbo);
 * overflow[d]: the device the first partial layer of device d spills to,
 * -1 for system memory. */
ggfit_status ggfit__fit_set_flags(fitter *f, const ngl_t *ngl, const int *overflow,
                                 ggfit_params *p);
/* Memory per device with those layers (get_memory_for_layers). */
ggfit_status ggfit__fit_memory_for(fitter *f, const ngl_t *ngl, const int *overflow,
                                  int64_t *mem);
/* Steps 3 and 4: the layers filled back to front, f->p set from them. */
ggfit_status ggfit__fit_layers(fitter *f, ggfit_fit_result *out);

/* What runs where llama.cpp's fit aborts because the user set a flag it
 * would fit (user: the flags as given). */
typedef ggfit_status (*ggfit__fit_on_set_fn)(fitter *f, const ggfit_params *user,
                                             ggfit_fit_result *out);
/* llama.cpp's fit (ggfit_fit's contract), with on_set where it aborts on a
 * set flag (NULL: abort as llama.cpp does). */
ggfit_status ggfit__fit_run(const ggfit_model *m, const ggfit_params *p, const ggfit_device *devs,
                            size_t n, const ggfit_fit_options *opt, ggfit_fit_result *out,
                            ggfit__fit_on_set_fn on_set, char **err);

#endif
