// llama_breakdown.cpp - llama_get_memory_breakdown (C++ only in llama.cpp,
// src/llama-ext.h) as C rows for examples/llama_load.c. Built with
// llama.cpp's src/ on the include path (make llama-example).
#include "llama_breakdown.h"

#include "llama-ext.h"

#include "ggml-backend.h"
#include "llama.h"

#include <stdio.h>

size_t llama_breakdown(const struct llama_context * ctx, llama_breakdown_row * rows, size_t max) {
    const llama_model * model = llama_get_model(ctx);
    const int n_dev = llama_model_n_devices(model);
    size_t n = 0;
    for (const auto & entry : llama_get_memory_breakdown(ctx)) {
        ggml_backend_buffer_type_t buft = entry.first;
        if (n < max) {
            llama_breakdown_row & r = rows[n];
            snprintf(r.name, sizeof r.name, "%s", ggml_backend_buft_name(buft));
            r.is_host = ggml_backend_buft_is_host(buft);
            r.device  = -1;
            ggml_backend_dev_t dev = ggml_backend_buft_get_device(buft);
            for (int i = 0; i < n_dev && !r.is_host; i++) {
                if (dev == llama_model_get_device(model, i)) {
                    r.device = i;
                }
            }
            r.model   = entry.second.model;
            r.context = entry.second.context;
            r.compute = entry.second.compute;
        }
        n++;
    }
    return n;
}
