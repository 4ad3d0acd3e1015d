/*
 * bench_args.h - llama-bench's command line made into instances and tests
 * (bench_args.c; not installed). plan/bench.c plans them.
 */
#ifndef GGFIT_BENCH_ARGS_H
#define GGFIT_BENCH_ARGS_H

#include "ggfit_app.h"

#define GGFIT__BENCH_MAX_VALUES 64
#define GGFIT__BENCH_VALUE_LEN 512

/* One list's values, its comma lists and ranges expanded (llama-bench's
 * default when the flag was not given). */
typedef struct ggfit__bench_vals {
    bool given;
    uint32_t n;
    char v[GGFIT__BENCH_MAX_VALUES][GGFIT__BENCH_VALUE_LEN];
} ggfit__bench_vals;

/* What an instance sets beside the flags. */
typedef struct ggfit__bench_inst {
    bool fit;                 /* -fitt or -fitc not 0: llama-bench fits */
    uint64_t fit_margin_mib;  /* -fitt, per device */
    uint32_t fit_min_ctx;     /* -fitc */
    uint32_t depth;           /* -d */
    char flags[192];          /* the flags given, this instance's values */
} ggfit__bench_inst;

typedef struct ggfit__bench_test {
    uint32_t n_prompt, n_gen;
} ggfit__bench_test;

/* List k's values into out. */
ggfit_status ggfit__bench_values(const ggfit_bench_args *a, int list, ggfit__bench_vals *out,
                                 char **err);

/* Every list's values (vals: GGFIT_BENCH_LISTS of them) and how many
 * instances they combine into; more than GGFIT_BENCH_MAX_TESTS is
 * GGFIT_EINVAL. */
ggfit_status ggfit__bench_lists(const ggfit_bench_args *a, ggfit__bench_vals *vals,
                                size_t *n_instances, char **err);

/* Instance k (0 <= k < n_instances, llama-bench's order) applied to p, which
 * holds the request's flags. */
ggfit_status ggfit__bench_instance(const ggfit__bench_vals *vals, size_t k, ggfit_params *p,
                                   ggfit__bench_inst *in, char **err);

/* The tests every instance makes: each -p (pp), each -n (tg), each -pg,
 * zeros left out, as llama-bench orders them; at most max, how many. */
size_t ggfit__bench_tests(const ggfit__bench_vals *vals, ggfit__bench_test *out, size_t max);

#endif
