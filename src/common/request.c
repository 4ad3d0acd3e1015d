/*
 * request.c - the command line's plan as a library call: a request as a
 * program starts with it. Its flags are parsed in common/args.c, from the
 * table of data/llama_args.tsv and data/flags.tsv; the plan they ask for is
 * made in plan/request_plan.c. The devices themselves are ordered and
 * probed in devices/order.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "common/args.h"
#include "common/params.h"
#include "common/draft.h"
#include "common/mmproj.h"

void ggfit_request_init(ggfit_request *r)
{
    /* All zero but the two sets of overrides, which are read only below
     * n_overrides (ggfit__params_init_head): they are nearly all of it. */
    const ggfit__hole ov[] = {
        { offsetof(ggfit_request, params.overrides), sizeof r->params.overrides },
        { offsetof(ggfit_request, draft.overrides), sizeof r->draft.overrides },
    };
    _Static_assert(offsetof(ggfit_request, params) < offsetof(ggfit_request, draft),
                   "holes in order");
    ggfit__zero_except(r, sizeof *r, ov, 2);
    ggfit__params_init_head(&r->params);
    ggfit__params_init_head(&r->draft);
    ggfit_mmproj_params_init(&r->mmproj_params);
    ggfit__spec_init(r);
    ggfit_fit_options_init(&r->fit);
    r->rpc_timeout_ms = 5000;
    r->cache_ram_mib = -2;
    r->program = GGFIT_FOR_SERVER;   /* the program the printed line is for */
    ggfit_llama_version_latest(&r->llama);
}


ggfit_status ggfit_request_version(ggfit_request *r, char **err)
{
    ggfit_status rc = GGFIT_OK;
    if (!r->llama_asked) {   /* a program asked once per request */
        if (r->llama_server)
            rc = ggfit_llama_version_from_server(r->llama_server, &r->llama, err);
        else if (r->llama_bin || r->detect)
            rc = ggfit_llama_version_detect(r->llama_bin, &r->llama, err);
        if (rc != GGFIT_OK)
            return rc;
        r->llama_asked = r->llama_server || r->llama_bin || r->detect;
    }
    r->params.llama_build = r->draft.llama_build = r->llama.rules;
    /* the flags typed that this version lacks, as llama.cpp refuses them */
    for (uint32_t i = 0; i < r->n_versioned; i++) {
        const char *a = r->versioned[i][0], *v = r->versioned[i][1];
        bool negated, env = a[0] != '-';
        ggfit__flag f;
        int row = env ? ggfit__flag_find_key(a, &negated) : ggfit__flag_find(a, &negated);
        if (row >= 0 && ggfit__flag_row((size_t)row, &f) &&
            (rc = ggfit__flag_in_version(&f, a, negated && !env ? NULL : v, env, r->llama.rules,
                                         r->program, err)))
            return rc;
    }
    /* then llama.cpp's config files, below everything given */
    return ggfit__request_config(r, err);
}
