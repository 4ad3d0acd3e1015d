/*
 * fitter.h - llama.cpp's fit in progress (fit.c, common/fit.cpp's
 * common_params_fit_impl), internal: its state and the steps that
 * --fit-around (fit_around.c), which continues where llama.cpp's fit
 * aborts on a set flag, builds on. Nothing in fit.c calls fit_around.c:
 * ggfit_fit (fit_around.c) hands fit.c the continuation.
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

typedef struct fitter {
    const ggfit_model *m;
    const ggfit_device *devs;
    size_t nd;
    ggfit_params p;           /* the flags being fitted (mparams/cparams) */
    int64_t margin[GGFIT_MAX_DEVICES];
    int64_t free[GGFIT_MAX_DEVICES];
    uint32_t hp_ngl, hp_nct, hp_nex;
    uint32_t n_ctx_min;
    ggfit_projection scratch;
    struct ggfit__gcache *cache;  /* the graph shared by the projections */
    ggfit_sb log;
    bool no_log;              /* ggfit_fit_options.no_log: log nothing */
    char **err;
    uint32_t n_proj;
    /* --fit-around's (fit_around.c sets them; zero/defaults for llama.cpp's
     * own fit): the user's -ot kept in front
     * of the fit's, the layers the fit places (hp_ngl + 1, or -ngl's), the
     * user's -ts kept as given, and blocks whose experts -cmoe/-ncmoe
     * already put in system memory left to those flags */
    uint32_t n_keep;
    uint32_t budget;
    bool keep_ts;
    bool around;
    int32_t ngl_user;         /* -ngl as given, written when all are placed */
    ngl_t last[GGFIT_MAX_DEVICES]; /* the layers the fit ended with */
    int last_overflow[GGFIT_MAX_DEVICES];
} fitter;

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
 * would fit (user: the flags as given); NULL: abort as llama.cpp does. */
typedef ggfit_status (*ggfit__fit_around_fn)(fitter *f, const ggfit_params *user,
                                             ggfit_fit_result *out);
/* llama.cpp's fit (ggfit_fit's contract), with around where it aborts on a
 * set flag and opt asks for --fit-around. */
ggfit_status ggfit__fit_run(const ggfit_model *m, const ggfit_params *p, const ggfit_device *devs,
                            size_t n, const ggfit_fit_options *opt, ggfit_fit_result *out,
                            ggfit__fit_around_fn around, char **err);

#endif
