// mtmdcmp_shim.cpp - LD_PRELOAD shim for tools/mtmdcmp.py.
//
// llama-server measures its multimodal projector before the fit
// (tools/server/server-context.cpp load_model: mtmd_get_memory_usage, which
// builds the clip contexts with no_alloc, reserves their warmup graphs and
// returns weights + compute buffer per device). This shim stands in for
// mtmd_get_memory_usage (libmtmd.so exports it, the server calls it through
// the PLT): it calls the real one and prints, to $GGFIT_SHIM_OUT, one line
//     mtmd-dev INDEX NAME BYTES
// per device it returned (INDEX: the device's index in ggml's device list,
// where the server adds the bytes to fit_params_target), and, for every
// compute buffer the clip contexts reserved on the way,
//     mtmd-compute NAME BYTES
// (ggml_backend_sched_get_buffer_size per backend; with -fa auto a graph may
// be reserved twice, the last one counting). Then it exits: the server never
// loads the model.
//
// Built by tools/mtmdcmp.py:
//   g++ -shared -fPIC -std=c++17 -I LLAMA_SRC/tools/mtmd -I LLAMA_SRC/include \
//       -I LLAMA_SRC/ggml/include mtmdcmp_shim.cpp -o shim.so -ldl
#include "mtmd.h"

#include "ggml-backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>

static FILE * out_file() {
    static FILE * out = nullptr;
    if (!out) {
        const char * path = getenv("GGFIT_SHIM_OUT");
        out = path ? fopen(path, "w") : stderr;
        if (!out) {
            _exit(3);
        }
    }
    return out;
}

static bool in_mtmd = false;

extern "C" size_t ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend) {
    using fn_t = size_t (*)(ggml_backend_sched_t, ggml_backend_t);
    static fn_t real = (fn_t) dlsym(RTLD_NEXT, "ggml_backend_sched_get_buffer_size");
    size_t size = real(sched, backend);
    if (in_mtmd) {
        fprintf(out_file(), "mtmd-compute %s %zu\n", ggml_backend_name(backend), size);
    }
    return size;
}

std::map<ggml_backend_dev_t, size_t> mtmd_get_memory_usage(const char * fname,
                                                            struct mtmd_context_params params) {
    using fn_t = std::map<ggml_backend_dev_t, size_t> (*)(const char *, mtmd_context_params);
    static fn_t real = (fn_t) dlsym(RTLD_NEXT, "_Z21mtmd_get_memory_usagePKc19mtmd_context_params");
    if (!real) {
        fprintf(stderr, "mtmdcmp-shim: mtmd_get_memory_usage not found\n");
        _exit(3);
    }
    in_mtmd = true;
    auto mem = real(fname, params);
    in_mtmd = false;
    FILE * out = out_file();
    if (mem.empty()) {
        fprintf(out, "mtmd-failed\n");
    }
    for (auto & [dev, size] : mem) {
        size_t idx = 0;
        while (idx < ggml_backend_dev_count() && ggml_backend_dev_get(idx) != dev) {
            idx++;
        }
        fprintf(out, "mtmd-dev %zu %s %zu\n", idx, ggml_backend_dev_name(dev), size);
    }
    fflush(out);
    _exit(0);
}
