/*
 * ggfit_app.h - the ggfit command line's layers, for programs that want its
 * whole answer: requests (llama.cpp's flags and ggfit's), plans and their
 * verdict on the whole machine, multimodal projectors, speeds, bench,
 * sweeps, the quant table and remote models; and the definitions of
 * ggfit.h's handles (ggfit_params, ggfit_projection, ggfit_fit_result) as
 * the library fills them.
 *
 * This header MAY CHANGE BETWEEN ANY TWO VERSIONS of ggfit, and its structs
 * with it (fields added, moved or resized): a program that includes it
 * runs with the version of libggfit it was built against alone
 * (GGFIT_VERSION_NUMBER == ggfit_version_number()). A program or binding
 * that must outlive an upgrade uses ggfit.h alone.
 *
 * The structs are large (a plan is close to a megabyte): keep them on the
 * heap, not the stack (ggfit_request_new, ggfit_plan_new).
 */
#ifndef GGFIT_APP_H
#define GGFIT_APP_H

#include "ggfit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * llama.cpp's flags as the library keeps them (ggfit.h's ggfit_params)
 * ---------------------------------------------------------------------- */

#define GGFIT_MAX_OVERRIDES 256   /* -ot given at most */

typedef struct ggfit_override {
    char pattern[256];        /* ECMAScript regex, searched in tensor names */
    char buffer[80];          /* "CPU" or a device's buffer type name */
} ggfit_override;

/* llama.cpp's flags, same names and defaults (ggfit_params_init). */
struct ggfit_params {
    uint32_t n_ctx;           /* -c; 0 = the trained context */
    uint32_t n_batch;         /* -b, 2048 */
    uint32_t n_ubatch;        /* -ub, 512 */
    uint32_t n_seq;           /* -np, 1 */
    bool kv_unified;          /* -kvu */
    int flash_attn;           /* -fa: GGFIT_FA_AUTO, _OFF, _ON */
    uint32_t type_k, type_v;  /* -ctk, -ctv: ggfit_type, F16 */
    bool swa_full;            /* --swa-full */
    int32_t n_gpu_layers;     /* -ngl: N, GGFIT_NGL_AUTO or GGFIT_NGL_ALL */
    float tensor_split[GGFIT_MAX_DEVICES]; /* -ts; all zero = by free memory */
    int split_mode;           /* -sm */
    int32_t main_gpu;         /* -mg */
    ggfit_override overrides[GGFIT_MAX_OVERRIDES]; /* -ot, in order */
    uint32_t n_overrides;
    bool cpu_moe;             /* -cmoe: every expert tensor in system RAM */
    uint32_t n_cpu_moe;       /* -ncmoe N: experts of blocks 0..N-1 */
    bool no_kv_offload;       /* -nkvo */
    bool no_repack;           /* --no-repack */
    bool no_host;             /* --no-host */
    bool use_mmap;            /* --mmap (fit turns it off) */
    uint32_t cpu_features;    /* GGFIT_CPU_* of the CPU planned for: decide
                                 the extra buffer types (AMX, CPU_REPACK) */
    /* which flags the user set, for the fit */
    bool set_n_ctx, set_n_gpu_layers, set_tensor_split, set_overrides;
    /* llama-server's embedding modes (common/arg.cpp, accepted by
     * llama-server alone): --embedding/--embeddings sets embeddings (the
     * graph then pools the last hidden states, and llama-server makes -b
     * no larger than -ub); --rerank/--reranking sets embeddings and pooling
     * rank; --pooling none|mean|cls|last|rank sets the pooling, which only
     * changes memory with embeddings on. */
    bool embeddings;
    int pooling;              /* GGFIT_POOLING_*; UNSPECIFIED: the model's
                                 <arch>.pooling_type, else none */
    uint32_t n_tensor_split;  /* values -ts gave (more than the devices is
                                 llama.cpp's to ignore: a warning) */
    bool set_n_seq;           /* -np was given (llama-server's default is
                                 auto: 4 slots and a unified cache) */
    /* The outputs the compute graph is reserved for (common_params
     * n_outputs_max -> llama_context cparams.n_outputs_max): 0 is -b, as
     * llama-fit-params and llama-cli reserve; llama-server sets one per
     * slot (server_n_outputs_max, ggfit_params_server). An encoder-decoder
     * (T5) always reserves -b. */
    uint32_t n_outputs_max;
    /* llama-server's prompt cache (--cache-ram MiB, server_prompt_cache):
     * host memory beyond llama.cpp's fit, counted in the verdict's Host
     * pool. 0 none (ggfit_params_init: llama-fit-params has no cache), -1
     * no size limit (then at most the context's tokens: the KV cache's
     * size once more). */
    int32_t cache_ram_mib;
    /* llama-server's speculative decoding as the model and its contexts
     * see it (common/common.cpp common_model_params_to_llama, ...
     * _context_params_to_llama): load_mtp, --spec-type draft-mtp: the
     * NextN blocks' tensors are loaded where the architecture has an MTP
     * head, and the fit counts the NextN blocks among its layers; ctx_mtp:
     * the context is the MTP draft context (LLAMA_CONTEXT_TYPE_MTP: its
     * own memory and graph, on the target's weights); n_rs_seq: recurrent
     * state snapshots per sequence for rollback (cparams.n_rs_seq: the
     * draft's tokens with draft-mtp and the other types that need them),
     * kept on the architectures that roll back (Qwen 3.5), else 0. */
    bool load_mtp;
    bool ctx_mtp;
    uint32_t n_rs_seq;
    /* The llama.cpp build whose rules answer (ggfit_llama_version.rules):
     * 0 is the newest ggfit supports. */
    uint32_t llama_build;
    /* --mmap or --no-mmap was given: from LOAD_MODE_AUTO (b10364) the
     * default load mode is auto, which maps the file unless a device used
     * cannot (ggfit_params_load_mode) */
    bool set_use_mmap;
    /* -t: the CPU's threads (no effect on memory; the speed model's CPU
     * legs), 0: llama.cpp's default, one per core */
    uint32_t n_threads;
};

/* llama.cpp's default load mode where the flags leave it (LOAD_MODE_AUTO,
 * from b10364: llama_model_loader maps the file unless a device the model
 * uses reports no mmap support: integrated CUDA and ROCm GPUs, integrated
 * Vulkan GPUs; before it always mapped): use_mmap for devices devs. */
GGFIT_API void ggfit_params_load_mode(ggfit_params *p, const ggfit_device *devs, size_t n);

/* llama.cpp's defaults (common_params), with the host CPU features of the
 * reference machine (AVX2 and AVX512) until a device probe sets them. */
GGFIT_API void ggfit_params_init(ggfit_params *p);

/* ------------------------------------------------------------------------
 * Projection and fit results, as the library fills them
 * ---------------------------------------------------------------------- */

struct ggfit_projection {
    uint32_t n_ctx;           /* after padding, as llama.cpp reports it */
    uint32_t n_ctx_seq;       /* per sequence */
    uint32_t n_batch, n_ubatch;
    uint32_t n_seq, n_stream;
    bool flash_attn;          /* as resolved from -fa */
    int32_t n_gpu_layers;     /* layers offloaded, output layer included */
    uint32_t n_devices;
    ggfit_mem devices[GGFIT_MAX_DEVICES]; /* rows of llama.cpp's breakdown */
    uint32_t device_of[GGFIT_MAX_DEVICES]; /* each row's index among the
                                 devices passed (-sm none keeps only -mg's) */
    ggfit_mem host;           /* the Host row */
    ggfit_mem cpu_extra;      /* the CPU's extra buffer types (AMX,
                                 CPU_REPACK): host memory that llama.cpp's
                                 table leaves out of every row */
    uint32_t n_bufts;
    ggfit_buft_mem bufts[GGFIT_MAX_BUFTS];
    bool compute_estimated;   /* compute bytes from formulas, not a graph */
    char warning[256];        /* empty, or what is estimated and why */
    bool embeddings;          /* --embedding: the graph ends with pooling */
    int32_t pooling;          /* with embeddings: the pooling in force
                                 (GGFIT_POOLING_NONE..RANK) */
};

struct ggfit_fit_result {
    ggfit_fit_status status;
    ggfit_params params;      /* the fitted flags */
    ggfit_projection projection; /* memory use with them */
    char reason[256];         /* why it failed, or empty */
    char *log;                /* the reasoning, one line per step, as
                                 llama.cpp logs it; free with ggfit_free();
                                 NULL with no_log */
    uint32_t n_projections;   /* how many projections the search made */
};

/* Frees what a fit result the program allocated itself holds (its log,
 * which ggfit_fit sets); the struct itself is the caller's. NULL does
 * nothing. A result from ggfit_fit_result_new is freed whole with
 * ggfit_fit_result_free. */
GGFIT_API void ggfit_fit_result_clear(ggfit_fit_result *r);

/* ------------------------------------------------------------------------
 * Verdict: the whole machine, beside llama.cpp's decision
 * ---------------------------------------------------------------------- */

/* A change to the flags as given that makes the plan fit (the nearest
 * changes, when a set flag stops llama.cpp's fit or the flags do not fit). */
typedef struct ggfit_change {
    char flags[192];          /* what to change: "-ngl 31", "-c 24576",
                                 "-ctk q8_0 -ctv q8_0 -c 32768" */
    char drop[320];           /* the given flags the change replaces, to
                                 leave out: "-cmoe", "-ot exps=CPU"; "" */
    uint32_t n_changes;       /* flags changed: fewest first */
    ggfit_params params;      /* the flags with the change made */
    uint64_t worst_left;      /* bytes left on the tightest device or pool */
} ggfit_change;

#define GGFIT_MAX_CHANGES 6

/* llama.cpp's fit only looks at the GPUs' margins. The verdict also asks
 * whether the host holds what stays there (weights not mapped from the
 * file, KV and compute buffers on the host, the CPU's extra buffer types
 * AMX and CPU_REPACK, which llama.cpp's table leaves out, and the mmap'ed
 * weights, which must stay in RAM not to page), whether one pool shared by
 * a unified-memory GPU and the host holds both, and what Metal really maps
 * (one span of the file per backend, not the tensors' bytes). */

/* System memory, as the plan assumes it. */
typedef struct ggfit_host_mem {
    uint64_t total;           /* bytes; 0 when unknown */
    uint64_t free;            /* bytes llama.cpp may use */
    uint32_t cpu_features;    /* GGFIT_CPU_* of that machine */
    char source[192];         /* "this machine", "--host-mem 64GiB", ... and
                                 what was assumed ("free assumed ...") */
    /* The memory is this machine's own (no --host-mem, no Mac from the
     * catalog, no --sysroot): the speed model then takes its measured
     * bandwidth (ggfit_host_bw_cached), keyed by cpu_name and total. */
    bool this_machine;
    char cpu_name[128];
} ggfit_host_mem;

/* The system memory a machine with total bytes leaves free to llama.cpp
 * when nothing else is known (--host-mem TOTAL, a Mac from the catalog):
 * total less what the system and the desktop keep, a stated assumption
 * (devices/spec.c). why (may be NULL) receives the sentence. */
GGFIT_API uint64_t ggfit_host_free_assumed(uint64_t total, char *why, size_t n);

typedef enum ggfit_verdict_status {
    GGFIT_VERDICT_FITS = 0,   /* every device keeps its margin and the host
                                 (and a unified pool) holds the rest */
    GGFIT_VERDICT_NO_FIT = 1, /* a device, or the pool a unified-memory GPU
                                 shares with the host, is short */
    GGFIT_VERDICT_HOST = 2,   /* the devices keep their margins, but system
                                 memory does not hold what stays there */
} ggfit_verdict_status;

/* "fits", "does not fit", "host memory short"; NULL when out of range. */
GGFIT_API const char *ggfit_verdict_status_str(int status);

typedef enum ggfit_pool_kind {
    GGFIT_POOL_DEVICE = 0,    /* a device's own memory */
    GGFIT_POOL_HOST = 1,      /* system memory */
    GGFIT_POOL_UNIFIED = 2,   /* one memory shared by unified devices and the
                                 host: each device's use plus the host's */
} ggfit_pool_kind;

typedef struct ggfit_pool {
    ggfit_pool_kind kind;
    char name[80];            /* "CUDA0", "Host", "unified memory" */
    int32_t device;           /* index into the devices; -1 otherwise */
    uint64_t total;           /* bytes; 0 when unknown */
    uint64_t free;            /* free before loading */
    uint64_t used;            /* what the plan puts there; Metal with mmap:
                                 the mapped span in place of the weights */
    uint64_t mapped;          /* of used: weights mapped from the file (host:
                                 page cache that must stay resident; Metal:
                                 the wired span) */
    uint64_t margin;          /* kept free: -fitt on devices, 0 elsewhere */
    int64_t free_after;       /* free - used: llama.cpp's "free" once loaded */
    uint64_t short_by;        /* used + margin - free when positive: fails */
} ggfit_pool;

#define GGFIT_MAX_POOLS (GGFIT_MAX_DEVICES + 2)
#define GGFIT_MAX_SPANS 64

/* What Metal maps of one file: with mmap, llama.cpp hands each backend one
 * buffer over [first, last) of the file's data, from the first byte of the
 * first tensor it holds there to the last byte of the last one
 * (llama_model_loader::get_mapping_range), and Metal wires all of it. */
typedef struct ggfit_span {
    int32_t device;           /* index into the devices */
    uint32_t shard;           /* the file (split models: one span each) */
    uint64_t first, last;     /* bytes from the shard's data offset */
    uint64_t tensors;         /* bytes of the tensors the device holds there */
} ggfit_span;

/* A change that shrinks what Metal maps (the renderers give its flags
 * and what it does in words). */
typedef enum ggfit_span_fix_kind {
    GGFIT_FIX_OUTPUT_CPU,     /* -ot "^output=CPU": the output layer in
                                 system RAM */
    GGFIT_FIX_REORDER,        /* ggfit reorder IN OUT: the file in llama.cpp's
                                 offload order */
    GGFIT_FIX_NO_MMAP,        /* --no-mmap: the weights in buffers of their
                                 own size */
} ggfit_span_fix_kind;

/* A change that shrinks what Metal maps, with its effect. */
typedef struct ggfit_span_fix {
    ggfit_span_fix_kind kind;
    uint64_t mapped;          /* what Metal maps with it (sum of spans) */
    ggfit_verdict_status status; /* the verdict with it */
} ggfit_span_fix;

/* Where a run of blocks went, for the report in words. */
typedef struct ggfit_layer_range {
    uint32_t first, last;     /* blocks first..last; n_layer is the output
                                 layer */
    int32_t device;           /* its weights: index into the devices, -1 the
                                 CPU (system RAM) */
    int32_t experts;          /* its routed experts: a device, -1 the CPU,
                                 -2 split between places (experts_on says
                                 which); the block's device when it has none */
    uint32_t experts_on;      /* where its routed experts' tensors are: bit d
                                 device d, bit GGFIT_MAX_DEVICES the CPU; 0
                                 when it has none */
    bool output;              /* the output layer (first == last == n_layer) */
} ggfit_layer_range;

#define GGFIT_MAX_RANGES 48

typedef struct ggfit_verdict {
    ggfit_verdict_status status;
    int32_t first_short;      /* index into pools of the first that fails */
    uint32_t n_pools;
    ggfit_pool pools[GGFIT_MAX_POOLS]; /* devices, Host, then the unified
                                 pool when a device shares one */
    uint32_t n_spans;
    ggfit_span spans[GGFIT_MAX_SPANS];
    uint64_t metal_mapped;    /* sum of the spans */
    uint64_t metal_tensors;   /* what llama.cpp's fit counts for them */
    uint32_t n_fixes;
    ggfit_span_fix fixes[3];  /* when the spans map clearly more than the
                                 tensors: -ot "^output=CPU" when it helps,
                                 ggfit reorder, --no-mmap */
    uint32_t n_ranges;        /* blocks by where they went, in order */
    ggfit_layer_range ranges[GGFIT_MAX_RANGES];
    uint64_t prompt_cache;    /* llama-server's prompt cache (params'
                                 cache_ram_mib), in the Host pool's used */
} ggfit_verdict;

/* The verdict on projection pr of model m, planned with params p on the n
 * devices and the host: margins per device as opt gives them (-fitt), the
 * host's and a unified pool's sums, Metal's spans (and the fixes, each
 * projected and judged) when p maps the file. */
GGFIT_API ggfit_status ggfit_verdict_of(const ggfit_model *m, const ggfit_params *p,
                                        const ggfit_projection *pr, const ggfit_device *devs,
                                        size_t n, const ggfit_host_mem *host,
                                        const ggfit_fit_options *opt, ggfit_verdict *out,
                                        char **err);

/* The verdict in one sentence of plain words ("fits: every device keeps
 * its margin, ...", "does not fit: CUDA0 needs ..."), from its status and
 * pools, into buf (n bytes, cut to fit; 320 hold any); returns buf. */
GGFIT_API char *ggfit_verdict_summary(const ggfit_verdict *v, char *buf, size_t n);


/* ------------------------------------------------------------------------
 * Requests: the command line's plan, for any C program
 * ---------------------------------------------------------------------- */

/* The llama.cpp program a plan is printed for (--for): its syntax, and the
 * defaults that differ between them made explicit. */
typedef enum ggfit_program {
    GGFIT_FOR_DEFAULT = 0,    /* no --for: llama-server, as GGFIT_FOR_SERVER
                                 (ggfit_request_init sets that) */
    GGFIT_FOR_CLI = 1,        /* llama-cli: llama-server's code in its own
                                 process (b10309), with -np 1 by default */
    GGFIT_FOR_FIT_PARAMS = 2, /* llama-fit-params' own line, as it prints it */
    GGFIT_FOR_BENCH = 3,      /* llama-bench: its names, no -c, no -fit */
    GGFIT_FOR_SERVER = 4,     /* --for server, ggfit -- llama-server: planned
                                 and printed as llama-server itself fits
                                 (ggfit_params_server: -np auto = 4 slots
                                 and -kvu, its n_outputs_max, --cache-ram
                                 in the host's verdict) */
} ggfit_program;

/* ------------------------------------------------------------------------
 * Multimodal projectors (--mmproj), as llama.cpp's mtmd measures them
 * (tools/mtmd/mtmd.cpp mtmd_get_memory_usage: each encoder of the file,
 * vision and audio, built with no allocation; per device its weights plus
 * the compute buffer of its warmup graph, clip.cpp). src/mtmd/.
 * ---------------------------------------------------------------------- */

typedef struct ggfit_mmproj ggfit_mmproj;   /* an opened projector file */

typedef struct ggfit_mmproj_params {
    bool use_gpu;             /* --mmproj-offload (default true) */
    int flash_attn;           /* -fa: GGFIT_FA_AUTO, _OFF, _ON */
    int32_t image_min_tokens; /* --image-min-tokens; 0: the type's */
    int32_t image_max_tokens; /* --image-max-tokens; 0: the type's */
    bool warmup;              /* --warmup (default true); --no-warmup skips
                                 the warmup graph: no compute buffer is
                                 reserved, only the weights count */
    uint32_t llama_build;     /* the llama.cpp build whose graphs answer
                                 (ggfit_params.llama_build); 0: the newest */
} ggfit_mmproj_params;

/* llama-server's defaults: offloaded, -fa auto, the type's token limits. */
GGFIT_API void ggfit_mmproj_params_init(ggfit_mmproj_params *p);

#define GGFIT_MMPROJ_MAX_ENCODERS 2

/* One encoder (clip context) of a projector file. */
typedef struct ggfit_mmproj_encoder {
    char projector[32];       /* clip.projector_type: "qwen2.5vl_merger" */
    bool audio;               /* the audio encoder, else the vision one */
    uint32_t warmup;          /* the warmup graph's image side in pixels
                                 (audio: its frames) */
    bool flash_attn;          /* the warmup graph ran with flash attention */
    bool compute_estimated;   /* no graph for this type: estimated */
    int32_t device;           /* index into devs it runs on; -1 the CPU */
    uint64_t weights;         /* bytes of its tensors (on device) */
    uint64_t compute;         /* its backend's compute buffer (on device) */
    uint64_t cpu_compute;     /* the CPU backend's beside a device (inputs) */
} ggfit_mmproj_encoder;

typedef struct ggfit_mmproj_usage {
    size_t n_encoders;
    ggfit_mmproj_encoder enc[GGFIT_MMPROJ_MAX_ENCODERS];
    uint64_t device[GGFIT_MAX_DEVICES]; /* weights + compute per device */
    uint64_t cpu;             /* the CPU's weights + compute */
} ggfit_mmproj_usage;

/* Opens a projector GGUF (a file llama.cpp's clip_init takes: clip.* keys,
 * vision and/or audio encoder). Reads the header only. */
GGFIT_API ggfit_status ggfit_mmproj_open(const char *path, ggfit_mmproj **out, char **err);
GGFIT_API void ggfit_mmproj_free(ggfit_mmproj *mm);

/* Measures it as mtmd_get_memory_usage does on devs: with use_gpu each
 * encoder runs on the first device (ggml's first GPU), else on the CPU.
 * GGFIT_EUNSUPPORTED for a projector type llama.cpp does not know. */
GGFIT_API ggfit_status ggfit_mmproj_measure(const ggfit_mmproj *mm, const ggfit_mmproj_params *p,
                                            const ggfit_device *devs, size_t n_devs,
                                            ggfit_mmproj_usage *out, char **err);

#define GGFIT_MAX_IGNORED 64
/* Rows of the flag table at most (ggfit_flag_get), one bit each in
 * ggfit_request.rows_given. */
#define GGFIT_MAX_FLAG_ROWS 1024

/* What the ggfit command line takes for a plan, so that a program gets the
 * CLI's answer from the same flags: ggfit_request_init, then
 * ggfit_request_parse_arg over argv (or set the fields), then
 * ggfit_request_plan. The strings are not copied: they point into the
 * caller's argv (or strings) and must outlive the request. */
typedef struct ggfit_request {
    ggfit_params params;      /* llama.cpp's flags (ggfit_params_parse_arg) */
    ggfit_fit_options fit;    /* -fitt, -fitc; -fit off sets check_only;
                                 host_free is ggfit_request_devices' */
    const char *model;        /* -m, --model: the GGUF file, any shard */
    const char *gpu;          /* --gpu (ggfit_devices_parse), or NULL: this
                                 machine's devices; a repeated --gpu adds
                                 its devices (gpu_more) */
    const char *rpc;          /* --rpc "host:port[,...]", or NULL */
    const char *host_mem;     /* --host-mem TOTAL[/FREE] (ggfit_size_parse),
                                 or NULL: this machine's memory (or, for a
                                 Mac from the catalog, the Mac's) */
    const char *cpu;          /* --cpu CLASS|FEATURE,... (ggfit_cpu_parse):
                                 the CPU planned for, or NULL: this
                                 machine's without --gpu, a catalog Mac's or
                                 APU's own, else params.cpu_features */
    bool print_memory;        /* -fitp on, --print-memory: project the flags
                                 as given instead of fitting them */
    int rpc_timeout_ms;       /* per rpc-server connection and reply, 5000 */
    ggfit_probe_options probe; /* how this machine is probed; all NULL as
                                 ggfit_host_probe(NULL, ...) */
    ggfit_host_mem host;      /* set by ggfit_request_devices */
    ggfit_program program;    /* --for server|cli|fit-params|bench */
    /* Flags of llama.cpp's programs that ggfit recognised and did not
     * apply: those with no effect on memory (--port, -t, --jinja), and
     * those whose memory ggfit does not count yet (--mmproj, --lora; -md
     * but with --for server):
     * pointers into argv, the first GGFIT_MAX_IGNORED of each. */
    const char *ignored[GGFIT_MAX_IGNORED];
    uint32_t n_ignored;
    const char *not_counted[GGFIT_MAX_IGNORED];
    uint32_t n_not_counted;
    /* The flags of a pasted llama.cpp line that ggfit does not know (a
     * newer llama.cpp's): the flag and the word taken as its value, or
     * NULL. Planned without them (the caller warns); the command printed
     * (ggfit_plan_command) keeps them, as the program takes them. */
    const char *unknown[GGFIT_MAX_IGNORED][2];
    uint32_t n_unknown;
    int32_t cache_ram_mib;    /* -cram/--cache-ram as given; -2 not given
                                 (llama-server's default, 8192): counted
                                 with --for server alone */
    /* Remote models (ggfit_gguf_open_url, ggfit_hf_resolve): -hf, -hfr,
     * --hf-repo user/model[:quant]; -hff, --hf-file FILE; -hft, --hf-token
     * (HF_TOKEN); -mu, --model-url URL. An -m URL is read over HTTP too;
     * -hf wins over -mu, which wins over -m, as in llama.cpp. */
    const char *hf_repo;
    const char *hf_file;
    const char *hf_token;
    const char *model_url;
    bool offline;             /* --offline: remote headers from the cache only */
    /* The llama.cpp the plan answers for (ggfit_llama_version_parse):
     * --llama-version as given, --llama-bin DIR (or --detect: llama-server
     * on PATH) asked for its --version, or --server URL's /props, by
     * ggfit_request_version, which
     * sets llama and copies llama.rules into params and draft. */
    const char *llama_version;
    const char *llama_bin;
    const char *llama_server; /* --server URL: a running llama-server, asked
                                 for its /props (ggfit_llama_version_from_server) */
    bool detect;
    bool llama_asked;         /* ggfit_request_version asked the program
                                 once: a request planned again keeps it */
    ggfit_llama_version llama;
    /* --vs-version VERSION: the same question for a second llama.cpp
     * (ggfit_request_plan_vs); vs_version NULL: none. */
    const char *vs_version;
    ggfit_llama_version vs;
    /* llama.cpp's flags typed whose presence, programs or values differ
     * between versions (data/llama_args.tsv's builds), each as typed and
     * its value (NULL: none; pointers into argv): ggfit_request_version
     * refuses those the version settled lacks, as llama.cpp would. */
    const char *versioned[GGFIT_MAX_IGNORED][2];
    uint32_t n_versioned;
    /* The rows of the flag table (ggfit_flag_get's order) given as flags
     * or LLAMA_ARG_* variables, bit i%64 of word i/64: llama.cpp's config
     * files set none of those. */
    uint64_t rows_given[GGFIT_MAX_FLAG_ROWS / 64];
    /* llama.cpp's config files (b10398 on: common/arg.cpp reads them before
     * the environment and the flags; ggfit_request_version applies them
     * where the version has them, to what no flag nor variable set): the
     * paths, ':'-separated ("" for none), or NULL: GGFIT_LLAMA_CONFIG if
     * set, else llama.cpp's own, /etc/llama.cpp/config.ini then
     * ${XDG_CONFIG_HOME:-$HOME/.config}/llama.cpp/config.ini. Each file's
     * [*] section, then its keys before any section (and [default]), as
     * router presets name flags; keys of no flag of the program ignored. */
    const char *llama_config;
    bool llama_config_done;   /* applied (once) */
    char llama_config_values[2048]; /* the values they set, which the
                                 fields point into: the request is used
                                 where it was made */
    /* What they did, for the plan's notes ("" none): "FILE: key = value,
     * ...; key (given as a flag or variable); key ignored (not a flag of
     * llama-server)" */
    char llama_config_note[1024];
    /* llama-server's draft model (-md, --spec-draft-model FILE) and its
     * flags (-ngld, -ctkd, -ctvd, -otd, -cmoed, -ncmoed, under every name
     * common/arg.cpp gives them) in the target's fields of draft
     * (n_gpu_layers, type_k, type_v, overrides, cpu_moe, n_cpu_moe; the
     * rest is ggfit_params_init's and unused). Counted with --for server
     * alone: llama-fit-params and llama-cli fit no draft. */
    const char *draft_model;
    ggfit_params draft;
    /* llama-server's multimodal projector (-mm, --mmproj FILE) and its
     * flags (--no-mmproj-offload, --image-min-tokens, --image-max-tokens;
     * -fa is the model's): counted with --for server alone, as
     * server-context.cpp adds mtmd_get_memory_usage's bytes to the fit
     * targets (common/mmproj.c). */
    const char *mmproj;
    ggfit_mmproj_params mmproj_params;
    /* The rest of llama-server's speculative decoding (common/draft.c):
     * --spec-type's types (one bit per common_speculative_type, appended
     * as arg.cpp appends them), the draft tokens of each type
     * (--spec-draft-n-max 3, --spec-ngram-{simple,map-k,map-k4v}-size-m
     * 48, --spec-ngram-mod-n-max 64; --spec-default) and -devd's devices
     * ("none", or names comma-separated; empty: the target's). */
    uint32_t spec_types;
    int32_t spec_draft_n_max;
    uint32_t spec_size_m[3];
    int32_t spec_mod_n_max;
    char draft_devices[256];
    /* Further --gpu values, each a list as --gpu takes one: the devices of
     * every --gpu, in the order given ("--gpu A --gpu B" is "--gpu A,B"). */
    const char *gpu_more[GGFIT_MAX_DEVICES];
    uint32_t n_gpu_more;
    /* The LLAMA_ARG_* variables ggfit_request_env applied, in its order
     * (the flag table's strings): the plan's text names them. */
    const char *from_env[GGFIT_MAX_IGNORED];
    uint32_t n_from_env;
    /* The model, already open (a header kept in memory across plans:
     * ggfit_batch): ggfit_request_plan takes it for r->model instead of
     * opening the file; the caller keeps it open. NULL: opened per plan. */
    const ggfit_model *model_open;
    /* Memory others hold (a router's children started before this one):
     * taken from each device's free memory and from the host's, as the
     * fit finds it when it runs (ggfit_request_devices). Bytes; 0: none. */
    uint64_t held[GGFIT_MAX_DEVICES];
    uint64_t held_host;
} ggfit_request;

/* Reads llama.cpp's LLAMA_ARG_* variables into r as llama.cpp reads them
 * (LLAMA_ARG_CTX_SIZE=8192 is -c 8192; LLAMA_ARG_NO_MMAP=1 is --no-mmap),
 * for every flag ggfit_request_parse_arg takes. Call it before parsing the
 * command line, so that a flag wins over its variable, as in llama.cpp. A
 * bad value is GGFIT_EINVAL naming the variable. */
GGFIT_API ggfit_status ggfit_request_env(ggfit_request *r, char **err);

/* No flags given: llama.cpp's defaults (ggfit_params_init,
 * ggfit_fit_options_init), fitting on, this machine's devices. */
GGFIT_API void ggfit_request_init(ggfit_request *r);

/* A request on the heap, ggfit_request_init'd (a request is some 170 KB),
 * or NULL when out of memory; free it with ggfit_request_free() (NULL does
 * nothing; the strings it points to are the caller's). */
GGFIT_API ggfit_request *ggfit_request_new(void);
GGFIT_API void ggfit_request_free(ggfit_request *r);

/* Parses the flag at argv[*i] (and its value) as the CLI does and advances
 * *i past what it used: llama.cpp's flags (ggfit_params_parse_arg),
 * -m/--model FILE, --gpu SPEC, --rpc HOST:PORT,..., --host-mem SIZE, --cpu CPU,
 * -fit/--fit on|off, -fitt/--fit-target MIB,..., -fitc/--fit-ctx N,
 * -fitp/--fit-print on|off, --print-memory, --fit-around and --for PROGRAM. Any other
 * flag of llama.cpp's programs (common/arg.cpp: --port, -t, --jinja, ...)
 * is taken with its values and listed in r->ignored (or r->not_counted
 * when it changes memory in a way ggfit does not count yet). Another flag
 * is the caller's to judge, as in ggfit_params_parse_arg: with used,
 * GGFIT_OK with *used false and *i unchanged (the CLI then takes --json);
 * with used NULL, GGFIT_EINVAL. A missing or bad value is GGFIT_EINVAL
 * with a message. */
GGFIT_API ggfit_status ggfit_request_parse_arg(ggfit_request *r, int argc, char **argv, int *i,
                                               bool *used, char **err);

/* ------------------------------------------------------------------------
 * The table of flags: every flag ggfit takes, llama.cpp's (common/arg.cpp,
 * data/llama_args.tsv) and its own (data/flags.tsv), one row each, as
 * ggfit_request_parse_arg, LLAMA_ARG_* and a pasted line read them; with
 * the command line tool's own rows, which the library's parsers leave to
 * their caller: -h, the man page and "did you mean" come from it.
 * ---------------------------------------------------------------------- */

/* The value a flag takes. */
typedef enum ggfit_flag_kind {
    GGFIT_FLAG_BOOL,          /* none; with negated names, on or off */
    GGFIT_FLAG_INT,           /* an integer (some take words too: -ngl all) */
    GGFIT_FLAG_NUMBER,        /* a decimal, 0.7 */
    GGFIT_FLAG_SIZE,          /* a byte count, 64GiB (ggfit_size_parse) */
    GGFIT_FLAG_ENUM,          /* one of some words */
    GGFIT_FLAG_LIST,          /* comma-separated items */
    GGFIT_FLAG_REGEX,         /* PATTERN=BUFFER,... (-ot) */
    GGFIT_FLAG_PATH,          /* a file */
    GGFIT_FLAG_TEXT,          /* any string */
    GGFIT_FLAG_PAIR           /* two values */
} ggfit_flag_kind;

typedef enum ggfit_flag_scope {
    GGFIT_SCOPE_MODEL,        /* llama.cpp's model flags */
    GGFIT_SCOPE_CONTEXT,      /* llama.cpp's context flags */
    GGFIT_SCOPE_MACHINE,      /* the machine and the fit (ggfit's, -fit...) */
    GGFIT_SCOPE_DRAFT,        /* llama-server's draft model, speculative decoding */
    GGFIT_SCOPE_PROJECTOR,    /* llama-server's multimodal projector */
    GGFIT_SCOPE_TOOL,         /* the command line tool's own (ggfit_flag_info.cli) */
    GGFIT_SCOPE_OTHER         /* llama.cpp's others (sampling, the server, ...) */
} ggfit_flag_scope;

/* llama.cpp's programs that take a flag (bits of ggfit_flag_info.programs). */
enum {
    GGFIT_PROGRAM_SERVER = 1, GGFIT_PROGRAM_CLI = 2, GGFIT_PROGRAM_BENCH = 4,
    GGFIT_PROGRAM_FIT_PARAMS = 8
};

/* ggfit's commands that take a flag (bits of ggfit_flag_info.commands):
 * ggfit [flags] (the plan), inspect, devices, archs, reorder, bench, sweep.
 * The plan, bench and sweep take every flag of the library's. */
enum {
    GGFIT_COMMAND_PLAN = 1, GGFIT_COMMAND_INSPECT = 2, GGFIT_COMMAND_DEVICES = 4,
    GGFIT_COMMAND_ARCHS = 8, GGFIT_COMMAND_REORDER = 16, GGFIT_COMMAND_BENCH = 32,
    GGFIT_COMMAND_SWEEP = 64, GGFIT_COMMAND_BATCH = 128
};

/* The command line tool's own flags, which the library's parsers leave to
 * their caller (ggfit_request_parse_arg: *used false): which one a row is. */
typedef enum ggfit_cli_flag {
    GGFIT_CLI_NONE,           /* not the tool's: the library's parsers take it */
    GGFIT_CLI_HELP, GGFIT_CLI_JSON, GGFIT_CLI_QUIET, GGFIT_CLI_VERBOSE,
    GGFIT_CLI_LIST, GGFIT_CLI_OBJECTIVE, GGFIT_CLI_MIN_CTX, GGFIT_CLI_QUANT_CACHE,
    GGFIT_CLI_COMMAND_LINE,   /* --: a llama.cpp command line follows */
    GGFIT_CLI_TENSORS, GGFIT_CLI_SYSROOT, GGFIT_CLI_MEASURE, GGFIT_CLI_MARKDOWN,
    GGFIT_CLI_FORCE, GGFIT_CLI_OVER, GGFIT_CLI_SVG, GGFIT_CLI_CSV, GGFIT_CLI_AS_TYPE,
    GGFIT_CLI_N_PROMPT, GGFIT_CLI_N_GEN, GGFIT_CLI_DEPTH, GGFIT_CLI_CATALOG,
    /* the speed model's constants (ggfit_speed_field) */
    GGFIT_CLI_BANDWIDTH, GGFIT_CLI_HOST_BW, GGFIT_CLI_EFFICIENCY,
    GGFIT_CLI_HOST_EFFICIENCY, GGFIT_CLI_FIXED_MS, GGFIT_CLI_LINK_BW, GGFIT_CLI_TFLOPS,
    GGFIT_CLI_HOST_TFLOPS, GGFIT_CLI_PP_EFFICIENCY, GGFIT_CLI_CROSS_MS, GGFIT_CLI_HOST_GFLOPS,
    /* the plan's line as a whole command to paste, or the bare flags */
    GGFIT_CLI_PRINT_COMMAND, GGFIT_CLI_PRINT_FLAGS,
    GGFIT_CLI_WIDE,           /* --wide: text past 80 columns (ggfit_text_set_columns) */
    GGFIT_CLI_JOBS,           /* batch -j N: threads answering lines */
    GGFIT_CLI_ORDER,          /* --order NAMES: a router's models asked in this order */
    GGFIT_CLI_PLAN_SET,       /* --plan-set: a router's models fitted to fit at once */
    GGFIT_CLI_PRIORITY,       /* --priority NAME=W,...: their weights in --plan-set */
    GGFIT_CLI_COUNT
} ggfit_cli_flag;

/* One row; the strings are the library's, valid for the process. */
typedef struct ggfit_flag_info {
    const char *names;        /* comma-separated, as llama.cpp spells them:
                                 "-c,--ctx-size" */
    const char *negated;      /* the --no-... names, or "" */
    const char *env;          /* LLAMA_ARG_..., or "" */
    const char *metavar;      /* its value in the help ("N", "FILE"), or "" */
    const char *help;         /* one line (to be wrapped), or "": a flag
                                 ggfit takes without a word of its own */
    const char *example;      /* a valid value, "" for a bool */
    ggfit_flag_kind kind;
    int n_values;             /* values it takes: 0, 1 or 2 */
    ggfit_flag_scope scope;
    unsigned programs;        /* GGFIT_PROGRAM_*: llama.cpp's that take it */
    unsigned commands;        /* GGFIT_COMMAND_*: ggfit's that take it */
    bool memory;              /* it changes memory (under its negated names
                                 alone for some) */
    bool counted;             /* ggfit counts it; else a plan lists it among
                                 its notes */
    ggfit_cli_flag cli;       /* the tool's own: which; else GGFIT_CLI_NONE */
} ggfit_flag_info;

/* Row i of the table, in the order of the help (data/flags.tsv's rows
 * first, then the rest of llama.cpp's): false past its end. */
GGFIT_API bool ggfit_flag_get(size_t i, ggfit_flag_info *out);

/* The row of a flag named name (with its dashes: "-c", "--no-mmap") that
 * one of commands takes (GGFIT_COMMAND_* bits), the tool's own rows first
 * (ggfit bench's -p is llama-bench's prompt, not llama.cpp's --prompt); with
 * commands 0, any row, llama.cpp's first (as the library's parsers read
 * it). *negated (may be NULL): whether name is one of its negated names.
 * -1: none. */
GGFIT_API int ggfit_flag_find(const char *name, unsigned commands, bool *negated);

/* The name closest to name (edit distance, as git's "did you mean") of the
 * rows one of commands takes (0: any), into buf; NULL when none is close
 * (more than a third of its letters apart) or name is a name already. */
GGFIT_API const char *ggfit_flag_suggest(const char *name, unsigned commands, char *buf,
                                         size_t n);

/* The word of choices[0..n) nearest to word, when at most max_edits
 * letters (insertions, deletions, changes; case aside) away and closer
 * than the choice's own length; else NULL ("did you mean" for a program's
 * own words: ggfit's commands). */
GGFIT_API const char *ggfit_nearest_word(const char *word, const char *const *choices, size_t n,
                                         size_t max_edits);

/* The program a llama.cpp command line's first word names (a path's base
 * name: llama-server, llama-cli, llama-fit-params, llama-bench), in *out;
 * false for another word. */
GGFIT_API bool ggfit_program_named(const char *word, ggfit_program *out);

/* The field of so (ggfit_speed_options, below) that the speed constant f
 * sets (GGFIT_CLI_BANDWIDTH: &so->bandwidth_gbs, ...), or NULL for another
 * flag. */
struct ggfit_speed_options;
GGFIT_API double *ggfit_speed_field(struct ggfit_speed_options *so, ggfit_cli_flag f);

/* The devices the request plans for, in llama.cpp's order: the --rpc
 * servers' first (asked over the network, ggfit_rpc_query), then the --gpu
 * ones (their rpc devices numbered on after the servers' devices: RPC2
 * after two of those) or, without --gpu, this machine's
 * (ggfit_devices_discover). Also sets what the plan needs of the host:
 * without --gpu, r->params.cpu_features and r->fit.host_free from this
 * machine (ggfit_host_probe); with --gpu, r->fit.host_free from --host-mem,
 * else from this machine; with --cpu (r->cpu), r->params.cpu_features from
 * it, whatever else is given. Fills at most max devices; *n is how many. */
/* Settles the llama.cpp the request answers for: --llama-bin or
 * --detect run llama-server --version (ggfit_llama_version_detect);
 * --server asks a running llama-server (ggfit_llama_version_from_server);
 * --llama-version was read by the parser. Copies its rules' build into
 * params and draft. ggfit_request_plan calls it. */
GGFIT_API ggfit_status ggfit_request_version(ggfit_request *r, char **err);

GGFIT_API ggfit_status ggfit_request_devices(ggfit_request *r, ggfit_device *out, size_t max,
                                             size_t *n, char **err);

/* A request's answer: the devices and the fit, or with print_memory the
 * projection of the flags as given. Render it with ggfit_fit_args or
 * ggfit_fit_json (fit, devices, n_devices), or ggfit_projection_text or
 * _json (projection, devices). */
/* A plan's predicted llama-bench speeds (speed/: ggfit_speed_of with
 * ggfit_speed_options_init's defaults, pp512 and tg128 at depth 0, an
 * empty cache) for the flags it prints, or for the flags as given when it
 * prints none. */
typedef struct ggfit_plan_speed {
    bool ok;                  /* computed (false: the model could not be
                                 projected with the plan's flags) */
    uint32_t n_prompt, n_gen; /* llama-bench's -p, -n */
    uint32_t depth;           /* tokens already in the cache (llama-bench -d) */
    double pp_tps;            /* prompt tokens per second */
    double tg_tps;            /* generated tokens per second */
    uint64_t host_bytes_per_token; /* read from system memory per token */
    bool host_used;           /* ggfit_speed's host_used */
    double host_bw_gbs;       /* the host's bandwidth, as used */
    int host_bw_kind;         /* ggfit_host_bw_kind: whose figure */
    char host_bw_from[96];    /* ggfit_speed's host_bw_from */
} ggfit_plan_speed;

/* Why llama-server refuses a draft model after its fit (draft-simple's
 * common_speculative_are_compatible), as the two files give it. */
typedef enum ggfit_vocab_mismatch {
    GGFIT_VOCAB_SAME = 0,     /* compatible, or not known */
    GGFIT_VOCAB_TYPE,         /* tokenizer.ggml.model differs */
    GGFIT_VOCAB_SPECIAL,      /* add_bos/add_eos or the BOS/EOS id differs */
    GGFIT_VOCAB_SIZE,         /* the vocabularies are over 128 tokens apart */
    GGFIT_VOCAB_TOKEN,        /* a token's text differs, from id 5 */
} ggfit_vocab_mismatch;

typedef struct ggfit_vocab_check {
    bool checked;             /* -md with --spec-type draft-simple */
    bool aborts;              /* neither file has a tokenizer: comparing
                                 their tokens asserts (the rest unset) */
    ggfit_vocab_mismatch mismatch;
    int unknown;              /* with GGFIT_VOCAB_SAME: the key missing from
                                 the files, not checked: 0 add_bos_token,
                                 1 add_eos_token; -1 none */
    char type_target[32];     /* tokenizer.ggml.model of each (TYPE) */
    char type_draft[32];
    bool eos;                 /* SPECIAL: the EOS token's, else the BOS's */
    int add_target, add_draft;
    int64_t id_target, id_draft;
    uint64_t n_target, n_draft; /* SIZE: the tokens of each */
    uint64_t n_apart;         /* SIZE: how many tokens apart */
    int64_t token;            /* TOKEN: the first id that differs */
} ggfit_vocab_check;

/* How --fit-around ended in a plan (ggfit_plan's around). */
typedef enum ggfit_around_status {
    GGFIT_AROUND_FITS = 0,    /* fitted around the set flags: the plan's
                                 alternative */
    GGFIT_AROUND_FAILED,      /* the fit around them failed: alternative
                                 holds it, its reason says why */
    GGFIT_AROUND_SHORT,       /* it keeps every device's margin, not the
                                 whole machine: alternative and
                                 alternative_verdict hold it */
    GGFIT_AROUND_NOT_FITTED,  /* -fitp on or -fit off: nothing is fitted */
} ggfit_around_status;

typedef struct ggfit_plan {
    ggfit_llama_version llama; /* the llama.cpp it answers for (the
                                 request's, as detected or given) */
    ggfit_device devices[GGFIT_MAX_DEVICES]; /* ggfit_request_devices' */
    size_t n_devices;
    bool print_memory;        /* as requested: fit is all zero */
    ggfit_fit_result fit;     /* ggfit_fit's result unless print_memory */
    ggfit_projection projection; /* the memory of the plan: a copy of
                                 fit.projection, or with print_memory
                                 ggfit_project's for the flags as given */
    ggfit_params asked;       /* the flags as given */
    ggfit_program program;    /* the request's --for */
    uint32_t n_layer;         /* the model's blocks */
    uint32_t n_ctx_train;     /* the model's trained context */
    const char *from_env[GGFIT_MAX_IGNORED]; /* the request's from_env */
    uint32_t n_from_env;
    char llama_config[1024];  /* what llama.cpp's config files set (the
                                 request's llama_config_note; "" none) */
    uint32_t unsloth_type;    /* a weight type of the model's that only
                                 Unsloth's llama.cpp loads (ggfit_type_unsloth;
                                 upstream refuses the file), or 0 */
    /* What the plan does not take into account, as facts; the renderers
     * word them (render/plan.c's notes). The flags are the request's
     * ignored and not_counted (pointers into its argv, as there) less
     * those the program counts after all (--for server: -cram, -md,
     * --mmproj and their flags; -hf's --no-mmproj). */
    const char *ignored[GGFIT_MAX_IGNORED];     /* no effect on memory */
    uint32_t n_ignored;
    const char *not_counted[GGFIT_MAX_IGNORED]; /* memory not counted yet */
    uint32_t n_not_counted;
    uint32_t ts_given;        /* -ts's proportions, where more than the
                                 devices with memory (ts_used, llama.cpp
                                 takes the first); else both 0 */
    uint32_t ts_used;
    bool spec_rollback;       /* --spec-type with a draft context on a
                                 DeepSeek V4 model: its rollback snapshots
                                 (n_rs_seq spec_n_rs_seq) and its MTP
                                 context's cache are not counted */
    int32_t spec_n_rs_seq;
    ggfit_host_mem host;      /* the system memory planned with */
    ggfit_fit_options fit_options; /* the margins judged with */
    ggfit_verdict verdict;    /* the whole machine's, on projection */
    /* When llama.cpp's fit leaves the host short and the context was not
     * set: the largest context (down to -fitc) whose fit the host holds,
     * as llama.cpp itself reduces the context first. */
    bool has_alternative;
    ggfit_fit_result alternative;
    ggfit_verdict alternative_verdict;
    /* When the plan does not fit (the flags as given, with llama.cpp's fit
     * stopped by a set flag, off, or -fitp on): the nearest changes that
     * fit, fewest first, each projected and judged. */
    size_t n_changes;
    ggfit_change changes[GGFIT_MAX_CHANGES];
    /* --fit-around, when llama.cpp's fit stopped at a set flag (its
     * decision stays in fit): the set flags kept as given (those of asked)
     * and the unset ones fitted around them. When that fits the whole
     * machine it is the alternative (has_alternative), else around says
     * why not (and alternative holds that fit, has_alternative false). */
    bool fit_around;          /* tried */
    ggfit_around_status around;
    /* --for server with -md: the draft model as llama-server measures it
     * before its fit (common_base_params_to_speculative: the target's
     * flags as given, with the draft's -ngld, -otd, -ctkd/-ctvd (F16 by
     * default), one output per slot, at the target's -c: -c 0 is the
     * draft's own trained context). Its bytes per device are in
     * fit_options.extra_used (the fit's targets and the verdict's pools),
     * its host bytes in extra_host. */
    bool has_draft;
    const char *draft_model;
    ggfit_params draft_params;
    ggfit_projection draft;
    ggfit_vocab_check draft_vocab; /* -md with draft-simple: what llama-server
                                 finds after its fit */
    bool draft_unused;        /* -md without --spec-type draft-simple:
                                 measured and loaded, then freed */
    bool draft_rpc;           /* rpc devices: planned as on a GPU machine */
    char draft_arch[64];      /* draft_mtp: the target's architecture */
    /* --for server with --mmproj: the projector as llama-server measures
     * it before its fit (mtmd_get_memory_usage); its bytes per device are
     * in fit_options.extra_used, its CPU bytes in extra_host. */
    bool has_mmproj;
    char mmproj[512];         /* the file; -hf: the repo's, loaded with it */
    bool mmproj_auto;         /* -hf's projector (no -mm in the printed flags) */
    bool no_mmproj;           /* -hf's repo has a projector and --no-mmproj
                                 (or --no-mmproj-auto) left it out: the
                                 printed line says --no-mmproj */
    ggfit_mmproj_params mmproj_params;   /* as measured (-fa: the model's) */
    ggfit_mmproj_usage mmproj_usage;
    bool mmproj_rpc;          /* rpc devices and projector bytes on one:
                                 planned as on a GPU machine */
    /* --spec-type draft-mtp without -md: draft is the MTP context on the
     * target (context and compute only are added: the weights are the
     * target's); draft_model is then the target's file. */
    bool draft_mtp;
    /* --for server: the speculative flags given (--spec-type ... -devd),
     * as the plan's command line repeats them; empty: none */
    char spec_args[320];
    ggfit_plan_speed speed;   /* the plan's predicted speeds (speed/) */
} ggfit_plan;

/* The exit status the CLI gives a plan: 0 it fits (on the whole machine),
 * 1 it does not, 3 the devices hold it but system memory does not (and no
 * smaller context fixes that). */
GGFIT_API int ggfit_plan_exit_status(const ggfit_plan *plan);

/* The columns every *_text renderer fits, for the whole process as a
 * terminal is: GGFIT_TEXT_COLS by default (lines broken at spaces with a
 * hanging indent, a table's columns that do not fit left out and named);
 * 0: no limit, every column kept and no line broken (ggfit --wide). */
#define GGFIT_TEXT_COLS 80
GGFIT_API void ggfit_text_set_columns(unsigned n_cols);

/* The plan in words (stderr's report: the memory per device with what is
 * left once loaded, where the layers went, the verdict, what to change;
 * with_log first llama.cpp's whole log of the fit) and as JSON:
 * the fit's JSON (ggfit_fit_json: llama.cpp's decision, unchanged) or the
 * projection's, with "host" limits, "verdict" and "alternative" added. The
 * caller frees the text with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_plan_text(const ggfit_plan *plan, bool with_log);
GGFIT_API char *ggfit_plan_json(const ggfit_plan *plan);

/* ------------------------------------------------------------------------
 * Batch: many plans, a JSON line each (ggfit batch; src/plan/batch.c)
 *
 * A line asks {"id": ANY, "argv": ["-m", "FILE", "--gpu", "rtx-3090", ...]}:
 * the plan's own arguments as the CLI takes them (the library's flags, a
 * pasted llama.cpp line after --; --json is implied). The answer is one
 * line: {"id": ANY, "plan": <what ggfit ARGS --json prints>, "exit_status":
 * N[, "warnings": [...]]}, or {"id": ANY, "error": "..."} for a line that
 * cannot be planned (not JSON, a bad flag, a file missing). The headers of
 * local files stay open in the batch across lines (a file changed since is
 * read again).
 * ---------------------------------------------------------------------- */

typedef struct ggfit_batch ggfit_batch;

/* ------------------------------------------------------------------------
 * llama-server's router (--models-preset FILE; src/plan/router.c)
 *
 * Each model of the preset is a child llama-server started with the
 * preset's flags for it ([*], then its section) and the router's own line
 * on top; its fit runs against the memory free when it starts, so the
 * children started before it decide what it gets. ggfit_router_plan plans
 * them one by one in the order asked, each against what the ones before
 * it hold.
 * ---------------------------------------------------------------------- */

#define GGFIT_ROUTER_MAX 64

typedef struct ggfit_router_child {
    char name[256];           /* its section's name (a repo's tag upper-cased) */
    char args[2048];          /* the preset's flags for it, as words */
    bool load_on_startup;
    ggfit_plan *plan;         /* its child's plan; NULL with error set */
    char error[512];          /* why it cannot be planned (its flags, a file) */
    uint64_t free_held[GGFIT_MAX_DEVICES]; /* what the children before it held */
    uint64_t host_held;
    char *words;              /* its flags' strings, which the plan points
                                 into (ggfit_router_free frees them) */
    bool together;            /* started with the other load-on-startup
                                 children at once: its fit saw none of
                                 theirs (free_held: the children before) */
    double priority;          /* its weight in a set's shares (1 unless given) */
    uint64_t hold[GGFIT_MAX_DEVICES]; /* what it holds once loaded (a draft no
                                 speculative type runs freed again) */
    uint64_t hold_host;
    char evicted[256];        /* the models stopped first to make room,
                                 comma-separated: the router's least recently
                                 asked (--models-max reached), llama-swap's
                                 by its groups; "" none */
} ggfit_router_child;

typedef struct ggfit_router {
    char preset[512];         /* --models-preset, "" none */
    char models_dir[512];     /* --models-dir, "" none */
    uint32_t models_max;      /* --models-max (4; 0 no limit) */
    uint32_t n_models;        /* in the preset and the directory together */
    uint32_t resident;        /* ggfit_router_fit_set: the models planned to be
                                 resident at once (models_max, or all) */
    uint32_t max_fits;        /* ggfit_router_fit_set: most models that fit at
                                 once, each at its smallest (a --models-max
                                 the machine allows) */
    char notes[1024];         /* what llama.cpp leaves to chance (which file
                                 of a directory's), "" none */
    uint32_t n_startup;       /* models with load-on-startup */
    uint32_t n_children;
    ggfit_router_child children[GGFIT_ROUTER_MAX];
    uint64_t held[GGFIT_MAX_DEVICES]; /* the most the children hold at once */
    uint64_t held_host;
    bool over;                /* together more than a device or system memory
                                 has free (the load-on-startup children, each
                                 fitted without the others) */
    bool swap;                /* llama-swap's config (preset: its path), not
                                 llama-server's router */
    bool set;                 /* ggfit_router_fit_set's: each child fitted to
                                 its share */
} ggfit_router;

/* argv: the machine's flags (--gpu, --host-mem, ...), then -- llama-server
 * --models-preset FILE and/or --models-dir DIR and the router's flags
 * (without the program's name). The load-on-startup models start first,
 * together, each fit seeing none of the others (as the router starts
 * them); then order: model names comma-separated, asked for one after the
 * other in that order, each once the one before has loaded, a name as
 * often as it is asked for; then the models never named, each by name
 * (order NULL: all of them so). A model asked for while it runs
 * starts nothing; with --models-max children running, the least recently
 * asked one is stopped first (children[].evicted). A child that cannot be
 * planned carries its error; the call fails on the preset itself (and on
 * more load-on-startup models than --models-max, as llama-server does).
 * Free with ggfit_router_free (out itself is the caller's). */
GGFIT_API ggfit_status ggfit_router_plan(int argc, char **argv, const char *order,
                                         ggfit_router *out, char **err);
/* The set planned so that any --models-max of its models (all of them
 * when the limit is 0 or no less than their number) fit at once, in any
 * order: each model's fit runs against its share of every device (its
 * need at its smallest, every layer on the GPUs at its own context or
 * 4096, and an equal part of what the needs leave, one -fitt margin kept
 * for all: the equal part is the largest that keeps the largest shares of
 * any models_max of them within the device; shares in proportion to the
 * needs when the largest needs alone are more than a device has), its
 * flags then fixed (fit off) so that whichever loads first takes no more.
 * max_fits says how many fit at once at their smallest. priorities
 * ("NAME=W,...", NULL none) weighs what the needs leave: a model's part is
 * W times the part of a model of weight 1 (the default).
 * ggfit_router_preset writes them back. */
GGFIT_API ggfit_status ggfit_router_fit_set(int argc, char **argv, const char *priorities,
                                            ggfit_router *out,
                                            char **err);
/* The preset with each model's section given its plan's flags (keys
 * without dashes, fit = off; its own keys kept where the plan sets no
 * other value), [*] as it was: a file llama-server's --models-preset reads.
 * NULL when the preset cannot be read again or out of memory; free with
 * ggfit_free(). */
GGFIT_API char *ggfit_router_preset(const ggfit_router *r);
GGFIT_API void ggfit_router_free(ggfit_router *r);
/* The children's fits in words, and as JSON. Free with ggfit_free(). */
GGFIT_API char *ggfit_router_text(const ggfit_router *r);
GGFIT_API char *ggfit_router_json(const ggfit_router *r);

/* A batch, or NULL when out of memory; free with ggfit_batch_free(). */
GGFIT_API ggfit_batch *ggfit_batch_new(void);
GGFIT_API void ggfit_batch_free(ggfit_batch *b);

/* The answer to one line of len bytes (no newline in it), one line of
 * JSON without its newline; free it with ggfit_free(). NULL only when out
 * of memory. Several threads may answer on one batch at once. */
GGFIT_API char *ggfit_batch_answer(ggfit_batch *b, const char *line, size_t len);

/* The flags the plan recommends, on one line (stdout's), for the plan's
 * program (ggfit_plan_argv joined by ggfit_argv_join), or "" when nothing
 * fits. The caller frees it with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_plan_args(const ggfit_plan *plan);

/* The plan as an argv for prog, NULL-terminated (*n words): the fitted
 * flags (the alternative's when there is one, the flags as given with
 * -fitp on) and every memory setting the plan assumed (-b, -ub, -np, -kvu,
 * -fa, -ctk, -ctv, -nkvo, --swa-full, --no-mmap, ...), with -np and
 * -fit off made explicit for llama-server and llama-cli, so that the
 * program uses the memory ggfit projected; for GGFIT_FOR_FIT_PARAMS the
 * words of llama-fit-params' own line. Free with ggfit_argv_free(); NULL
 * when out of memory. */
GGFIT_API char **ggfit_plan_argv(const ggfit_plan *plan, ggfit_program prog, size_t *n);
GGFIT_API void ggfit_argv_free(char **argv);

/* An argv as one line that `xargs` and `$(...)` both split back into the
 * same words (a word either would change is single-quoted). The caller
 * frees it with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_argv_join(char *const *argv);

/* ---- the plan as a command to paste ------------------------------------
 * The bare line above is for pipes (`llama-server -m M $(ggfit ...)`,
 * xargs); a person pastes a whole command into a shell, where an -ot
 * pattern's ( | [ are syntax. */

/* The plan as one command for a POSIX shell: the plan's program
 * (llama-server, llama-cli, llama-fit-params or llama-bench, per --for),
 * the model as req gave it (-hf REPO[:QUANT] with its -hff FILE, else -mu
 * URL for -mu or an -m URL, else -m PATH; none when req is NULL), the
 * user's flags the plan's words leave out, as given in argv (argc words,
 * the command line req was parsed from; NULL: none): those without effect
 * on memory (--port 8080, --jinja) and those not counted (--lora FILE),
 * where the program takes them; then ggfit_plan_argv's words for the
 * plan's program. Each word is quoted as ggfit_argv_quote does: a shell
 * runs it with exactly those words. "" where ggfit_plan_args is ""
 * (nothing fits). The caller frees it with ggfit_free(); NULL when out of
 * memory. */
GGFIT_API char *ggfit_plan_command(const ggfit_plan *plan, const ggfit_request *req, int argc,
                                   char *const *argv);

/* An argv as words for a POSIX shell, space-separated: a word of letters,
 * digits and _-.,:=/+@% alone as it is, any other (the empty one too) in
 * single quotes, a ' in it as '\''. The caller frees it with ggfit_free();
 * NULL when out of memory. */
GGFIT_API char *ggfit_argv_quote(char *const *argv);

/* Plans as the CLI does: GGFIT_EINVAL ("-m FILE is needed") without
 * r->model, else ggfit_request_devices (which updates r as it says), opens
 * the model, and fits (ggfit_fit; -fit off only checks the flags as given)
 * or, with print_memory, projects (ggfit_project). On GGFIT_OK the caller
 * frees what out holds with ggfit_plan_free(); on failure nothing is left
 * to free. The plan points to strings the request points to (the flags it
 * notes, -md's file): keep them while the plan is rendered.
 * A request can be planned again: the devices are asked and probed anew. */
GGFIT_API ggfit_status ggfit_request_plan(ggfit_request *r, ggfit_plan *out, char **err);

/* The same request planned for two llama.cpp versions: a for the
 * request's (ggfit_request_version), b for r->vs (--vs-version; an
 * error without it). On GGFIT_OK the caller frees both with
 * ggfit_plan_free(); on failure nothing is left to free. */
GGFIT_API ggfit_status ggfit_request_plan_vs(ggfit_request *r, ggfit_plan *a, ggfit_plan *b,
                                             char **err);

/* Two plans of one request for two llama.cpp versions side by side: the
 * line each prints, context, layers, bytes per device, the verdict, what
 * differs, and the changes between the two versions that ggfit tracks
 * (text for a person, JSON {"a": plan, "b": plan, "differs": [...],
 * "changes": [...]}). The caller frees it with ggfit_free(); NULL when
 * out of memory. */
GGFIT_API char *ggfit_plan_vs_text(const ggfit_plan *a, const ggfit_plan *b);
GGFIT_API char *ggfit_plan_vs_json(const ggfit_plan *a, const ggfit_plan *b);

/* Frees what a plan holds (its fit's log); the struct itself is the
 * caller's. NULL does nothing. */
GGFIT_API void ggfit_plan_free(ggfit_plan *plan);

/* A plan on the heap for ggfit_request_plan to fill (a plan is close to a
 * megabyte), or NULL when out of memory; ggfit_plan_destroy() frees what it
 * holds (ggfit_plan_free) and the plan itself (NULL does nothing). */
GGFIT_API ggfit_plan *ggfit_plan_new(void);
GGFIT_API void ggfit_plan_destroy(ggfit_plan *plan);

/* ------------------------------------------------------------------------
 * Before the download: remote models (remote/)
 *
 * Only the header is read, with HTTP range requests grown until the tensor
 * infos are complete (a real header is 20 KB to 15 MB): the first request
 * asks for first_bytes, each later one for what the reader expects to need
 * (the rest of the array or of the tensor infos being read, at the size of
 * what was read of it, plus a sixteenth and a KiB), else for first_bytes
 * more. A header then costs its size plus about one first request. A
 * server that ignores Range (200 and the whole file) is cut off once the
 * bytes asked for have arrived.
 * ---------------------------------------------------------------------- */

typedef struct ggfit_remote_options {
    const char *token;        /* sent as "Authorization: Bearer TOKEN" to the
                                 URL's host (not to another host a redirect
                                 leads to), or NULL */
    uint32_t connect_timeout_ms; /* per connection; GGFIT_HTTP_CONNECT_TIMEOUT_MS,
                                 default 10000 */
    uint32_t stall_timeout_ms;/* a transfer under 1 KiB/s this long fails;
                                 GGFIT_HTTP_STALL_TIMEOUT_MS, default 30000
                                 (whole seconds, rounded up) */
    uint64_t first_bytes;     /* the first request's bytes, and a later
                                 one's when the reader has no estimate;
                                 GGFIT_HTTP_FIRST_BYTES, default 32 KiB */
    /* The cache of fetched headers and Hugging Face API replies, keyed by
     * URL: GGFIT_CACHE_DIR, else $XDG_CACHE_HOME/ggfit, else
     * ~/.cache/ggfit; "" for none. A header is taken from it without a
     * request when its URL names a commit (Hugging Face's
     * resolve/COMMIT/FILE), else when the server answers 304 to its ETag
     * (If-None-Match). */
    char cache_dir[1024];
    bool offline;             /* the cache only, no network (--offline) */
    bool progress;            /* a progress line on stderr when reading
                                 takes over a second (the CLI's, on a
                                 terminal); default off */
} ggfit_remote_options;

/* What the reading cost: requests made (redirects not counted) and body
 * bytes received (error replies included). */
typedef struct ggfit_remote_stats {
    uint64_t requests;
    uint64_t bytes;
} ggfit_remote_stats;

/* The defaults, with the GGFIT_HTTP_* and cache variables above applied. */
GGFIT_API void ggfit_remote_options_init(ggfit_remote_options *o);

/* Whether s is an http:// or https:// URL (what -m takes as remote). */
GGFIT_API bool ggfit_is_url(const char *s);

/* ggfit_gguf_open over HTTP(S): the header of the GGUF at url (any shard
 * of a split model: NAME-00001-of-00003.gguf, whose other shards' headers
 * are read from the same place). o NULL: ggfit_remote_options_init's;
 * stats (may be NULL) adds what was transferred. Network and HTTP errors
 * are GGFIT_EIO with a message saying what happened: 401/403 a gated or
 * private model (set HF_TOKEN), 404 no such file, 429 rate limited, a
 * refused connection, a timeout, a stalled transfer, a redirect loop. */
GGFIT_API ggfit_status ggfit_gguf_open_url(const char *url, const ggfit_remote_options *o,
                                           ggfit_remote_stats *stats, ggfit_gguf **out,
                                           char **err);

/* ggfit_model_open over HTTP(S): ggfit_gguf_open_url, then
 * ggfit_model_from_gguf. */
GGFIT_API ggfit_status ggfit_model_open_url(const char *url, const ggfit_remote_options *o,
                                            ggfit_remote_stats *stats, ggfit_model **out,
                                            char **err);

/* Hugging Face's endpoint as llama.cpp finds it: MODEL_ENDPOINT, else
 * HF_ENDPOINT, else https://huggingface.co/; always ending in '/'. The
 * caller frees it with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_hf_endpoint(void);

/* A Hugging Face repository's model as llama.cpp's -hf picks it. */
typedef struct ggfit_hf_model {
    char *repo;               /* user/model */
    char *tag;                /* the quant asked for (-hf repo:TAG), or "" */
    char *commit;             /* the main branch's commit (or the first
                                 branch's when there is no main) */
    char *file;               /* the file chosen, its path in the repo (the
                                 first shard of a split model) */
    char *url;                /* ENDPOINT/user/model/resolve/COMMIT/FILE */
    char *mmproj;             /* the multimodal projector llama.cpp would
                                 take along, or NULL */
    char *mmproj_url;
    char **files;             /* every file of the repo, as listed */
    size_t n_files;
} ggfit_hf_model;

/* Resolves -hf user/model[:quant] (and -hff FILE, which wins over the
 * quant; NULL when not given) as llama.cpp does: the branch's commit
 * (ENDPOINT/api/models/REPO/refs), the repo's files
 * (ENDPOINT/api/models/REPO/tree/COMMIT?recursive=true), then -hff's file,
 * or the first model file (no mmproj, imatrix, mtp-, eagle3-, dflash-,
 * dspark-; a split model's first shard) whose path holds the quant
 * followed by '.' or '-' (case-insensitive), or without a quant Q4_K_M,
 * then Q8_0, then the first model file. o->token is sent only when it is a
 * Hugging Face token (hf_...), as llama.cpp does. No match is GGFIT_EIO
 * naming the repo's GGUF files. Free out with ggfit_hf_model_free(). */
GGFIT_API ggfit_status ggfit_hf_resolve(const char *repo_tag, const char *file,
                                        const ggfit_remote_options *o,
                                        ggfit_remote_stats *stats, ggfit_hf_model *out,
                                        char **err);
GGFIT_API void ggfit_hf_model_free(ggfit_hf_model *m);

/* ------------------------------------------------------------------------
 * Speed: tokens per second of a plan (speed/)
 *
 * Generation is bandwidth-bound: a step (one token of each of n_parallel
 * sequences) reads each device's dense weights once, the routed experts
 * its tokens touch (t tokens routed to k of n experts touch
 * n (1 - (1 - k/n)^t): k of them for one), one row of the token embedding
 * and each sequence's KV cache at the depth; its time is bytes / (peak
 * bandwidth x efficiency) plus a fixed cost per layer. On the CPU its
 * threads' compute (-t, measured) bounds it too: quantized rows cost their
 * unpacking, and attention a fixed cost per head and cached row. Devices
 * run in series along the layers (llama.cpp's layer split); the
 * activations crossing between devices are added at the link's bandwidth.
 * Prompt processing is compute-bound: FLOPs per token (2 per weight, the
 * routed experts' at the backend's MoE efficiency, attention growing with
 * the depth, with or without flash attention) against each device's
 * throughput x efficiency, plus the experts each ubatch reads; weights in
 * system RAM are copied to the first GPU once per ubatch (llama.cpp's op
 * offload, ubatch >= 32) and computed there. The constants and their
 * sources are in src/speed/speed_constants.c.
 * ---------------------------------------------------------------------- */

#define GGFIT_BENCH_MAX_DEPTHS 16  /* ggfit bench -d: depths one run takes */

/* Whose figure the host's bandwidth is. */
typedef enum ggfit_host_bw_kind {
    GGFIT_HOST_BW_DEFAULT = 0, /* the speed model's default (speed_constants.c) */
    GGFIT_HOST_BW_GIVEN = 1,  /* --host-bw */
    GGFIT_HOST_BW_UNIFIED = 2, /* a unified device's own (the same memory) */
    GGFIT_HOST_BW_MEASURED = 3, /* this machine's, measured (or GGFIT_HOST_BW) */
} ggfit_host_bw_kind;

typedef struct ggfit_speed_options {
    uint32_t n_prompt;        /* llama-bench -p, 512 */
    uint32_t n_gen;           /* llama-bench -n, 128 */
    uint32_t depth;           /* llama-bench -d, 0: tokens already in the cache */
    double bandwidth_gbs;     /* --bandwidth: every GPU's peak GB/s; 0: the device's */
    double host_bw_gbs;       /* --host-bw: system memory's peak GB/s; 0: this
                                 machine's measured read when the plan is for
                                 this machine's memory and a leg reads it
                                 (ggfit_host_bw_cached), else the default */
    bool host_bw_default;     /* --host-bw default: the default even for this
                                 machine (nothing measured) */
    double efficiency;        /* --efficiency: fraction of a GPU's peak; 0: backend's */
    double host_efficiency;   /* --host-efficiency: of the host's peak; 0: default */
    double fixed_ms;          /* --fixed-ms: per token per GPU; < 0: backend's */
    double link_gbs;          /* --link-bw: host-GPU and GPU-GPU link GB/s; 0: default */
    double tflops;            /* --tflops: every GPU's dense FP16 TFLOPS; 0: table */
    double host_tflops;       /* --host-tflops: the CPU's; 0: default */
    double pp_efficiency;     /* --pp-efficiency: of the TFLOPS; 0: backend's */
    int32_t as_type;          /* --as-type: count the 2-D weights as this
                                 ggfit_type (another quant of the same
                                 model); -1: as in the file */
    double cross_ms;          /* --cross-ms: a token's cost each time the
                                 layers move to another device or to or from
                                 the host (a scheduler split: a copy and a
                                 synchronisation), beside the bytes over the
                                 link; < 0: default */
    char host_bw_from[96];    /* where host_bw_gbs comes from, in words ("" is
                                 --host-bw); set with a measured figure */
    uint32_t n_threads;       /* -t: the CPU's threads; 0: llama.cpp's default
                                 (one per CPU measured, else per CPU online) */
    double host_gflops;       /* --host-gflops: one CPU thread's GFLOPS
                                 (single-precision multiply-adds); 0: this
                                 machine's measured figure, else --host-tflops
                                 or the default */
    double host_gflops_all;   /* all threads' together (with host_gflops: a
                                 measurement's; 0: host_gflops per thread) */
    uint32_t n_parallel;      /* sequences decoding at once (-np with that many
                                 requests, llama-bench -pg as a batch); 0: 1 */
    /* ggfit bench: a row per depth (-d 0,4096,32768), each pp and tg at it
     * as llama-bench's -d runs them; n_depths 0: depth alone */
    uint32_t depths[GGFIT_BENCH_MAX_DEPTHS];
    uint32_t n_depths;
} ggfit_speed_options;

GGFIT_API void ggfit_speed_options_init(ggfit_speed_options *o);

/* One device along the layers, or the host (device -1). */
typedef struct ggfit_speed_leg {
    char name[96];            /* "CUDA0", "Metal", "CPU" */
    char description[128];    /* the device's, or "system memory" */
    char klass[16];           /* its constants' class: "default", "hbm", "host" */
    int32_t device;           /* index into the devices; -1 the host */
    uint32_t n_layers;        /* blocks with tensors here */
    double bandwidth_gbs;     /* peak, as used */
    bool bandwidth_assumed;   /* a device's unknown: 500 GB/s (--bandwidth) */
    double efficiency;        /* fraction of the peak reached: quantized weights */
    double efficiency_float;  /* F32/F16/BF16 weights and the KV cache */
    double fixed_ms;          /* per token: the backend's per layer here
                                 (--fixed-ms: shared among the GPUs by layers) */
    uint64_t weight_bytes;    /* weights read per generated token */
    uint64_t weight_bytes_float; /* of which float (F32, F16, BF16) */
    uint64_t kv_bytes;        /* KV cache read per generated token */
    uint64_t bytes_per_token; /* the two */
    double ms_per_token;      /* bytes / (bandwidth x efficiency) + fixed */
    double flops_per_token;   /* prompt processing, at the prompt's depth */
    double flops_float;       /* of which float weights' */
    double flops_attn;        /* of which attention's */
    double tflops;            /* peak dense throughput, as used */
    bool tflops_assumed;      /* a device's, from its bandwidth (not in the
                                 table, no --tflops) */
    double pp_efficiency;     /* quantized weights' */
    double pp_efficiency_float;
    double pp_efficiency_attn;
    uint64_t offload_bytes;   /* host: weights copied to the GPU per ubatch */
    double pp_ms;             /* time of the whole prompt here */
    double flops_moe;         /* of flops_per_token, the routed experts' */
    double pp_efficiency_moe; /* theirs */
    uint64_t expert_bytes_per_ubatch; /* experts a ubatch of the prompt reads */
    double flops_attn_tg;     /* attention's per generated token, at its depth */
} ggfit_speed_leg;

#define GGFIT_MAX_LEGS (GGFIT_MAX_DEVICES + 1)

typedef struct ggfit_speed {
    uint32_t n_prompt, n_gen, depth, n_ubatch;
    double pp_tps;            /* llama-bench's pp<n_prompt> */
    double tg_tps;            /* llama-bench's tg<n_gen> */
    double tg_ms_per_token;
    double pp_ms;
    uint32_t n_legs;          /* devices in order, then the host when used */
    ggfit_speed_leg legs[GGFIT_MAX_LEGS];
    uint32_t n_crossings;     /* device changes along the layers per token */
    uint32_t n_gpu_crossings; /* of which from a GPU to a GPU (each adds a
                                 synchronisation's latency) */
    bool pipelined;           /* the prompt's ubatches overlap across GPUs */
    uint64_t link_bytes_per_token; /* activations crossing: n_embd F32 each */
    double link_gbs;
    double link_ms_per_token;
    double link_offload_ms;   /* prompt: the op offload's copies */
    double cross_ms;          /* each crossing's split cost, as used (in
                                 link_ms_per_token) */
    /* The host's bandwidth as used, and whose figure it is; host_used:
     * system memory holds weights beyond the token embedding's rows (whose
     * one row per token costs nothing) or the KV cache (-nkvo), so that its
     * bandwidth decides part of the speed. */
    bool host_used;
    double host_bw_gbs;
    double host_efficiency;
    ggfit_host_bw_kind host_bw_kind;
    char host_bw_from[96];    /* "measured on this machine 2025-06-01",
                                 "--host-bw", "the unified device's",
                                 "a default: dual-channel DDR5-5600" */
    uint32_t n_threads;       /* the CPU's threads, as used */
    double host_gflops;       /* their compute, GFLOPS, as used (0: the
                                 TFLOPS default) */
    uint32_t n_parallel;      /* sequences decoding at once */
    double tg_tps_total;      /* all of them together (tg_tps is each one's) */
    uint32_t n_experts_pp;    /* MoE: experts a ubatch of the prompt touches, of
                                 n_expert per layer (expected, top-k routing) */
    uint32_t n_experts_tg;    /* those one step of generation touches */
    bool flash_attn;          /* attention as flash attention (as resolved) */
} ggfit_speed;

/* The speed of model m run with params p (whose projection pr and
 * placement ggfit_project gave) on the n devices. */
GGFIT_API ggfit_status ggfit_speed_of(const ggfit_model *m, const ggfit_params *p,
                                      const ggfit_projection *pr, const int32_t *placement,
                                      const ggfit_device *devs, size_t n,
                                      const ggfit_speed_options *o, ggfit_speed *out,
                                      char **err);

/* ------------------------------------------------------------------------
 * ggfit bench, and llama-bench's own command line
 *
 * ggfit bench plans the request as the plan itself does (ggfit_request_plan
 * at llama-bench's context) and gives that plan's speed beside its verdict.
 * A llama-bench command line (ggfit -- llama-bench ...) is planned as
 * llama-bench runs it (tools/llama-bench/llama-bench.cpp): no fit (unless
 * -fitt or -fitc), -ngl 99 by default, and for each test a context of
 * n_prompt + n_gen + n_depth tokens (cmd_params_instance::
 * to_llama_cparams), each test judged on the whole machine.
 * ---------------------------------------------------------------------- */

#define GGFIT_BENCH_MAX_GIVEN 16  /* times one llama-bench flag may be given */
#define GGFIT_BENCH_MAX_TESTS 64  /* tests one line may make */
#define GGFIT_BENCH_LISTS 27      /* llama-bench's flags that take a list */

/* The values given to one of llama-bench's list flags. */
typedef struct ggfit_bench_list {
    const char *given[GGFIT_BENCH_MAX_GIVEN]; /* each value as given: a comma
                                 list (numbers also as ranges, 512-2048*2) */
    const char *flag[GGFIT_BENCH_MAX_GIVEN]; /* the flag it was given with */
    uint32_t n_given;
} ggfit_bench_list;

/* A llama-bench command line, its flags as given: ggfit_bench_args_init,
 * then ggfit_bench_parse_arg over argv. The strings point into argv. */
typedef struct ggfit_bench_args {
    ggfit_bench_list lists[GGFIT_BENCH_LISTS]; /* in llama-bench's order of
                                 combination (bench_args.c) */
    int32_t reps;             /* -r, 5: no effect on memory or on t/s */
    uint32_t n_models;        /* -m given (one is planned) */
    const char *ignored[GGFIT_MAX_IGNORED]; /* flags without effect on memory
                                 or speed (-t, -o, --progress ...) */
    uint32_t n_ignored;
    const char *not_counted[GGFIT_MAX_IGNORED]; /* flags ggfit does not
                                 count (-dev, -nopo) */
    uint32_t n_not_counted;
} ggfit_bench_args;

GGFIT_API void ggfit_bench_args_init(ggfit_bench_args *a);

/* Parses llama-bench's flag at argv[*i] (and its value) into a, and the
 * model's (-m, -hf, -hff, -hft, --offline) and --rpc into r; ggfit's flags
 * that describe the machine (--gpu, --host-mem) go to r as
 * ggfit_request_parse_arg takes them. Another flag is the caller's: *used
 * false and *i unchanged. A bad value is GGFIT_EINVAL with a message. */
GGFIT_API ggfit_status ggfit_bench_parse_arg(ggfit_bench_args *a, ggfit_request *r, int argc,
                                             char **argv, int *i, bool *used, char **err);

/* One of llama-bench's tests, a row of its table. */
typedef struct ggfit_bench_test {
    char name[48];            /* llama-bench's test column: "pp512", "tg128",
                                 "pp512+tg128", " @ d4096" at a depth */
    uint32_t n_prompt, n_gen, depth;
    uint32_t n_ctx;           /* the context planned (llama.cpp pads it to a
                                 multiple of 256): for a line's test the one
                                 llama-bench makes for it, n_prompt + n_gen +
                                 depth; for ggfit bench's own, -c */
    uint32_t instance;        /* which combination of the flags' values */
    char flags[192];          /* that combination, in llama-bench's words,
                                 of the flags given: "-ngl 99 -fa 1" */
    double tps;               /* predicted t/s as llama-bench reports it:
                                 tokens over the time of the prompt, the
                                 generation, or both */
    int exit_status;          /* its plan's (ggfit_plan_exit_status) */
    int status;               /* its verdict: ggfit_verdict_status */
    ggfit_verdict verdict;    /* that verdict (ggfit_verdict_summary words
                                 it) */
    uint32_t n_pools;         /* the verdict's pools, as the deciding plan's */
    uint64_t used[GGFIT_MAX_POOLS]; /* bytes each pool holds */
    uint64_t state_bytes;     /* system memory llama-bench keeps the depth's
                                 state in (llama_state_seq_get_data), in the
                                 Host pool's used */
    ggfit_speed speed;        /* the prompt's (pp, pp+tg) or the generation's
                                 (tg) speed at the depth, each device's share */
} ggfit_bench_test;

typedef struct ggfit_bench_result {
    bool line;                /* a llama-bench command line's tests
                                 (ggfit_bench_line); else ggfit bench's own
                                 plan, one test whose speed has both pp and tg */
    bool fitted;              /* line: -fitt or -fitc, llama-bench fits */
    int32_t reps;             /* line: -r */
    size_t n_tests;
    ggfit_bench_test tests[GGFIT_BENCH_MAX_TESTS];
    size_t decides;           /* the test whose plan decides the run: the
                                 first with the worst exit status (1, then
                                 3), among those the largest context */
    ggfit_plan plan;          /* that test's whole plan: devices, verdict,
                                 nearest changes; ggfit_plan_text renders it */
    int exit_status;          /* the run's, that plan's: 0 every test fits,
                                 1 one does not, 3 the devices hold them and
                                 system memory does not */
    /* line: the flags noted, as ggfit_bench_args has them (pointers into
     * the line's argv): without effect on memory or on t/s, and those
     * whose memory ggfit does not count (the renderers word them) */
    const char *ignored[GGFIT_MAX_IGNORED];
    uint32_t n_ignored;
    const char *not_counted[GGFIT_MAX_IGNORED];
    uint32_t n_not_counted;
} ggfit_bench_result;

/* ggfit bench: plans the request as ggfit_request_plan does (the fitted
 * plan, or the flags as given when llama.cpp's fit keeps them), projects
 * the flags it prints (or those given, when none fit) with their placement
 * and gives their speed with o's -p, -n and -d; out->plan's verdict and
 * exit status are the plan's own. Free with ggfit_bench_result_free(). */
GGFIT_API ggfit_status ggfit_bench(ggfit_request *r, const ggfit_speed_options *o,
                                   ggfit_bench_result *out, char **err);

/* A llama-bench command line a (the model, --rpc, --gpu and --host-mem in
 * r): every test of every instance planned as llama-bench creates it, its
 * verdict and its speed with o's constants (o's -p, -n and -d are not
 * used: the line's are). A line that makes more than
 * GGFIT_BENCH_MAX_TESTS tests is GGFIT_EINVAL. */
GGFIT_API ggfit_status ggfit_bench_line(ggfit_request *r, const ggfit_bench_args *a,
                                        const ggfit_speed_options *o, ggfit_bench_result *out,
                                        char **err);
GGFIT_API void ggfit_bench_result_free(ggfit_bench_result *b);

/* The result in words and as JSON. ggfit bench's own: the speed (as
 * ggfit_speed_text and _json), then the plan's verdict and exit status
 * ({..., "verdict": {...}, "exit_status"}). A line: a row per test (its
 * context, memory per pool, verdict, t/s), then the deciding plan's
 * verdict on the whole machine ({"tests": [...], "decides", "plan": {...},
 * "exit_status"}). Free with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_bench_text(const ggfit_bench_result *b);
GGFIT_API char *ggfit_bench_json(const ggfit_bench_result *b);

/* The speed as text (a table of the legs) and as JSON ({"pp_tps",
 * "tg_tps", "devices": [{"name", "bytes_per_token", "ms_per_token", ...}],
 * "host": {...}, "link": {...}}). Free with ggfit_free(); NULL when out of
 * memory. */
GGFIT_API char *ggfit_speed_text(const ggfit_speed *s);
GGFIT_API char *ggfit_speed_json(const ggfit_speed *s);

/* This machine's host memory bandwidth (ggfit devices --measure): a buffer
 * of buffer_bytes (0: 128 MiB) read by one thread, then by one per CPU,
 * each for about 50 ms. GPU memory is not measured. */
typedef struct ggfit_host_bw {
    double single_gbs;        /* one thread, GB/s (1e9 bytes) */
    double all_gbs;           /* n_threads threads together */
    uint32_t n_threads;       /* the CPUs online */
    uint64_t buffer_bytes;
    uint32_t passes;          /* over the buffer, per phase */
    double ms;                /* the whole measurement, the buffer's filling
                                 included */
    uint64_t checksum;        /* of what was read (keeps the reads) */
    double single_gflops;     /* one thread's single-precision multiply-adds,
                                 at the widest vectors the CPU has, GFLOPS */
    double all_gflops;        /* n_threads threads together */
} ggfit_host_bw;

GGFIT_API ggfit_status ggfit_host_measure(uint64_t buffer_bytes, ggfit_host_bw *out,
                                          char **err);

/* The measurement in words, beside the speed model's assumption; and
 * ggfit_devices_json with it added as "host_bandwidth". Free with
 * ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_host_bw_text(const ggfit_host_bw *b);
GGFIT_API char *ggfit_devices_json_measured(const ggfit_host_info *host,
                                            const ggfit_device *devs, size_t n,
                                            const ggfit_host_bw *b);

/* This machine's host bandwidth as the speed model takes it: the larger of
 * the measured reads (one thread, all of them), kept in the cache folder
 * (GGFIT_CACHE_DIR, else $XDG_CACHE_HOME/ggfit, else ~/.cache/ggfit) as
 * "host-bw" with the CPU's name and the memory's total, and measured again
 * (about 150 ms) when either differs, when the figure is older than
 * GGFIT_HOST_BW_MAX_AGE_DAYS, or when it cannot be read. GGFIT_HOST_BW in
 * the environment decides instead: "default" measures nothing (gbs 0: the
 * speed model's default), a number is taken as the measured figure. */
#define GGFIT_HOST_BW_MAX_AGE_DAYS 30

typedef struct ggfit_host_bw_figure {
    double gbs;               /* GB/s; 0: none (GGFIT_HOST_BW=default) */
    int64_t measured_at;      /* when, in seconds since 1970 (UTC); 0 for
                                 GGFIT_HOST_BW */
    bool fresh;               /* measured by this call (and kept) */
    char source[96];          /* "measured on this machine 2025-06-01",
                                 "GGFIT_HOST_BW=7.8", "GGFIT_HOST_BW=default" */
    double gflops_thread;     /* the CPU's compute, measured with it: one
                                 thread's GFLOPS, and all threads' together
                                 (0: not measured, GGFIT_HOST_BW) */
    double gflops_all;
    uint32_t n_cpus;          /* the CPUs online when measured */
} ggfit_host_bw_figure;

GGFIT_API ggfit_status ggfit_host_bw_cached(const char *cpu_name, uint64_t mem_total,
                                            ggfit_host_bw_figure *out, char **err);

/* Keeps measurement b (ggfit devices --measure) as ggfit_host_bw_cached's
 * figure for the machine named by cpu_name and mem_total. GGFIT_EIO with a
 * message when the cache folder cannot be written. */
GGFIT_API ggfit_status ggfit_host_bw_keep(const char *cpu_name, uint64_t mem_total,
                                          const ggfit_host_bw *b, char **err);

/* ------------------------------------------------------------------------
 * The fastest plan that fits (--objective speed)
 * ---------------------------------------------------------------------- */

/* What a plan is chosen for. llama.cpp's own objective is the largest
 * context that fits (its fit reduces the context first, then offloads
 * less); speed is ggfit's. */
typedef enum ggfit_objective {
    GGFIT_OBJECTIVE_CONTEXT = 0, /* --objective context: llama.cpp's plan */
    GGFIT_OBJECTIVE_TG = 1,   /* --objective speed: generation tokens/s */
    GGFIT_OBJECTIVE_PP = 2,   /* --objective pp: prompt tokens/s */
} ggfit_objective;

typedef struct ggfit_fastest_options {
    ggfit_objective objective;
    uint32_t n_ctx_min;       /* --min-ctx: the smallest context a plan may
                                 have; 0: 4096, or the trained context when
                                 smaller; a -c given wins */
    bool quant_cache;         /* --quant-cache: a q8_0 K and V cache may be
                                 tried when -ctk/-ctv are not given */
    ggfit_speed_options speed; /* the constants the speeds use */
} ggfit_fastest_options;

/* ggfit_speed_options_init's speeds, objective GGFIT_OBJECTIVE_TG. */
GGFIT_API void ggfit_fastest_options_init(ggfit_fastest_options *o);

/* How the search placed a plan (the renderers word it: "-c 4096 -ngl all
 * -ncmoe 14", "llama.cpp's fit at -c 4096 -fa off"). */
typedef enum ggfit_placement {
    GGFIT_PLACED_BY_FIT,      /* llama.cpp's fit at the context */
    GGFIT_PLACED_NGL,         /* the most whole layers on the GPUs: -ngl layers */
    GGFIT_PLACED_TS,          /* every layer on the GPUs, split by -ts */
    GGFIT_PLACED_NCMOE,       /* every layer on the GPUs, the experts of the
                                 first layers blocks in RAM: -ncmoe layers */
} ggfit_placement;

/* The flags a placement was tried with beside those given. */
typedef enum ggfit_variant {
    GGFIT_VARIANT_GIVEN,      /* none */
    GGFIT_VARIANT_FA_OFF,     /* -fa off (-fa was left to auto) */
    GGFIT_VARIANT_Q8_CACHE,   /* -ctk q8_0 -ctv q8_0 (--quant-cache) */
} ggfit_variant;

/* One plan the search tried, at the smallest context. */
typedef struct ggfit_fastest_candidate {
    ggfit_placement placement;
    ggfit_variant variant;
    uint32_t ctx_tried;       /* the -c it was tried at */
    int32_t layers;           /* NGL: -ngl; NCMOE: -ncmoe */
    uint32_t n_split;         /* TS: -ts's proportions, one per device */
    float tensor_split[GGFIT_MAX_DEVICES];
    bool fits;                /* the whole machine holds it */
    uint32_t n_ctx;
    int32_t n_gpu_layers;     /* offloaded, output layer included */
    double pp_tps, tg_tps;
} ggfit_fastest_candidate;

#define GGFIT_MAX_CANDIDATES 32

typedef struct ggfit_fastest {
    ggfit_objective objective;
    uint32_t n_ctx_min;       /* the context the placements were tried at */
    bool has_own;             /* own holds a plan to free */
    ggfit_plan own;           /* llama.cpp's plan (ggfit_request_plan) */
    ggfit_plan_speed own_speed; /* its speeds with the options' constants
                                 (ok false when it prints no flags) */
    bool found;               /* some plan fits (llama.cpp's or another) */
    bool faster;              /* another plan beats llama.cpp's (by more
                                 than 0.5%, or llama.cpp's does not fit) */
    bool has_best_plan;       /* best holds that plan, at the largest
                                 context its placement leaves room for
                                 (with -fit off: the flags as they are) */
    ggfit_plan best;
    ggfit_plan_speed best_speed; /* the chosen plan's: own_speed when not
                                 faster */
    bool best_own;            /* the chosen plan is llama.cpp's */
    ggfit_fastest_candidate best_how; /* else how it was found (found) */
    size_t n_candidates;
    ggfit_fastest_candidate candidates[GGFIT_MAX_CANDIDATES];
} ggfit_fastest;

/* Plans the request as llama.cpp would (out->own), then with the
 * objective: at the smallest context (o->n_ctx_min, or -c), for the
 * request's flash attention (and off when it is auto) and cache types (and
 * q8_0 with o->quant_cache): llama.cpp's fit, the most whole layers on the
 * GPUs (-ngl), and for MoE models every layer on the GPUs with the fewest
 * blocks' experts in system RAM (-ncmoe); placement flags the request sets
 * are kept. Each is judged on the whole machine and given its speed; the
 * best that fits, when it beats llama.cpp's plan, is planned again at the
 * largest context its placement leaves room for (out->best). With
 * GGFIT_OBJECTIVE_CONTEXT only own is planned. Free with
 * ggfit_fastest_free(). */
GGFIT_API ggfit_status ggfit_request_fastest(ggfit_request *r, const ggfit_fastest_options *o,
                                             ggfit_fastest *out, char **err);
GGFIT_API void ggfit_fastest_free(ggfit_fastest *f);

/* The two plans side by side with their speeds and flags, then the plans
 * tried; and as JSON ({"objective", "llama_cpp": {...}, "fastest": {...},
 * "candidates": [...]}). Free with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_fastest_text(const ggfit_fastest *f);
GGFIT_API char *ggfit_fastest_json(const ggfit_fastest *f);

/* ------------------------------------------------------------------------
 * ggfit sweep: memory and speed against one setting
 * ---------------------------------------------------------------------- */

typedef enum ggfit_sweep_axis {
    GGFIT_SWEEP_CTX = 0,      /* the context, 512 doubling to the trained
                                 one, each with llama.cpp's fit at -c */
    GGFIT_SWEEP_NGL = 1,      /* -ngl 0 to every layer, at the context */
    GGFIT_SWEEP_NCMOE = 2,    /* -ngl all -ncmoe 0 to n_layer, at the context */
} ggfit_sweep_axis;

typedef struct ggfit_sweep_point {
    uint32_t x;               /* the context, -ngl or -ncmoe */
    bool fitted;              /* CTX: llama.cpp's fit found a placement
                                 (else the flags as given are shown) */
    bool fits;                /* the whole machine holds it */
    uint32_t n_ctx;           /* as llama.cpp pads it */
    int32_t n_gpu_layers;     /* offloaded, output layer included */
    double pp_tps;            /* prompt, at depth 0 */
    double tg_tps;            /* generation, at depth 0 (an empty cache) */
    double tg_tps_full;       /* generation with the cache full: at depth
                                 n_ctx - n_gen */
    uint64_t used[GGFIT_MAX_POOLS]; /* bytes per pool of the verdict */
} ggfit_sweep_point;

#define GGFIT_MAX_SWEEP 64

typedef struct ggfit_sweep {
    ggfit_llama_version llama; /* the llama.cpp it answers for */
    ggfit_sweep_axis axis;
    char model[256];          /* the file's name, without its folders */
    /* The machine (the renderers word it: "NVIDIA GeForce RTX 3090 24 GiB,
     * 124 GiB system memory free"): each device's description, else its
     * name, with its memory, and the system memory free. */
    uint32_t n_devices;
    char device_names[GGFIT_MAX_DEVICES][128];
    uint64_t device_total[GGFIT_MAX_DEVICES];
    uint64_t host_free;
    uint32_t n_layer, n_ctx_train;
    uint32_t n_ctx;           /* NGL, NCMOE: the context (-c, else 4096) */
    uint32_t n_prompt, n_gen; /* the speeds' llama-bench -p, -n */
    uint32_t n_pools;
    char pool_names[GGFIT_MAX_POOLS][80];
    uint64_t pool_limits[GGFIT_MAX_POOLS]; /* free minus margin: the most a
                                 plan may use there */
    bool pool_host[GGFIT_MAX_POOLS]; /* system memory (the picture's scale
                                 leaves its limit out when far above) */
    size_t n_points;
    ggfit_sweep_point points[GGFIT_MAX_SWEEP];
    bool host_used;           /* a point reads system memory: at host_bw_gbs */
    double host_bw_gbs;
    char host_bw_from[96];    /* whose figure (ggfit_speed's host_bw_from) */
} ggfit_sweep;

/* Plans the request's model at every value of the axis (at most
 * GGFIT_MAX_SWEEP, evenly spaced), each judged on the whole machine and
 * given its speeds with o's constants. */
GGFIT_API ggfit_status ggfit_request_sweep(ggfit_request *r, ggfit_sweep_axis axis,
                                           const ggfit_speed_options *o, ggfit_sweep *out,
                                           char **err);

/* The sweep as a table, CSV (one row per point, bytes), JSON, and an SVG
 * picture (tokens/s and memory per device against the setting, the
 * devices' limits dashed, points that do not fit hollow). Free with
 * ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_sweep_text(const ggfit_sweep *s);
GGFIT_API char *ggfit_sweep_csv(const ggfit_sweep *s);
GGFIT_API char *ggfit_sweep_json(const ggfit_sweep *s);
GGFIT_API char *ggfit_sweep_svg(const ggfit_sweep *s);

/* ------------------------------------------------------------------------
 * Which quant? Several models planned for one machine, best first
 * ---------------------------------------------------------------------- */

/* How a model's plan ranks (the order of ggfit_quant_list): lower first. */
typedef enum ggfit_quant_rank {
    GGFIT_RANK_ALL_ON_DEVICES = 0, /* fits at the context asked (-c, else the
                                 trained one), every layer and expert on
                                 the GPUs (or no GPU planned for) */
    GGFIT_RANK_LESS_CONTEXT = 1, /* the same at the smaller context llama.cpp's
                                 fit chose (-c not given): ranked with the
                                 above, by size */
    GGFIT_RANK_PART_IN_RAM = 2, /* fits, layers or experts in system RAM */
    GGFIT_RANK_HOST_SHORT = 3, /* the devices hold it, system memory not */
    GGFIT_RANK_NO_FIT = 4,    /* does not fit */
    GGFIT_RANK_ERROR = 5,     /* its header could not be read or planned */
} ggfit_quant_rank;

/* "fits", "fits, less context", "fits, part in RAM", "host memory short",
 * "does not fit", "error"; NULL when out of range. */
GGFIT_API const char *ggfit_quant_rank_str(int rank);

/* One model of the list: a repo's file (split models once) or an -m. */
typedef struct ggfit_quant {
    char *name;               /* the repo's path of the file (the first
                                 shard), or the -m as given */
    char *url;                /* where it was read from, or NULL (a local
                                 file) */
    char tag[64];             /* the quant its name holds ("Q4_K_M"), or "" */
    uint32_t n_shards;
    uint64_t size;            /* bytes of the file(s): headers and tensor
                                 data, as the headers give them */
    ggfit_quant_rank rank;
    ggfit_status status;      /* GGFIT_OK: plan holds its plan */
    char *error;              /* else why not */
    ggfit_plan *plan;         /* ggfit_request_plan's, or NULL */
    /* from the plan (its alternative when the host needed one): */
    uint32_t n_ctx;           /* the context planned */
    uint32_t n_ctx_asked;     /* -c, else the model's trained context */
    int32_t n_gpu_layers;     /* layers offloaded, output layer included */
    uint32_t n_layer;         /* the model's blocks */
    uint32_t expert_blocks_in_ram; /* blocks on a GPU whose routed experts
                                 stay in system RAM (-ot, -ncmoe) */
} ggfit_quant;

typedef struct ggfit_quant_list {
    ggfit_llama_version llama; /* the llama.cpp they answer for */
    char *repo;               /* -hf's user/model, or NULL (local files) */
    char *commit;             /* its commit, or NULL */
    size_t n;
    ggfit_quant *quants;      /* best first: all on the GPUs (either
                                 context), then part in RAM, host short, no
                                 fit, errors; among those that fit the
                                 largest file first (the best quality that
                                 fits), among the others the smallest first
                                 (the nearest to fitting); equal ones in
                                 the order given */
} ggfit_quant_list;

/* Plans every model for the request's machine (its --gpu, --rpc,
 * --host-mem, llama.cpp flags), best first: with r->hf_repo, every model
 * file of the repo (ggfit_hf_resolve's listing; with a quant, those whose
 * name holds it), each header read from ENDPOINT/REPO/resolve/COMMIT/FILE
 * (through the cache); else the n models given (files or URLs; r->model
 * is not used). A model whose header cannot be read is a row with its
 * error (GGFIT_RANK_ERROR), not a failure; bad devices or no model are.
 * Free out with ggfit_quant_list_free(). */
GGFIT_API ggfit_status ggfit_request_quants(ggfit_request *r, const char *const *models,
                                            size_t n, ggfit_quant_list *out, char **err);
GGFIT_API void ggfit_quant_list_free(ggfit_quant_list *l);

/* The exit status the CLI gives a list: the best one's plan's
 * (ggfit_plan_exit_status), 1 when none could be planned. */
GGFIT_API int ggfit_quant_list_exit_status(const ggfit_quant_list *l);

/* The list as a table (one row per model: rank, file, quant, size, verdict,
 * context, -ngl, experts in RAM; then the best one's flags) and as JSON
 * (every row with its plan's JSON). The caller frees it with ggfit_free();
 * NULL when out of memory. */
GGFIT_API char *ggfit_quant_list_text(const ggfit_quant_list *l);
GGFIT_API char *ggfit_quant_list_json(const ggfit_quant_list *l);

#ifdef __cplusplus
}
#endif
#endif /* GGFIT_APP_H */
