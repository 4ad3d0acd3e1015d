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
// With GGFIT_SHIM_SKIP=N the first N measurements pass through and the
// next is printed (servercmp.py --rows target: the target's, measured in
// the fit after the draft's or the MTP context's).
//
// Fit mode (servercmp.py --fit-mib N): with GGFIT_SHIM_FIT set the
// measurement passes through; ggml_backend_dev_memory reports every device
// but the CPU with $GGFIT_SHIM_DEV_MIB MiB free and total (the rpc-servers
// would report this machine's memory); and common_fit_params, once the real
// one has fitted, prints "ggfit-fit STATUS N_CTX N_GPU_LAYERS TS0,TS1,...
// N_OVERRIDES" and exits: llama-server's own fit decision.
//
// Built by tools/servercmp.py:
//   g++ -shared -fPIC -I LLAMA_SRC/include -I LLAMA_SRC/ggml/include \
//       -I LLAMA_SRC/src [-DGGFIT_SHIM_FIT_EXTRA] servercmp_shim.cpp -o shim.so -ldl
#include "llama-ext.h"

#include "ggml-backend.h"
#include "shim_fit.h"

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
    if (getenv("GGFIT_SHIM_FIT")) {
        return mb;   // fit mode: the fit goes on, common_fit_params prints its result
    }
    // GGFIT_SHIM_SKIP=N: the first N measurements pass through (with a
    // draft or an MTP context the server measures that first, then the
    // target in its fit): the next one is printed
    static int n_seen = 0;
    const char * skip = getenv("GGFIT_SHIM_SKIP");
    if (skip && n_seen++ < atoi(skip)) {
        return mb;
    }

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

extern "C" void ggml_backend_dev_memory(ggml_backend_dev_t dev, size_t * free, size_t * total) {
    using fn_t = void (*)(ggml_backend_dev_t, size_t *, size_t *);
    static fn_t real = (fn_t) dlsym(RTLD_NEXT, "ggml_backend_dev_memory");
    real(dev, free, total);
    const char * mib = getenv("GGFIT_SHIM_DEV_MIB");
    if (mib && ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU) {
        *free = *total = (size_t) strtoull(mib, nullptr, 10) << 20;
    }
}

// common/fit.h (not included: libllama-common's headers are not needed for
// the one call); the return type is an enum, not part of the mangled name.
// From b10584 (2fb989b9e) it takes the extra model (a draft or MTP context
// fitted beside the model) before the log level: servercmp.py builds with
// -DGGFIT_SHIM_FIT_EXTRA when the source's common/fit.h declares
// common_fit_extra_model.
#ifdef GGFIT_SHIM_FIT_EXTRA
struct common_fit_extra_model;
#define EXTRA_PARAM const common_fit_extra_model * extra,
#define EXTRA_TYPE const common_fit_extra_model *,
#define EXTRA_ARG extra,
#define FIT_SYMBOL "_Z17common_fit_paramsPKcP18llama_model_paramsP20llama_context_paramsPf" \
    "P32llama_model_tensor_buft_overridePmjPK22common_fit_extra_model14ggml_log_level"
#else
#define EXTRA_PARAM
#define EXTRA_TYPE
#define EXTRA_ARG
#define FIT_SYMBOL "_Z17common_fit_paramsPKcP18llama_model_paramsP20llama_context_paramsPf" \
    "P32llama_model_tensor_buft_overridePmj14ggml_log_level"
#endif
int common_fit_params(const char * path_model, llama_model_params * mparams,
                      llama_context_params * cparams, float * tensor_split,
                      llama_model_tensor_buft_override * tensor_buft_overrides, size_t * margins,
                      uint32_t n_ctx_min, EXTRA_PARAM ggml_log_level log_level) {
    using fn_t = int (*)(const char *, llama_model_params *, llama_context_params *, float *,
                         llama_model_tensor_buft_override *, size_t *, uint32_t, EXTRA_TYPE
                         ggml_log_level);
    // GGFIT_SHIM_GPU_ORDER: llama-server adds a draft's (or projector's)
    // bytes to fit_params_target at the device's index in ggml's device
    // list, where a CPU build lists the CPU first (every RPC device one slot
    // on); shift the targets back so that device i's are at i, as on a GPU
    // machine (what ggfit plans)
    if (getenv("GGFIT_SHIM_GPU_ORDER") && margins) {
        const size_t nm = llama_max_devices();
        for (size_t i = 0; i + 1 < nm; i++) {
            margins[i] = margins[i + 1];
        }
    }
    static fn_t real = (fn_t) dlsym(RTLD_NEXT, FIT_SYMBOL);
    if (!real) {
        fprintf(stderr, "ggfit-shim: common_fit_params not found\n");
        _exit(3);
    }
    int status = real(path_model, mparams, cparams, tensor_split, tensor_buft_overrides, margins,
                      n_ctx_min, EXTRA_ARG log_level);
    if (!getenv("GGFIT_SHIM_FIT")) {
        return status;
    }
    const char * path = getenv("GGFIT_SHIM_OUT");
    FILE * out = path ? fopen(path, "w") : stderr;
    if (!out) {
        _exit(3);
    }
    ggfit_shim_print_fit(out, status, mparams, cparams, margins, llama_max_devices());
    fflush(out);
    _exit(0);
}
