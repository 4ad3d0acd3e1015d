// routercmp_shim.cpp - LD_PRELOAD shim for tools/routercmp.py: RPC devices
// that behave like GPUs shared by a llama-server router's children.
//
// The router passes its whole environment to every child it spawns, so
// LD_PRELOAD on the router reaches each child. In each process the shim:
//
// (a) stands in for ggml_backend_dev_memory: every device but the CPU (the
//     ggml-rpc-server "GPUs") reports total = $GGFIT_SHIM_DEV_MIB MiB and
//     free = total less what every live process holds on it, read from the
//     ledger directory $GGFIT_SHIM_LEDGER (the process's own file counts
//     too, as cudaMemGetInfo counts a process's own allocations). A CPU
//     rpc-server would report this machine's RAM, free == total
//     (ggml-cpu.cpp ggml_backend_cpu_device_get_memory), whatever the other
//     children hold: without the ledger the order of the loads could never
//     matter. The CPU device itself is left real: common_fit_params reads
//     it only when there is no device (fit.cpp, nd == 0, against total).
//
// (b) keeps the process's own ledger file, $GGFIT_SHIM_LEDGER/PID, one line
//     "DEVICE BYTES" per device, up to date: it stands in for
//     ggml_backend_buffer_init (libggml-rpc's alloc_buffer calls it through
//     the PLT; so does libggml-base's own code, which has a JUMP_SLOT for
//     it) and ggml_backend_buffer_free (libllama and libggml-base's
//     allocators call it through the PLT), and counts the buffers of every
//     device that is not the CPU. The file is rewritten (write, rename) on
//     every change and removed at exit; files of dead pids are skipped
//     when read, so a killed child's memory counts as freed.
//
// (c) stands in for common_fit_params (b10584 and later: with the extra
//     model): it writes what the devices reported just before the fit,
//     then, once the real fit has run, its decision to
//     $GGFIT_SHIM_FITDIR/PID.fit:
//         ggfit-model PATH
//         ggfit-free DEVICE FREE TOTAL          (one per device, bytes)
//         ggfit-fit STATUS N_CTX N_GPU_LAYERS TS0,TS1,... N_OVERRIDES
//         ggfit-margins M0 M1 ...               (the targets the fit used)
//     and returns: the child goes on and really loads, and holds its
//     memory while the next child fits.
//
// GGFIT_SHIM_GPU_ORDER: llama-server adds the projector's bytes to
// fit_params_target at the device's index in ggml's device list
// (server-context.cpp load_model), where a CPU build lists the CPU first and
// every RPC device one slot on; the shim shifts the targets back so that
// device i's are at i, as on a GPU machine (what ggfit plans).
//
// Built by tools/routercmp.py:
//   g++ -shared -fPIC -std=c++17 -I SRC/include -I SRC/ggml/include
//       -I SRC/ggml/src routercmp_shim.cpp -o shim.so -ldl
#include "ggml-backend-impl.h"
#include "llama.h"
#include "shim_fit.h"

#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace {

// Never destroyed: buffers are still freed while the process exits, after
// static destructors have run.
std::mutex & mu = *new std::mutex;
auto & live = *new std::unordered_map<ggml_backend_buffer_t, std::pair<std::string, size_t>>;
auto & held = *new std::map<std::string, size_t>;   // this process's bytes per device
bool exiting = false;   // the file is removed: later frees do not write it again

// Real functions, found past this object.
template <typename T> T next(const char * name) {
    T fn = (T) dlsym(RTLD_NEXT, name);
    if (!fn) {
        fprintf(stderr, "routercmp-shim: %s not found\n", name);
        _exit(3);
    }
    return fn;
}

std::string ledger_path(pid_t pid) {
    const char * dir = getenv("GGFIT_SHIM_LEDGER");
    return dir ? std::string(dir) + "/" + std::to_string(pid) : std::string();
}

// Rewrites this process's file (under mu): written aside, then renamed, so
// a reader never sees half a file.
void ledger_write() {
    std::string path = ledger_path(getpid());
    if (path.empty() || exiting) {
        return;
    }
    std::string tmp = path + ".tmp";
    FILE * f = fopen(tmp.c_str(), "w");
    if (!f) {
        return;
    }
    for (const auto & [dev, bytes] : held) {
        fprintf(f, "%s %zu\n", dev.c_str(), bytes);
    }
    fclose(f);
    rename(tmp.c_str(), path.c_str());
}

// What all live processes hold on a device, per the ledger.
size_t ledger_sum(const char * dev) {
    const char * dir = getenv("GGFIT_SHIM_LEDGER");
    DIR * d = dir ? opendir(dir) : nullptr;
    size_t sum = 0;
    if (!d) {
        return 0;
    }
    while (struct dirent * e = readdir(d)) {
        char * end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || (kill((pid_t) pid, 0) != 0 && errno != EPERM)) {
            continue;   // not a pid's file (a .tmp, . or ..), or its process is gone
        }
        FILE * f = fopen((std::string(dir) + "/" + e->d_name).c_str(), "r");
        char name[512];
        size_t bytes;
        while (f && fscanf(f, "%511s %zu", name, &bytes) == 2) {
            if (!strcmp(name, dev)) {
                sum += bytes;
            }
        }
        if (f) {
            fclose(f);
        }
    }
    closedir(d);
    return sum;
}

bool counted(ggml_backend_buffer_type_t buft) {
    ggml_backend_dev_t dev = buft ? ggml_backend_buft_get_device(buft) : nullptr;
    return dev && ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU;
}

__attribute__((destructor)) void ledger_remove() {
    std::lock_guard<std::mutex> lock(mu);
    exiting = true;
    std::string path = ledger_path(getpid());
    if (!path.empty()) {
        unlink(path.c_str());
    }
}

}  // namespace

extern "C" ggml_backend_buffer_t ggml_backend_buffer_init(ggml_backend_buffer_type_t buft,
                                                          struct ggml_backend_buffer_i iface,
                                                          void * context, size_t size) {
    using fn_t = ggml_backend_buffer_t (*)(ggml_backend_buffer_type_t, struct ggml_backend_buffer_i,
                                           void *, size_t);
    static fn_t real = next<fn_t>("ggml_backend_buffer_init");
    ggml_backend_buffer_t buf = real(buft, iface, context, size);
    if (buf && size && counted(buft)) {
        std::string dev = ggml_backend_dev_name(ggml_backend_buft_get_device(buft));
        std::lock_guard<std::mutex> lock(mu);
        live[buf] = { dev, size };
        held[dev] += size;
        ledger_write();
    }
    return buf;
}

extern "C" void ggml_backend_buffer_free(ggml_backend_buffer_t buf) {
    using fn_t = void (*)(ggml_backend_buffer_t);
    static fn_t real = next<fn_t>("ggml_backend_buffer_free");
    if (buf) {
        std::lock_guard<std::mutex> lock(mu);
        auto it = live.find(buf);
        if (it != live.end()) {
            held[it->second.first] -= it->second.second;
            live.erase(it);
            ledger_write();
        }
    }
    real(buf);
}

extern "C" void ggml_backend_dev_memory(ggml_backend_dev_t dev, size_t * free, size_t * total) {
    using fn_t = void (*)(ggml_backend_dev_t, size_t *, size_t *);
    static fn_t real = next<fn_t>("ggml_backend_dev_memory");
    const char * mib = getenv("GGFIT_SHIM_DEV_MIB");
    if (mib && ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU) {
        // no round trip to the rpc-server (whose answer is replaced anyway,
        // and which may be gone when a child prints its breakdown at exit)
        *total = (size_t) strtoull(mib, nullptr, 10) << 20;
        size_t used = ledger_sum(ggml_backend_dev_name(dev));
        *free = used < *total ? *total - used : 0;
        return;
    }
    real(dev, free, total);
}

// common/fit.h (not included: libllama-common's headers are not needed for
// the one call); the return type is an enum, not part of the mangled name.
struct common_fit_extra_model;
extern "C++" int common_fit_params(const char * path_model, llama_model_params * mparams,
                                   llama_context_params * cparams, float * tensor_split,
                                   llama_model_tensor_buft_override * tensor_buft_overrides,
                                   size_t * margins, uint32_t n_ctx_min,
                                   const common_fit_extra_model * extra,
                                   ggml_log_level log_level) {
    using fn_t = int (*)(const char *, llama_model_params *, llama_context_params *, float *,
                         llama_model_tensor_buft_override *, size_t *, uint32_t,
                         const common_fit_extra_model *, ggml_log_level);
    static fn_t real = next<fn_t>(
        "_Z17common_fit_paramsPKcP18llama_model_paramsP20llama_context_paramsPf"
        "P32llama_model_tensor_buft_overridePmjPK22common_fit_extra_model14ggml_log_level");
    const size_t nm = llama_max_devices();
    if (getenv("GGFIT_SHIM_GPU_ORDER") && margins) {
        for (size_t i = 0; i + 1 < nm; i++) {
            margins[i] = margins[i + 1];
        }
    }
    const char * dir = getenv("GGFIT_SHIM_FITDIR");
    std::string path = std::string(dir ? dir : "/tmp") + "/" + std::to_string(getpid()) + ".fit";
    FILE * out = fopen(path.c_str(), "w");
    if (!out) {
        fprintf(stderr, "routercmp-shim: cannot write %s\n", path.c_str());
        _exit(3);
    }
    fprintf(out, "ggfit-model %s\n", path_model);
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) {
            continue;
        }
        size_t free, total;
        ggml_backend_dev_memory(dev, &free, &total);
        fprintf(out, "ggfit-free %s %zu %zu\n", ggml_backend_dev_name(dev), free, total);
    }
    fflush(out);
    int status = real(path_model, mparams, cparams, tensor_split, tensor_buft_overrides, margins,
                      n_ctx_min, extra, log_level);
    ggfit_shim_print_fit(out, status, mparams, cparams, margins, nm);
    fclose(out);
    return status;
}
