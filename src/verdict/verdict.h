/*
 * verdict.h - the verdict's parts the plan uses (not installed).
 */
#ifndef GGFIT_VERDICT_H
#define GGFIT_VERDICT_H

#include "ggfit.h"

/* refit.c: when first (llama.cpp's fit of p) leaves the host short, the
 * fit with the largest context down to opt->n_ctx_min that the whole
 * machine holds: *found, with the fit in *alt (freed by the caller with
 * ggfit_fit_result_free) and its verdict in *altv. Nothing is tried when
 * the user set the context, fitting is off, or the fit failed. */
ggfit_status ggfit__refit_for_host(const ggfit_model *m, const ggfit_params *p,
                                   const ggfit_device *devs, size_t n,
                                   const ggfit_host_mem *host, const ggfit_fit_options *opt,
                                   const ggfit_fit_result *first, bool *found,
                                   ggfit_fit_result *alt, ggfit_verdict *altv, char **err);

/* verdict.c: the verdict without the Metal fixes (one projection less
 * per fix), for searches that judge many plans. */
ggfit_status ggfit__verdict_quick(const ggfit_model *m, const ggfit_params *p,
                                  const ggfit_projection *pr, const ggfit_device *devs, size_t n,
                                  const ggfit_host_mem *host, const ggfit_fit_options *opt,
                                  ggfit_verdict *out, char **err);

/* nearest.c: when the flags as given do not fit the whole machine, the
 * nearest changes that do, fewest first, each verified by a projection:
 * into out (at most max), *n of them. */
ggfit_status ggfit__nearest(const ggfit_model *m, const ggfit_params *p,
                            const ggfit_projection *pr, const ggfit_device *devs, size_t n_devs,
                            const ggfit_host_mem *host, const ggfit_fit_options *opt,
                            ggfit_change *out, size_t max, size_t *n, char **err);

#endif
