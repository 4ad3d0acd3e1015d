// servercmp_shim.cpp - LD_PRELOAD shim for tools/servercmp.py.
//
// llama-server fits its flags (common/fit.cpp common_fit_params) before it
// loads the model, and the first thing the fit does is to measure the flags
// as given: common_get_device_memory_data_impl calls
// llama_get_memory_breakdown on a context made with no_alloc. llama-server
// only logs that measurement in MiB; this shim stands in for
// llama_get_memory_breakdown (libllama.so exports it, libllama-common.so
// calls it through the PLT), calls the real one, prints its rows in bytes
// as llama-fit-params' common_fit_print does (one line per device of the
// model, then Host; other buffer types are left out as the fit leaves them
// out), prefixed "ggfit-shim", to $GGFIT_SHIM_OUT (else stderr), and exits:
// the server never loads the model.
//
// Built by tools/servercmp.py:
//   g++ -shared -fPIC -I LLAMA_SRC/include -I LLAMA_SRC/ggml/include \
//       -I LLAMA_SRC/src servercmp_shim.cpp -o shim.so -ldl
#include "llama-ext.h"

#include "ggml-backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <vector>

llama_memory_breakdown llama_get_memory_breakdown(const struct llama_context * ctx) {
    using fn_t = llama_memory_breakdown (*)(const struct llama_context *);
    static fn_t real = (fn_t) dlsym(RTLD_NEXT, "_Z26llama_get_memory_breakdownPK13llama_context");
    if (!real) {
        fprintf(stderr, "ggfit-shim: llama_get_memory_breakdown not found\n");
        _exit(3);
    }
    llama_memory_breakdown mb = real(ctx);

    const llama_model * model = llama_get_model(ctx);
    const int nd = llama_model_n_devices(model);
    std::vector<llama_memory_breakdown_data> rows(nd + 1);
    for (const auto & [buft, d] : mb) {
        int row = -1;
        if (ggml_backend_buft_is_host(buft)) {
            row = nd;
        } else if (ggml_backend_dev_t dev = ggml_backend_buft_get_device(buft)) {
            for (int i = 0; i < nd; i++) {
                if (dev == llama_model_get_device(model, i)) {
                    row = i;
                    break;
                }
            }
        }
        if (row < 0) {
            continue;
        }
        rows[row].model   += d.model;
        rows[row].context += d.context;
        rows[row].compute += d.compute;
    }
    // to $GGFIT_SHIM_OUT when set (llama-server's own log shares stderr)
    const char * path = getenv("GGFIT_SHIM_OUT");
    FILE * out = path ? fopen(path, "w") : stderr;
    if (!out) {
        fprintf(stderr, "ggfit-shim: cannot write %s\n", path);
        _exit(3);
    }
    for (int i = 0; i <= nd; i++) {
        fprintf(out, "ggfit-shim %s %zu %zu %zu\n",
                i < nd ? ggml_backend_dev_name(llama_model_get_device(model, i)) : "Host",
                rows[i].model, rows[i].context, rows[i].compute);
    }
    fflush(out);
    _exit(0);
}
