// shim_fit.h - the line tools/servercmp_shim.cpp and tools/routercmp_shim.cpp
// print once llama.cpp's common_fit_params has fitted (their Python halves
// read it): "ggfit-fit STATUS N_CTX N_GPU_LAYERS TS0,TS1,... N_OVERRIDES",
// then "ggfit-margins M0 M1 ..." for nd devices (16 at most).
#pragma once

#include "llama.h"

#include <stdio.h>

static inline void ggfit_shim_print_fit(FILE * out, int status, const llama_model_params * mparams,
                                        const llama_context_params * cparams, const size_t * margins,
                                        size_t nd) {
    size_t n_ot = 0;
    while (mparams->tensor_buft_overrides && mparams->tensor_buft_overrides[n_ot].pattern) {
        n_ot++;
    }
    nd = nd < 16 ? nd : 16;
    fprintf(out, "ggfit-fit %d %u %d ", status, cparams->n_ctx, mparams->n_gpu_layers);
    for (size_t i = 0; i < nd; i++) {
        fprintf(out, "%s%g", i ? "," : "", mparams->tensor_split ? mparams->tensor_split[i] : 0.0f);
    }
    fprintf(out, " %zu\n", n_ot);
    fprintf(out, "ggfit-margins");
    for (size_t i = 0; margins && i < nd; i++) {
        fprintf(out, " %zu", margins[i]);
    }
    fprintf(out, "\n");
}
