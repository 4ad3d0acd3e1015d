/*
 * verdict.h - the verdict's parts the plan uses (not installed).
 */
#ifndef GGFIT_VERDICT_H
#define GGFIT_VERDICT_H

#include "ggfit_app.h"

/* refit.c: llama.cpp's decision (first, judged firstv) leaves the host
 * short, or a device inside its margin: the nearest plan that the whole
 * machine holds (the largest context down to -fitc whose fit it holds,
 * when the context is not set; for a device, else llama.cpp's fit with
 * that device's target raised by what it lacked). *found, with the fit in
 * *alt (freed by the caller with ggfit_fit_result_clear) and its verdict
 * in *altv. Nothing is tried when fitting is off, the fit failed, or
 * firstv fits. */
ggfit_status ggfit__refit(const ggfit_model *m, const ggfit_params *p, const ggfit_device *devs,
                          size_t n, const ggfit_host_mem *host, const ggfit_fit_options *opt,
                          const ggfit_fit_result *first, const ggfit_verdict *firstv,
                          bool *found, ggfit_fit_result *alt, ggfit_verdict *altv, char **err);

/* verdict.c: the margin -fitt keeps on device d (one value is every
 * device's; none: 1024 MiB). */
uint64_t ggfit__fit_margin(const ggfit_fit_options *opt, size_t d);

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
