/*
 * ggfit.h - will this model fit, and with which settings?
 *
 * libggfit reads the header of a GGUF model (the format llama.cpp loads) and
 * describes the model: its architecture, its layers and what each tensor is.
 * Later layers of the library project llama.cpp's memory use from that
 * description and choose the settings that fit.
 *
 * Conventions, for every function below:
 *  - Functions that can fail return a ggfit_status. On failure they set *err
 *    (when err is not NULL) to a message naming the file, what is wrong and
 *    where. The caller owns the message and frees it with ggfit_free().
 *  - Handles come in open/free pairs; freeing NULL does nothing.
 *  - Byte counts are uint64_t. Counts start with n_.
 *
 * The GGUF file layout (all integers little-endian):
 *  1. magic "GGUF" (4 bytes)
 *  2. version (uint32): 2 or 3 are read; 1 used 32-bit counts and is refused
 *  3. n_tensors (uint64), n_kv (uint64)
 *  4. n_kv key/value pairs: key (string), value type (uint32), value.
 *     A string is a uint64 byte length and that many bytes, no NUL.
 *     An array is an element type (uint32), a uint64 count and the elements;
 *     elements may themselves be strings or arrays.
 *  5. n_tensors tensor infos: name (string), n_dims (uint32), n_dims uint64
 *     dimensions ne[0..], ggml type (uint32), offset (uint64) relative to the
 *     start of the tensor data, a multiple of the alignment
 *  6. padding to general.alignment (uint32 key, default 32)
 *  7. tensor data, starting at the "data offset"
 * A file may end anywhere after item 5 (a header-only file or a partial
 * download): tensor sizes come from shapes and types, never from the file
 * size. Split models (NAME-00001-of-00003.gguf) keep the metadata in the first
 * shard and tensors in all of them (keys split.no, split.count,
 * split.tensors.count).
 *
 * This header is libggfit's stable interface: what a program or a binding
 * needs to read a model, describe devices, set llama.cpp's flags, project
 * memory and fit. A program built against it runs with any later library
 * of the same ABI version (GGFIT_ABI_VERSION, the N of the shared
 * library's soname libggfit.so.N):
 *  - the large structs are handles (ggfit_params, ggfit_projection,
 *    ggfit_fit_result), made by the library (_new), read and set through
 *    functions, never allocated by the program;
 *  - the structs the library hands out by pointer (ggfit_hparams,
 *    ggfit_layer_info, ggfit_tensor_info, ggfit_mem, ggfit_catalog_entry,
 *    ...) may gain fields at their end;
 *  - the structs a program allocates (ggfit_value, ggfit_device,
 *    ggfit_host_info, ggfit_probe_options, ...) keep their layout: a field
 *    added to one is a new ABI version; ggfit_fit_options, which grows
 *    with the fit, carries its size instead (ggfit_fit_options_init).
 * ggfit_app.h adds the command line's layers (requests, plans, verdicts,
 * speeds, sweeps, the quant table, remote models), which may change
 * between any two versions.
 */
#ifndef GGFIT_H
#define GGFIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header, and the number #if can compare:
 * MAJOR * 10000 + MINOR * 100 + PATCH. GGFIT_ABI_VERSION changes whenever
 * a program built against an older ggfit.h could no longer run with this
 * library; it is the N of the shared library's name, libggfit.so.N. */
#define GGFIT_VERSION_MAJOR 0
#define GGFIT_VERSION_MINOR 1
#define GGFIT_VERSION_PATCH 0
#define GGFIT_VERSION "0.1.0"
#define GGFIT_VERSION_NUMBER \
    (GGFIT_VERSION_MAJOR * 10000 + GGFIT_VERSION_MINOR * 100 + GGFIT_VERSION_PATCH)

/* The version of the JSON every *_json function prints: each document
 * begins {"json_version": GGFIT_JSON_VERSION, "kind": "plan", ...}. A
 * change that removes or renames a field, or changes a field's meaning or
 * unit, bumps it; a new field does not (docs/json.md, docs/schema/). */
#define GGFIT_JSON_VERSION 1
#define GGFIT_ABI_VERSION 1

/* What libggfit exports: the functions declared here and nothing else (the
 * library is built with -fvisibility=hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define GGFIT_API __attribute__((visibility("default")))
#else
#define GGFIT_API
#endif

/* The library's own version ("0.1.0"), its GGFIT_VERSION_NUMBER and its
 * GGFIT_ABI_VERSION, which may differ from those of the ggfit.h a program
 * was built with (a newer library of the same ABI). */
GGFIT_API const char *ggfit_version(void);
GGFIT_API int ggfit_version_number(void);
GGFIT_API int ggfit_abi_version(void);

/* ------------------------------------------------------------------------
 * Status codes and memory
 * ---------------------------------------------------------------------- */

typedef enum ggfit_status {
    GGFIT_OK = 0,          /* success */
    GGFIT_EIO = 1,         /* a file could not be opened or read */
    GGFIT_EFORMAT = 2,     /* not a GGUF file, or its header is malformed */
    GGFIT_EUNSUPPORTED = 3,/* well-formed but not supported (version, type) */
    GGFIT_ENOMEM = 4,      /* out of memory */
    GGFIT_EINVAL = 5,      /* the caller passed an invalid argument */
    GGFIT_ELIMIT = 6,      /* input exceeds a documented limit of ggfit */
    GGFIT_ESTATIC = 7,     /* the program is statically linked and cannot load
                              the shared library the request needs: libcurl
                              for a URL, NVML for this machine's NVIDIA GPUs,
                              the C library's resolver for an rpc-server's
                              host name (the ggfit CLI then runs its dynamic
                              build, ggfit-dynamic) */
    GGFIT_STATUS_COUNT
} ggfit_status;

/* Short name of a status ("ok", "format error", ...); never NULL. */
GGFIT_API const char *ggfit_status_str(int status);

/* Frees memory the library handed to the caller (messages, rendered text).
 * ggfit_free(NULL) does nothing. */
GGFIT_API void ggfit_free(void *p);

/* Largest header ggfit reads, in bytes. Real headers, tokenizer included, are
 * tens of MiB; a header that claims more is refused rather than buffered. */
#define GGFIT_MAX_HEADER_BYTES ((uint64_t)512 << 20)

/* ------------------------------------------------------------------------
 * The llama.cpp the answers are for (docs/versions.md)
 *
 * Every projection, fit and plan follows one llama.cpp version's rules:
 * ggfit_params.llama_build names it (0: the newest ggfit supports). A
 * version is an upstream build number, b10309, or a commit; one between
 * two supported versions gets the changes ggfit tracks up to its build,
 * one newer (older) than all gets the newest (oldest) one's rules.
 * ---------------------------------------------------------------------- */

typedef enum ggfit_llama_match {
    GGFIT_LLAMA_EXACT = 0,    /* a version ggfit is held to, byte for byte */
    GGFIT_LLAMA_BETWEEN,      /* between two of them: the tracked changes up
                                 to its build */
    GGFIT_LLAMA_NEWER,        /* newer than all: the newest one's rules */
    GGFIT_LLAMA_OLDER,        /* older than all: the oldest one's rules */
} ggfit_llama_match;

typedef struct ggfit_llama_version {
    uint32_t build;           /* the upstream build number it names */
    uint32_t rules;           /* the build whose rules answer */
    ggfit_llama_match match;
    bool commit_known;        /* commit is upstream's, of that build */
    bool build_printed;       /* a program printed the build number (not
                                 found from its commit) */
    char commit[41];          /* full hash when known, else as given */
    char fork[48];            /* a known fork's name when commit is its
                                 ("unslothai/llama.cpp"), else "" */
    char semver[24];          /* "0.2.0-dev" where --version printed one */
    char date[11];            /* the commit's date when known */
} ggfit_llama_version;

/* The newest version ggfit supports ("latest"). */
GGFIT_API void ggfit_llama_version_latest(ggfit_llama_version *v);

/* The i-th supported version's build number, oldest first; 0 past the
 * last. */
GGFIT_API uint32_t ggfit_llama_version_supported(size_t i);

/* Reads a version as a person or a program writes it: "latest",
 * "b10587" or "10587", a commit of 7 to 40 hex digits, a server's
 * build_info "b10587-3f545becc", or what `llama-server --version` prints
 * ("version: 10309 (82bb48500)"; "version: 0.2.0-dev (build 10587,
 * commit 3f545becc)"; lines before it, such as "using config file",
 * skipped). A commit ggfit knows decides the build, whatever number a
 * fork prints beside it. */
GGFIT_API ggfit_status ggfit_llama_version_parse(const char *text, ggfit_llama_version *v,
                                                 char **err);

/* Runs `PROGRAM --version` (at most 10 seconds, its output read up to
 * 64 KiB) and reads what it prints. program: a llama.cpp program, a
 * folder holding llama-server, or NULL: llama-server on PATH. */
GGFIT_API ggfit_status ggfit_llama_version_detect(const char *program, ggfit_llama_version *v,
                                                  char **err);

/* The i-th change between the supported versions that ggfit tracks
 * (oldest first): the first upstream build with it, its commit and what
 * it changed; false past the last. */
GGFIT_API bool ggfit_llama_change(size_t i, uint32_t *build, const char **commit,
                                  const char **what);

/* Asks a running llama-server which llama.cpp it is: GET URL/props (URL
 * "http://127.0.0.1:8080", "host:port" or the /props address itself),
 * whose "build_info" is "b10587-3f545becc", read as
 * ggfit_llama_version_parse reads it; LLAMA_API_KEY, where set, is sent
 * as llama-server --api-key wants it. Needs libcurl (loaded when called:
 * GGFIT_ESTATIC in a statically linked program); the reply is read up to
 * 4 MiB, with the HTTP timeouts of ggfit_remote_options_init. */
GGFIT_API ggfit_status ggfit_llama_version_from_server(const char *url, ggfit_llama_version *v,
                                                       char **err);

/* "b10587 (3f545becc, 2026-08-22)" into buf, with what the match means
 * where the rules are another version's ("b10700: newer than b10587,
 * answered with b10587's rules"); returns buf. */
GGFIT_API const char *ggfit_llama_version_str(const ggfit_llama_version *v, char *buf,
                                              size_t n);

/* ------------------------------------------------------------------------
 * ggml tensor types
 * ---------------------------------------------------------------------- */

/* ids as in ggml.h; ids 4, 5, 31-33 and 36-38 were removed from ggml.
 * 43..63 are left for upstream ggml's next types (unknown to ggfit until
 * then); 64..66 are Unsloth's llama.cpp's (unslothai/llama.cpp #91,
 * e7099161e): upstream's ggml refuses a file that holds them
 * (ggfit_type_unsloth). */
typedef enum ggfit_type {
    GGFIT_TYPE_F32 = 0, GGFIT_TYPE_F16 = 1, GGFIT_TYPE_Q4_0 = 2,
    GGFIT_TYPE_Q4_1 = 3, GGFIT_TYPE_Q5_0 = 6, GGFIT_TYPE_Q5_1 = 7,
    GGFIT_TYPE_Q8_0 = 8, GGFIT_TYPE_Q8_1 = 9, GGFIT_TYPE_Q2_K = 10,
    GGFIT_TYPE_Q3_K = 11, GGFIT_TYPE_Q4_K = 12, GGFIT_TYPE_Q5_K = 13,
    GGFIT_TYPE_Q6_K = 14, GGFIT_TYPE_Q8_K = 15, GGFIT_TYPE_IQ2_XXS = 16,
    GGFIT_TYPE_IQ2_XS = 17, GGFIT_TYPE_IQ3_XXS = 18, GGFIT_TYPE_IQ1_S = 19,
    GGFIT_TYPE_IQ4_NL = 20, GGFIT_TYPE_IQ3_S = 21, GGFIT_TYPE_IQ2_S = 22,
    GGFIT_TYPE_IQ4_XS = 23, GGFIT_TYPE_I8 = 24, GGFIT_TYPE_I16 = 25,
    GGFIT_TYPE_I32 = 26, GGFIT_TYPE_I64 = 27, GGFIT_TYPE_F64 = 28,
    GGFIT_TYPE_IQ1_M = 29, GGFIT_TYPE_BF16 = 30, GGFIT_TYPE_TQ1_0 = 34,
    GGFIT_TYPE_TQ2_0 = 35, GGFIT_TYPE_MXFP4 = 39, GGFIT_TYPE_NVFP4 = 40,
    GGFIT_TYPE_Q1_0 = 41, GGFIT_TYPE_Q2_0 = 42,
    GGFIT_TYPE_IQ1_XS = 64,   /* Unsloth's: 46 bytes per 256 (1.4375 bpw) */
    GGFIT_TYPE_IQ1_XXS = 65,  /* 42 bytes per 256 (1.3125 bpw) */
    GGFIT_TYPE_IQ1_XXXS = 66, /* 38 bytes per 256 (1.1875 bpw) */
    GGFIT_TYPE_COUNT = 67
} ggfit_type;

/* Name of a type id ("Q4_K"); removed ids give their old name ("Q4_0_4_4");
 * ids out of range, or left for upstream (43..63), give NULL. */
GGFIT_API const char *ggfit_type_name(uint32_t type);

/* Whether type is one of Unsloth's llama.cpp's alone (IQ1_XS, IQ1_XXS,
 * IQ1_XXXS: unslothai/llama.cpp #91, in Unsloth's prebuilt llama.cpp from
 * 2026-08-11): upstream llama.cpp, every version ggfit follows, refuses a
 * file that holds one ("invalid ggml type"). */
GGFIT_API bool ggfit_type_unsloth(uint32_t type);

/* True for ids ggml still supports (and GGUF files may use). */
GGFIT_API bool ggfit_type_valid(uint32_t type);

/* Elements per block and bytes per block; 0 for invalid ids. */
GGFIT_API uint32_t ggfit_type_block_size(uint32_t type);
GGFIT_API uint32_t ggfit_type_block_bytes(uint32_t type);

/* True for block-quantized types (block size > 1). */
GGFIT_API bool ggfit_type_is_quantized(uint32_t type);

/* Type id by name, case-insensitive ("q8_0"); -1 if unknown or removed. */
GGFIT_API int ggfit_type_from_name(const char *name);

/* Bytes of one row of n elements; 0 when n is not a multiple of the block. */
GGFIT_API uint64_t ggfit_row_bytes(uint32_t type, uint64_t n);

/* ------------------------------------------------------------------------
 * GGUF reader
 * ---------------------------------------------------------------------- */

typedef enum ggfit_gguf_type {
    GGFIT_GGUF_UINT8 = 0, GGFIT_GGUF_INT8 = 1, GGFIT_GGUF_UINT16 = 2,
    GGFIT_GGUF_INT16 = 3, GGFIT_GGUF_UINT32 = 4, GGFIT_GGUF_INT32 = 5,
    GGFIT_GGUF_FLOAT32 = 6, GGFIT_GGUF_BOOL = 7, GGFIT_GGUF_STRING = 8,
    GGFIT_GGUF_ARRAY = 9, GGFIT_GGUF_UINT64 = 10, GGFIT_GGUF_INT64 = 11,
    GGFIT_GGUF_FLOAT64 = 12,
    GGFIT_GGUF_TYPE_COUNT
} ggfit_gguf_type;

/* Name of a GGUF value type ("uint32"); NULL when out of range. */
GGFIT_API const char *ggfit_gguf_type_name(uint32_t type);

typedef struct ggfit_gguf ggfit_gguf;   /* an opened model, all shards */

/* A view of one value inside an opened file. It stays valid until the file
 * is closed. Strings are not NUL-terminated: use str and n. */
typedef struct ggfit_value {
    uint32_t type;        /* ggfit_gguf_type */
    uint32_t elem_type;   /* arrays: type of the elements */
    uint64_t n;           /* strings: bytes; arrays: elements */
    const char *str;      /* strings: the bytes */
    uint64_t u;           /* unsigned integers and bool */
    int64_t i;            /* signed integers */
    double f;             /* float32 and float64 */
    const unsigned char *raw_; /* private: arrays' encoded elements */
} ggfit_value;

/* Position of an iteration over an array's elements. */
typedef struct ggfit_value_iter {
    uint64_t index;               /* next element */
    const unsigned char *pos_;    /* private */
} ggfit_value_iter;

/* One tensor's header entry. */
typedef struct ggfit_tensor_info {
    const char *name;     /* NUL-terminated, < 64 bytes as in ggml */
    uint32_t type;        /* ggfit_type */
    uint32_t n_dims;      /* 0..4 */
    int64_t ne[4];        /* elements per dimension; unused ones are 1 */
    uint64_t offset;      /* from the shard's data offset */
    uint64_t n_bytes;     /* from shape and type, unpadded */
    uint32_t shard;       /* index of the shard holding the data */
} ggfit_tensor_info;

/* Opens a GGUF file and reads its header; for a split model, opens every
 * shard whichever one is named. Only the header is read.
 * On success *out is a handle the caller closes with ggfit_gguf_close(). */
GGFIT_API ggfit_status ggfit_gguf_open(const char *path, ggfit_gguf **out, char **err);

/* Reads a GGUF header from memory (size bytes at data); name is used in
 * messages. The bytes are copied. A split model's other shards are not
 * looked for. On success *out is a handle the caller closes with
 * ggfit_gguf_close(). */
GGFIT_API ggfit_status ggfit_gguf_open_memory(const void *data, size_t size, const char *name,
                                              ggfit_gguf **out, char **err);

GGFIT_API void ggfit_gguf_close(ggfit_gguf *g);

GGFIT_API uint32_t ggfit_gguf_version(const ggfit_gguf *g);
GGFIT_API uint32_t ggfit_gguf_alignment(const ggfit_gguf *g);
GGFIT_API uint32_t ggfit_gguf_n_shards(const ggfit_gguf *g);
/* Path and data offset (start of tensor data) of shard i. */
GGFIT_API const char *ggfit_gguf_shard_path(const ggfit_gguf *g, uint32_t i);
GGFIT_API uint64_t ggfit_gguf_data_offset(const ggfit_gguf *g, uint32_t i);

/* Keys and values (the first shard's, as llama.cpp uses them). */
GGFIT_API uint64_t ggfit_gguf_n_kv(const ggfit_gguf *g);
GGFIT_API const char *ggfit_gguf_key(const ggfit_gguf *g, uint64_t i);
/* Index of key, or -1 when absent. */
GGFIT_API int64_t ggfit_gguf_find_key(const ggfit_gguf *g, const char *key);
/* Value of key i; returns false when i is out of range. */
GGFIT_API bool ggfit_gguf_value(const ggfit_gguf *g, uint64_t i, ggfit_value *out);
/* Next element of an array value; false after the last one. Start with an
 * iterator set to {0}. Works on nested arrays too. */
GGFIT_API bool ggfit_value_next(const ggfit_value *arr, ggfit_value_iter *it, ggfit_value *out);

/* Tensors of all shards, in file order. */
GGFIT_API uint64_t ggfit_gguf_n_tensors(const ggfit_gguf *g);
GGFIT_API const ggfit_tensor_info *ggfit_gguf_tensor(const ggfit_gguf *g, uint64_t i);
/* Index of the tensor named name, or -1. */
GGFIT_API int64_t ggfit_gguf_find_tensor(const ggfit_gguf *g, const char *name);
/* Sum of n_bytes over all tensors. */
GGFIT_API uint64_t ggfit_gguf_tensor_bytes(const ggfit_gguf *g);

/* Rewrites the model at in (all shards of a split model) as out with its
 * tensors ordered so that what llama.cpp offloads is contiguous in the
 * file: the input layer, the blocks in order, the output layer last, each
 * layer's tensors as they were. Keys and tensor data are copied exactly.
 * Each file is written under a temporary name and renamed into place when
 * complete. A split model's out is named like NAME-00001-of-0000N.gguf
 * and the other shards follow that pattern. Writes regular files only.
 * Refused (GGFIT_EINVAL) before anything is written: out, or another
 * shard's name, that is a directory, a device, a FIFO, a socket or a
 * symbolic link (whatever force says: none is replaced), that exists
 * unless force, or that is one of the input's shards; out itself is looked
 * at before a byte of the input is read, the other shards' names once the
 * input's header says how many there are. Refused too: a header-only or
 * partial input (its tensor data is not there). */
GGFIT_API ggfit_status ggfit_reorder(const char *in, const char *out, bool force, char **err);

/* ------------------------------------------------------------------------
 * Model description
 * ---------------------------------------------------------------------- */

/* What a tensor does. Layer -1 tensors are the input and output layers. */
typedef enum ggfit_role {
    GGFIT_ROLE_TOKEN_EMBD = 0, /* token_embd, pos_embd, per-layer inputs */
    GGFIT_ROLE_OUTPUT,         /* output (lm head), cls */
    GGFIT_ROLE_OUTPUT_NORM,    /* output_norm */
    GGFIT_ROLE_ATTENTION,      /* attn_q/k/v/output, MLA projections, sinks */
    GGFIT_ROLE_FFN,            /* dense ffn_up/gate/down */
    GGFIT_ROLE_EXPERTS,        /* routed experts ffn_*_exps (and biases) */
    GGFIT_ROLE_SHARED_EXPERTS, /* ffn_*_shexp */
    GGFIT_ROLE_ROUTER,         /* ffn_gate_inp, exp_probs_b */
    GGFIT_ROLE_NORM,           /* per-layer norms */
    GGFIT_ROLE_RECURRENT,      /* ssm_*, shortconv, time/channel mix */
    GGFIT_ROLE_NEXTN,          /* NextN/MTP heads: blk.N.nextn.* */
    GGFIT_ROLE_OTHER,          /* rope factors and anything unrecognised */
    GGFIT_ROLE_COUNT
} ggfit_role;

/* Short name of a role ("experts"); NULL when out of range. */
GGFIT_API const char *ggfit_role_name(int role);

/* Hyperparameters, as llama.cpp reads them from "<arch>.*" keys. Absent
 * keys are 0 unless said otherwise. */
typedef struct ggfit_hparams {
    char arch[64];            /* general.architecture */
    char name[128];           /* general.name, may be empty */
    uint32_t n_layer;         /* block_count, NextN blocks included */
    uint32_t n_nextn;         /* nextn_predict_layers: the last blocks */
    uint32_t n_ctx_train;     /* context_length */
    uint32_t n_embd;          /* embedding_length */
    uint32_t n_vocab;         /* vocab_size, else tokenizer token count */
    uint32_t n_head_max;      /* largest attention.head_count */
    uint32_t n_head_kv_max;   /* largest attention.head_count_kv */
    uint32_t n_ff_max;        /* largest feed_forward_length */
    uint32_t n_embd_head_k;   /* attention.key_length, default n_embd/n_head */
    uint32_t n_embd_head_v;   /* attention.value_length, same default */
    uint32_t n_embd_head_k_swa; /* attention.key_length_swa, default k */
    uint32_t n_embd_head_v_swa; /* attention.value_length_swa, default v */
    uint32_t n_rot;           /* rope.dimension_count */
    uint32_t n_expert;        /* expert_count */
    uint32_t n_expert_used;   /* expert_used_count */
    uint32_t n_expert_shared; /* expert_shared_count */
    uint32_t n_ff_exp;        /* expert_feed_forward_length */
    uint32_t n_ff_shexp;      /* expert_shared_feed_forward_length */
    uint32_t n_layer_dense_lead; /* leading_dense_block_count */
    uint32_t n_swa;           /* attention.sliding_window */
    uint32_t swa_pattern;     /* attention.sliding_window_pattern (scalar) */
    bool has_swa_layers;      /* sliding_window_pattern given per layer */
    uint32_t n_lora_q;        /* attention.q_lora_rank */
    uint32_t n_lora_kv;       /* attention.kv_lora_rank */
    uint32_t n_embd_head_k_mla; /* attention.key_length_mla */
    uint32_t n_embd_head_v_mla; /* attention.value_length_mla */
    uint32_t ssm_d_conv;      /* ssm.conv_kernel */
    uint32_t ssm_d_inner;     /* ssm.inner_size */
    uint32_t ssm_d_state;     /* ssm.state_size */
    uint32_t ssm_dt_rank;     /* ssm.time_step_rank */
    uint32_t ssm_n_group;     /* ssm.group_count */
    uint32_t full_attn_interval; /* full_attention_interval */
    uint32_t shortconv_l_cache;  /* shortconv.l_cache */
    uint32_t wkv_head_size;   /* wkv.head_size (RWKV), 0 if absent */
    uint32_t token_shift_count; /* token_shift_count (RWKV), default 2 */
    uint32_t n_embd_head_kda; /* kda.head_dim (Kimi Linear), 0 if absent */
    uint32_t file_type;       /* general.file_type, 0 if absent */
} ggfit_hparams;

/* Per-layer values; arrays in the file or the scalar for every layer. */
typedef struct ggfit_layer_info {
    uint32_t n_head;
    uint32_t n_head_kv;       /* 0 for recurrent layers of hybrids */
    uint32_t n_ff;
    bool swa;                 /* per-layer sliding_window_pattern, if given */
    bool nextn;               /* one of the last n_nextn blocks */
    uint64_t n_bytes;         /* all tensors of the block */
    uint64_t role_bytes[GGFIT_ROLE_COUNT];
} ggfit_layer_info;

/* A tensor with its place in the model. */
typedef struct ggfit_tensor {
    const ggfit_tensor_info *info;
    int32_t layer;            /* block index, -1 outside the blocks */
    ggfit_role role;
    bool output_layer;        /* llama.cpp's output layer (il == n_layer) */
} ggfit_tensor;

typedef struct ggfit_model ggfit_model;

/* Opens a model file (any shard of a split model) and describes it. The
 * caller frees the model with ggfit_model_free(). */
GGFIT_API ggfit_status ggfit_model_open(const char *path, ggfit_model **out, char **err);

/* Describes an already opened GGUF; the model takes ownership of g, also on
 * failure. The caller frees the model with ggfit_model_free(). */
GGFIT_API ggfit_status ggfit_model_from_gguf(ggfit_gguf *g, ggfit_model **out, char **err);

GGFIT_API void ggfit_model_free(ggfit_model *m);

GGFIT_API const ggfit_gguf *ggfit_model_gguf(const ggfit_model *m);
GGFIT_API const ggfit_hparams *ggfit_model_hparams(const ggfit_model *m);
/* Layers 0..n_layer-1. */
GGFIT_API const ggfit_layer_info *ggfit_model_layer(const ggfit_model *m, uint32_t il);
GGFIT_API uint64_t ggfit_model_n_tensors(const ggfit_model *m);
GGFIT_API const ggfit_tensor *ggfit_model_tensor(const ggfit_model *m, uint64_t i);
/* Bytes by role over the whole model. */
GGFIT_API uint64_t ggfit_model_role_bytes(const ggfit_model *m, ggfit_role role);
/* Bytes of llama.cpp's input layer (always on the CPU) and output layer. */
GGFIT_API uint64_t ggfit_model_input_bytes(const ggfit_model *m);
GGFIT_API uint64_t ggfit_model_output_bytes(const ggfit_model *m);

/* ------------------------------------------------------------------------
 * Renderers of a model description
 * ---------------------------------------------------------------------- */

/* Human-readable summary and per-layer table. The caller frees the text
 * with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_inspect_text(const ggfit_model *m);

/* The same data as JSON (bytes, not MiB); per-tensor entries when
 * with_tensors. The caller frees it with ggfit_free(); NULL when out of
 * memory. */
GGFIT_API char *ggfit_inspect_json(const ggfit_model *m, bool with_tensors);

/* ------------------------------------------------------------------------
 * Architectures: what ggfit does with each one llama.cpp loads
 * ---------------------------------------------------------------------- */

typedef enum ggfit_arch_status {
    GGFIT_ARCH_EXACT = 0,     /* llama.cpp's rules and graph: every byte */
    GGFIT_ARCH_NO_GRAPH = 1,  /* llama.cpp's memory rules, weights and KV
                                 cache exact; no graph yet, compute estimated */
    GGFIT_ARCH_GENERIC = 2,   /* not modelled: exact weights, the plain
                                 transformer's KV cache and estimated compute */
} ggfit_arch_status;

typedef struct ggfit_arch_info {
    const char *name;         /* general.architecture, as llama.cpp spells it */
    ggfit_arch_status status;
    const char *memory;       /* what it keeps per token: "KV cache", ... */
    bool in_llama;            /* in llama.cpp's list at the reference version
                                 (false: a name only older files carry) */
    const char *why;          /* why it is not exact (what llama.cpp does
                                 with such files, what is missing); NULL:
                                 exact, or no reason recorded */
} ggfit_arch_info;

/* Every architecture llama.cpp knows (src/llama-arch.cpp, in its order),
 * then those ggfit knows that llama.cpp no longer lists: i from 0 to
 * ggfit_arch_count() - 1. The strings are static. */
GGFIT_API size_t ggfit_arch_count(void);
GGFIT_API ggfit_status ggfit_arch_get(size_t i, ggfit_arch_info *out);

/* The llama.cpp build that first loads architecture i (0: every version
 * ggfit supports does), and that build's commit into *commit when not
 * NULL ("" for 0); whether ggfit is exact for it at build (0: the newest
 * supported): an exact row that build loads. */
GGFIT_API uint32_t ggfit_arch_added(size_t i, const char **commit);
GGFIT_API bool ggfit_arch_exact_at(size_t i, uint32_t build);

/* The list as text, as JSON, or as the Markdown table README.md shows;
 * NULL when out of memory. The caller frees it with ggfit_free(). */
GGFIT_API char *ggfit_archs_text(void);
GGFIT_API char *ggfit_archs_json(void);
GGFIT_API char *ggfit_archs_markdown(void);


/* ------------------------------------------------------------------------
 * Devices and llama.cpp parameters
 * ---------------------------------------------------------------------- */

#define GGFIT_MAX_DEVICES 16

/* The backend a device belongs to; rules that differ by backend (buffer
 * alignment, row padding, host buffers) follow it. */
typedef enum ggfit_backend {
    GGFIT_BACKEND_CPU = 0,
    GGFIT_BACKEND_CUDA,
    GGFIT_BACKEND_ROCM,
    GGFIT_BACKEND_VULKAN,
    GGFIT_BACKEND_METAL,
    GGFIT_BACKEND_RPC,
    GGFIT_BACKEND_COUNT
} ggfit_backend;

/* "cuda", "rpc", ...; NULL when out of range. */
GGFIT_API const char *ggfit_backend_name(int backend);

typedef struct ggfit_device {
    char name[80];            /* llama.cpp's buffer type name, as -ot takes it:
                                 "CUDA0", "RPC0[host:port]" ("RPC0" for an
                                 rpc device described with --gpu) */
    ggfit_backend kind;
    uint64_t total;           /* bytes */
    uint64_t free;            /* bytes */
    char description[128];    /* "NVIDIA GeForce RTX 4090", or empty */
    uint64_t held_by_others;  /* bytes other processes hold, when known */
    double bandwidth_gbs;     /* memory bandwidth in GB/s; 0 when unknown */
    bool unified;             /* shares one pool with system memory (Apple
                                 silicon, APUs): not counted twice */
    char endpoint[64];        /* rpc: "host:port" of its rpc-server */
    uint64_t system_memory;   /* unified: bytes of the one pool it shares
                                 with the host (a Mac's memory); 0 unknown */
    char assumed[160];        /* how free was chosen when it was neither
                                 measured nor given; empty otherwise */
} ggfit_device;

/* Parses --gpu: "none", or a comma list of [KIND:]SIZE[/FREE] with KIND
 * cuda, rocm, vulkan, metal or rpc (default cuda) and sizes like 24GiB,
 * 24077MiB, 24000MB, 1.5TiB. In place of SIZE an item can be a catalog id
 * (ggfit_catalog_find: "rtx-3090", "m3-pro-18gb"): the device takes the
 * entry's memory, backend, name (description), bandwidth and unified flag;
 * a KIND prefix overrides the backend. An unknown id is GGFIT_EINVAL with
 * close ids in *err. Devices are named as llama.cpp names them
 * (CUDA0, CUDA1, ROCm0, Vulkan0, Metal, RPC0 ...). Returns the count in *n.
 * Without /FREE a CUDA, ROCm or Vulkan device is given the free memory a
 * real driver leaves (ggfit_driver_free; the device's assumed says so);
 * Metal's total is already what Metal reports free, and an rpc device's
 * size is taken as its rpc-server would report it. */
GGFIT_API ggfit_status ggfit_devices_parse(const char *spec, ggfit_device *out, size_t max,
                                           size_t *n, char **err);

/* The free memory a device of this backend and total size reports once a
 * driver is loaded and before a model is (CUDA: 24,077 of 24,576 MiB on a
 * 24 GB card, llama.cpp's own figure); the data and their sources are in
 * devices/spec.c. why (may be NULL) receives a sentence saying what was
 * assumed, or "" when nothing is (Metal, rpc). */
GGFIT_API uint64_t ggfit_driver_free(ggfit_backend kind, uint64_t total, char *why, size_t n);

/* Parses a size ("24GiB", "24077MiB", "24000MB", "512", "1.5TiB"; a bare
 * number is MiB, as llama.cpp's -fitt takes it) into bytes. ggfit's own
 * sizes (--gpu, --host-mem) refuse a bare number before it comes here. */
GGFIT_API ggfit_status ggfit_size_parse(const char *s, uint64_t *bytes);

/* Whether value v of size flag flag (--gpu's devices, --host-mem's
 * TOTAL/FREE) gives a size in a decimal unit (GB, MB, TB) that is likely
 * meant in the binary one: --gpu 24GB is 22,888 MiB, 7% less than the
 * 24 GiB card meant. note (n bytes, may be NULL with n 0) receives the
 * sentence, "--gpu 24GB is 22888 MiB, 7% less than 24GiB: give 24GiB if
 * that is the size meant", or "". */
GGFIT_API bool ggfit_size_note(const char *flag, const char *v, char *note, size_t n);

/* ---- this machine (devices/discover.c) ---------------------------------- */

typedef struct ggfit_host_info {
    uint64_t total;           /* bytes of system memory (MemTotal) */
    uint64_t available;       /* MemAvailable, capped by the cgroup v2 limit
                                 (memory.max - memory.current) when set */
    uint32_t cpu_features;    /* GGFIT_CPU_*: decides AMX and CPU_REPACK */
    char cpu_name[128];
} ggfit_host_info;

typedef struct ggfit_probe_options {
    const char *sysroot;      /* prefix for /proc and /sys (tests); NULL:
                                 $GGFIT_SYSROOT, else none */
    const char *nvml_path;    /* NVML library to load; NULL: $GGFIT_NVML,
                                 else libnvidia-ml.so.1 */
} ggfit_probe_options;

/* Probes system memory and CPU features. */
GGFIT_API ggfit_status ggfit_host_probe(const ggfit_probe_options *o, ggfit_host_info *host,
                                        char **err);

/* Finds this machine's GPUs as llama.cpp's backends see them: NVIDIA
 * through NVML (loaded at run time), AMD and Intel through sysfs, Apple
 * silicon through Metal's working-set limit. Fills at most max devices;
 * *n is how many. No GPU is not an error (*n = 0). */
GGFIT_API ggfit_status ggfit_devices_discover(const ggfit_probe_options *o, ggfit_device *out,
                                              size_t max, size_t *n, char **err);

/* What ggfit sees: the host (may be NULL) and the n devices, as a table
 * (MiB) or as JSON (bytes). The caller frees the text with ggfit_free();
 * NULL when out of memory. */
GGFIT_API char *ggfit_devices_text(const ggfit_host_info *host, const ggfit_device *devs, size_t n);
GGFIT_API char *ggfit_devices_json(const ggfit_host_info *host, const ggfit_device *devs, size_t n);

/* ---- described devices: the catalog (devices/catalog.c) ----------------- */

typedef struct ggfit_catalog_entry {
    const char *id;           /* "rtx-3090", "m3-pro-18gb" */
    const char *name;         /* "NVIDIA GeForce RTX 3090" */
    ggfit_backend kind;       /* the backend llama.cpp uses for it */
    uint64_t memory;          /* bytes; for Macs the Metal working-set limit */
    uint64_t system_memory;   /* Macs: bytes of unified memory; else 0 */
    double bandwidth_gbs;     /* GB/s */
    const char *source;       /* where the figures come from */
} ggfit_catalog_entry;

/* The entries of data/gpus.tsv, in its order; static, never freed. get
 * returns NULL when i >= ggfit_catalog_count(). */
GGFIT_API size_t ggfit_catalog_count(void);
GGFIT_API const ggfit_catalog_entry *ggfit_catalog_get(size_t i);
/* The entry with this id (case-insensitive), or NULL. */
GGFIT_API const ggfit_catalog_entry *ggfit_catalog_find(const char *id);
/* The entries whose id or name contains filter, ignoring case (NULL: all),
 * in the catalog's order: the first max of them go to out (which may be
 * NULL when max is 0); returns how many match, more than max when out was
 * too small. The entries are static. */
GGFIT_API size_t ggfit_catalog_list(const char *filter, const ggfit_catalog_entry **out,
                                    size_t max);
/* n entries as a table that fits 80 columns (id, kind, GiB, GB/s, name;
 * render/gpu_list.c) or as JSON ({"devices": [...]}, bytes and sources). The
 * caller frees the text with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_catalog_text(const ggfit_catalog_entry *const *rows, size_t n);
GGFIT_API char *ggfit_catalog_json(const ggfit_catalog_entry *const *rows, size_t n);

/* ---- llama.cpp RPC servers (devices/rpc.c) ------------------------------ */

/* Asks each rpc-server in endpoints ("host:port[,host:port...]") for its
 * devices and their free memory, with ggml's RPC protocol, as llama.cpp's
 * --rpc does. Devices are named as llama.cpp names them. timeout_ms bounds
 * each connection and reply. */
GGFIT_API ggfit_status ggfit_rpc_query(const char *endpoints, int timeout_ms, ggfit_device *out,
                                       size_t max, size_t *n, char **err);

/* The same as llama.cpp at build speaks it (0: the newest supported):
 * each llama.cpp accepts a server of its own major protocol version and a
 * minor not newer than its own (b10309: 5.0; b10587: 5.1). */
GGFIT_API ggfit_status ggfit_rpc_query_for(const char *endpoints, uint32_t build, int timeout_ms,
                                           ggfit_device *out, size_t max, size_t *n,
                                           char **err);

/* ---- the CPU planned for (devices/cpu.c) -------------------------------- */

/* CPU features that decide the CPU's extra buffer types, where llama.cpp
 * puts the weights the CPU multiplies (ggml-cpu's list, in its order: AMX,
 * then CPU_REPACK), as a build for that CPU (-march=native) has them. */
enum {
    GGFIT_CPU_AVX2 = 1 << 0,
    GGFIT_CPU_AVX512 = 1 << 1,
    GGFIT_CPU_NEON_DOTPROD = 1 << 2,
    GGFIT_CPU_NEON_I8MM = 1 << 3,
    /* AMX-INT8 with AVX512-VNNI, what ggml builds its AMX buffer type with
     * (__AMX_INT8__ && __AVX512VNNI__), and the tiles granted by the
     * kernel (ggml_amx_init): Intel Xeon since Sapphire Rapids */
    GGFIT_CPU_AMX = 1 << 4,
};

/* A kind of CPU by name, for planning on a machine other than this one. */
typedef struct ggfit_cpu_class {
    const char *id;           /* what --cpu takes: "sapphire-rapids", "zen4" */
    const char *name;         /* "Intel Xeon 4th gen (Sapphire Rapids)" */
    uint32_t features;        /* GGFIT_CPU_* */
} ggfit_cpu_class;

/* The classes --cpu knows, in the order -h lists them; static, never
 * freed. get returns NULL when i >= ggfit_cpu_class_count(). */
GGFIT_API size_t ggfit_cpu_class_count(void);
GGFIT_API const ggfit_cpu_class *ggfit_cpu_class_get(size_t i);

/* Parses --cpu: a comma list of class ids and feature names (avx2,
 * avx512, amx, dotprod, i8mm), their features together; "none" for a CPU
 * with none of them. A feature brings those a compiler enables with it
 * (avx512 brings avx2; amx, built with AVX512-VNNI, brings both). An
 * unknown name is GGFIT_EINVAL, with the closest known one in *err. */
GGFIT_API ggfit_status ggfit_cpu_parse(const char *spec, uint32_t *features, char **err);

/* The name --cpu takes for one GGFIT_CPU_* bit ("amx"); NULL for none. */
GGFIT_API const char *ggfit_cpu_feature_name(uint32_t bit);

/* ---- llama.cpp's flags (common/params.c) -------------------------------- */

enum { GGFIT_FA_AUTO = -1, GGFIT_FA_OFF = 0, GGFIT_FA_ON = 1 };
enum { GGFIT_SPLIT_NONE = 0, GGFIT_SPLIT_LAYER = 1, GGFIT_SPLIT_ROW = 2 };
#define GGFIT_NGL_AUTO (-1)
#define GGFIT_NGL_ALL (-2)

/* llama.cpp's flags, with its names and defaults: a handle.
 * ggfit_params_new gives llama.cpp's defaults (common_params), with the CPU
 * features of the reference machine (AVX2 and AVX512) until a device probe
 * sets them; ggfit_params_parse_arg and ggfit_params_set_flag take flags
 * as llama.cpp spells them, ggfit_params_get and _set one setting. */
typedef struct ggfit_params ggfit_params;

/* New flags with llama.cpp's defaults, or NULL when out of memory; a copy
 * of p (ggfit_params_dup). Free either with ggfit_params_free() (NULL does
 * nothing). */
GGFIT_API ggfit_params *ggfit_params_new(void);
GGFIT_API ggfit_params *ggfit_params_dup(const ggfit_params *p);
GGFIT_API void ggfit_params_free(ggfit_params *p);

/* The settings ggfit_params_get and _set take, with the flag of each. */
typedef enum ggfit_param {
    GGFIT_PARAM_N_CTX = 0,    /* -c; 0 = the trained context */
    GGFIT_PARAM_N_BATCH,      /* -b */
    GGFIT_PARAM_N_UBATCH,     /* -ub */
    GGFIT_PARAM_N_SEQ,        /* -np */
    GGFIT_PARAM_KV_UNIFIED,   /* -kvu: 0 or 1 */
    GGFIT_PARAM_FLASH_ATTN,   /* -fa: GGFIT_FA_AUTO, _OFF, _ON */
    GGFIT_PARAM_TYPE_K,       /* -ctk: a ggfit_type */
    GGFIT_PARAM_TYPE_V,       /* -ctv: a ggfit_type */
    GGFIT_PARAM_SWA_FULL,     /* --swa-full */
    GGFIT_PARAM_N_GPU_LAYERS, /* -ngl: N, GGFIT_NGL_AUTO or GGFIT_NGL_ALL */
    GGFIT_PARAM_SPLIT_MODE,   /* -sm: GGFIT_SPLIT_* */
    GGFIT_PARAM_MAIN_GPU,     /* -mg */
    GGFIT_PARAM_CPU_MOE,      /* -cmoe */
    GGFIT_PARAM_N_CPU_MOE,    /* -ncmoe */
    GGFIT_PARAM_NO_KV_OFFLOAD, /* -nkvo */
    GGFIT_PARAM_NO_REPACK,    /* --no-repack */
    GGFIT_PARAM_NO_HOST,      /* --no-host */
    GGFIT_PARAM_USE_MMAP,     /* --mmap, --no-mmap */
    GGFIT_PARAM_CPU_FEATURES, /* GGFIT_CPU_* of the CPU planned for */
    GGFIT_PARAM_EMBEDDINGS,   /* --embedding */
    GGFIT_PARAM_POOLING,      /* --pooling: GGFIT_POOLING_* */
    GGFIT_PARAM_N_OUTPUTS_MAX, /* outputs the graph is reserved for; 0: -b */
    GGFIT_PARAM_CACHE_RAM_MIB, /* --cache-ram: MiB; 0 none, -1 no limit */
    GGFIT_PARAM_LOAD_MTP,     /* the NextN blocks loaded (draft-mtp) */
    GGFIT_PARAM_CTX_MTP,      /* the context is the MTP draft context */
    GGFIT_PARAM_N_RS_SEQ,     /* recurrent state snapshots per sequence */
    GGFIT_PARAM_LLAMA_BUILD,  /* the llama.cpp build whose rules answer
                                 (ggfit_llama_version.rules); 0 latest */
    GGFIT_PARAM_COUNT
} ggfit_param;

/* One setting's value; 0 for a key out of range. */
GGFIT_API int64_t ggfit_params_get(const ggfit_params *p, ggfit_param key);

/* Sets one setting as its flag does: -c, -ngl and -np also count as given
 * (the fit keeps a given -c or -ngl; llama-server's -np is then not auto).
 * GGFIT_EINVAL for a key out of range or a value the setting cannot take
 * (a type ggml does not know, a negative count, a bool other than 0 or
 * 1), p unchanged. */
GGFIT_API ggfit_status ggfit_params_set(ggfit_params *p, ggfit_param key, int64_t value);

/* Parses one flag and its value as llama.cpp spells them ("-c", "8192";
 * "-ot", "exps=CPU"; value NULL for a flag that takes none: "--no-mmap"),
 * as ggfit_params_parse_arg does. An unknown flag, a missing or bad value
 * or a value given to a flag that takes none is GGFIT_EINVAL with a
 * message. */
GGFIT_API ggfit_status ggfit_params_set_flag(ggfit_params *p, const char *flag,
                                             const char *value, char **err);

/* -ts's values as given (0.0 past them), and -ot's overrides in order: the
 * pattern searched in tensor names and the buffer type ("CPU", "CUDA0"),
 * strings of p; false when i is out of range. */
GGFIT_API uint32_t ggfit_params_n_tensor_split(const ggfit_params *p);
GGFIT_API float ggfit_params_tensor_split(const ggfit_params *p, uint32_t i);
GGFIT_API uint32_t ggfit_params_n_overrides(const ggfit_params *p);
GGFIT_API bool ggfit_params_override(const ggfit_params *p, uint32_t i, const char **pattern,
                                     const char **buffer);

/* llama_pooling_type's values. */
enum {
    GGFIT_POOLING_UNSPECIFIED = -1, GGFIT_POOLING_NONE = 0, GGFIT_POOLING_MEAN = 1,
    GGFIT_POOLING_CLS = 2, GGFIT_POOLING_LAST = 3, GGFIT_POOLING_RANK = 4,
};

/* Parses one llama.cpp flag at argv[*i] (and its value); advances *i past
 * what it used. A missing or bad value is GGFIT_EINVAL with a message.
 * A flag that is not a llama.cpp flag ggfit knows is the caller's to judge:
 * with used, GGFIT_OK with *used false and *i unchanged (so that the caller
 * can try its own flags); with used NULL, GGFIT_EINVAL ("unknown argument
 * '--frobnicate'"). *used is true after every flag it knows. */
GGFIT_API ggfit_status ggfit_params_parse_arg(ggfit_params *p, int argc, char **argv, int *i,
                                              bool *used, char **err);

/* What llama-server does to the flags before its fit (tools/server/
 * server.cpp and server-context.cpp): with embeddings -b is cut to -ub
 * (already ggfit's everywhere); -np not given is auto: 4 slots and -kvu
 * (the context is then one unified cache of -c tokens, every slot may use
 * all of it); n_outputs_max = slots x (1 + the draft's tokens), at most -b
 * (-b with --embedding or a --pooling other than none); cache_ram_mib its
 * --cache-ram (8192 when not given: pass cache_ram_mib < -1). */
GGFIT_API void ggfit_params_server(ggfit_params *p, int32_t cache_ram_mib);

/* ------------------------------------------------------------------------
 * Projection: what llama.cpp allocates, per buffer type and device
 * ---------------------------------------------------------------------- */

#define GGFIT_MAX_BUFTS (2 * GGFIT_MAX_DEVICES + 4)

typedef struct ggfit_mem {
    uint64_t model;           /* weights */
    uint64_t context;         /* KV cache and recurrent state */
    uint64_t compute;         /* compute buffers */
} ggfit_mem;

typedef struct ggfit_buft_mem {
    char name[96];            /* "RPC0[host:port]", "CUDA0", "CPU", "AMX",
                                 "CPU_REPACK" */
    int32_t device;           /* index into the devices, -1 for the CPU */
    bool is_host;             /* counted in the Host row */
    ggfit_mem mem;
} ggfit_buft_mem;

/* What llama.cpp allocates for a model with given flags on given devices:
 * a handle that ggfit_project fills, and that a fit result holds
 * (ggfit_fit_result_projection). */
typedef struct ggfit_projection ggfit_projection;

/* A new, empty projection, or NULL when out of memory; free it with
 * ggfit_projection_free() (NULL does nothing). */
GGFIT_API ggfit_projection *ggfit_projection_new(void);
GGFIT_API void ggfit_projection_free(ggfit_projection *pr);

/* The context after padding, as llama.cpp reports it, and per sequence;
 * -b and -ub; the layers offloaded, output layer included; whether flash
 * attention is on (-fa auto resolved). */
GGFIT_API uint32_t ggfit_projection_n_ctx(const ggfit_projection *pr);
GGFIT_API uint32_t ggfit_projection_n_ctx_seq(const ggfit_projection *pr);
GGFIT_API uint32_t ggfit_projection_n_batch(const ggfit_projection *pr);
GGFIT_API uint32_t ggfit_projection_n_ubatch(const ggfit_projection *pr);
GGFIT_API int32_t ggfit_projection_n_gpu_layers(const ggfit_projection *pr);
GGFIT_API bool ggfit_projection_flash_attn(const ggfit_projection *pr);

/* The rows of llama.cpp's breakdown, i < n_devices: the memory of each and,
 * in *device (may be NULL), its index among the devices passed (-sm none
 * keeps -mg's alone); NULL when i is out of range. */
GGFIT_API uint32_t ggfit_projection_n_devices(const ggfit_projection *pr);
GGFIT_API const ggfit_mem *ggfit_projection_device(const ggfit_projection *pr, uint32_t i,
                                                   uint32_t *device);
/* The Host row, and the CPU's extra buffer types (AMX, CPU_REPACK): host
 * memory that llama.cpp's table leaves out of every row. */
GGFIT_API const ggfit_mem *ggfit_projection_host(const ggfit_projection *pr);
GGFIT_API const ggfit_mem *ggfit_projection_cpu_extra(const ggfit_projection *pr);
/* The memory per buffer type, i < n_bufts; NULL when i is out of range. */
GGFIT_API uint32_t ggfit_projection_n_bufts(const ggfit_projection *pr);
GGFIT_API const ggfit_buft_mem *ggfit_projection_buft(const ggfit_projection *pr, uint32_t i);
/* "", or what is estimated rather than taken from a graph, and why. */
GGFIT_API const char *ggfit_projection_warning(const ggfit_projection *pr);

/* Projects llama.cpp's memory use for model m with params p on the n
 * devices (none: CPU only) into out (ggfit_projection_new). If placement
 * is not NULL it receives, for each tensor of the model, the index of its
 * buffer type (ggfit_projection_buft's i), or -1 when llama.cpp does not
 * load it.
 *
 * The model keeps the last compute graph a projection or fit built with it
 * (freed by ggfit_model_free), so that projecting the same model again
 * with the same graph structure (batch, context, cache types, flash
 * attention) only re-targets where weights and caches live; results are
 * the same either way. Thread safety: concurrent ggfit_project and
 * ggfit_fit calls on one model are safe (a call that finds the kept graph
 * in use by another builds its own); ggfit_model_free must not race them. */
GGFIT_API ggfit_status ggfit_project(const ggfit_model *m, const ggfit_params *p,
                                     const ggfit_device *devs, size_t n, ggfit_projection *out,
                                     int32_t *placement, char **err);

/* llama.cpp's memory breakdown table (MiB), plus a row for each of the
 * CPU's extra buffer types (AMX, CPU_REPACK), which llama.cpp leaves out.
 * The caller frees it with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_projection_text(const ggfit_projection *pr, const ggfit_device *devs);

/* The projection as JSON: n_ctx, devices[] (name, model, context, compute),
 * host, cpu_extra and per-buffer-type detail, in bytes. The caller frees
 * it with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_projection_json(const ggfit_projection *pr, const ggfit_device *devs);

/* ------------------------------------------------------------------------
 * Fit: llama.cpp's --fit decision (common/fit.cpp common_params_fit_impl)
 * ---------------------------------------------------------------------- */

typedef enum ggfit_fit_status {
    GGFIT_FIT_UNCHANGED = 0,  /* the flags fit as they are */
    GGFIT_FIT_FITS = 1,       /* fits with the fitted flags */
    GGFIT_FIT_FAILED = 2,     /* llama.cpp would refuse: see reason */
} ggfit_fit_status;

typedef struct ggfit_fit_options {
    uint32_t size;            /* sizeof (ggfit_fit_options) as the program
                                 was built with, set by
                                 ggfit_fit_options_init: a newer library
                                 reads those bytes and takes its defaults
                                 for the fields it added */
    uint64_t margin[GGFIT_MAX_DEVICES]; /* -fitt: bytes to keep free per device */
    uint32_t n_margins;       /* values given; one is broadcast; 0: 1024 MiB */
    uint32_t n_ctx_min;       /* -fitc: smallest context, default 4096 */
    uint64_t host_free;       /* CPU-only fits: system memory available */
    bool check_only;          /* -fit off: only say whether the flags as
                                 given keep every margin (FAILED if not) */
    bool fit_around;          /* --fit-around: where llama.cpp aborts because
                                 -ngl, -ts, -ot, -cmoe or -ncmoe are set, keep
                                 them and fit the unset flags around them
                                 (FITS, or FAILED with the reason) */
    /* Bytes something else loaded beside the model takes (llama-server's
     * draft model, -md): extra_used[d] on devs[d], added to that device's
     * fit target as llama-server adds it (tools/server/server-context.cpp
     * load_model: fit_params_target[i] += the draft's model + context +
     * compute) and to its pool in the verdict; extra_host in the verdict's
     * Host pool only (llama-server adds nothing to the fit for the host). */
    uint64_t extra_used[GGFIT_MAX_DEVICES];
    uint64_t extra_host;
    /* The result's log is not wanted: it stays NULL (ggfit_fit_json
     * then has an empty "log"), and the lines are never formatted, which
     * is a good part of a fit's cost outside its projections. Everything
     * else in the result is the same as with the log. Default false: the
     * log is built. */
    bool no_log;
    /* llama.cpp b10587 fits llama-server's draft model or MTP context
     * beside the model (common_fit_extra_model): projected at every
     * context the fit tries, its bytes added to each measurement, not to
     * the targets. NULL: none (llama-fit-params; b10309, where llama-server
     * adds the draft to the targets through extra_used). A plan makes one
     * (ggfit_plan_free frees it). Its bytes at the fitted context are in
     * extra_used / extra_host for the verdict; extra_in_used[d] says how
     * many of extra_used[d] are its, which the fit leaves out of the
     * targets. */
    const struct ggfit_fit_extra *extra;
    uint64_t extra_in_used[GGFIT_MAX_DEVICES];
} ggfit_fit_options;
typedef struct ggfit_fit_extra ggfit_fit_extra;

/* llama.cpp's defaults (-fitt 1024 MiB on every device, -fitc 4096), and
 * the size. */
GGFIT_API void ggfit_fit_options_init(ggfit_fit_options *o);

/* llama.cpp's decision: a handle that ggfit_fit fills. */
typedef struct ggfit_fit_result ggfit_fit_result;

/* A new, empty result, or NULL when out of memory; ggfit_fit_result_free()
 * frees it and all it holds (NULL does nothing). */
GGFIT_API ggfit_fit_result *ggfit_fit_result_new(void);
GGFIT_API void ggfit_fit_result_free(ggfit_fit_result *r);

/* Decides what llama.cpp's --fit decides for params p on devices devs
 * (opt NULL: ggfit_fit_options_init's). On GGFIT_OK the result's status
 * says whether it fits. A result holds one fit: out is a new one
 * (ggfit_fit_result_new). Errors in the inputs give an error status. */
GGFIT_API ggfit_status ggfit_fit(const ggfit_model *m, const ggfit_params *p,
                                 const ggfit_device *devs, size_t n, const ggfit_fit_options *opt,
                                 ggfit_fit_result *out, char **err);

/* Whether the flags fit; the fitted flags and their projection (the
 * result's, valid until it is freed); why it failed, or ""; the reasoning,
 * one line per step as llama.cpp logs it (NULL with no_log); how many
 * projections the search made. */
GGFIT_API ggfit_fit_status ggfit_fit_result_status(const ggfit_fit_result *r);
GGFIT_API const ggfit_params *ggfit_fit_result_params(const ggfit_fit_result *r);
GGFIT_API const ggfit_projection *ggfit_fit_result_projection(const ggfit_fit_result *r);
GGFIT_API const char *ggfit_fit_result_reason(const ggfit_fit_result *r);
GGFIT_API const char *ggfit_fit_result_log(const ggfit_fit_result *r);
GGFIT_API uint32_t ggfit_fit_result_n_projections(const ggfit_fit_result *r);

/* The fitted flags as llama-fit-params prints them: "-c N -ngl N [-ts ..]
 * [-ot "..."]". The caller frees the text with ggfit_free(); NULL when out
 * of memory. */
GGFIT_API char *ggfit_fit_args(const ggfit_fit_result *r, const ggfit_device *devs, size_t n);

/* The fit as JSON: status (unchanged, fits, failed), args, n_ctx,
 * n_gpu_layers, tensor_split, overrides, the projection of the result
 * (devices[], host, cpu_extra, in bytes), reason and the log lines. The
 * caller frees it with ggfit_free(); NULL when out of memory. */
GGFIT_API char *ggfit_fit_json(const ggfit_fit_result *r, const ggfit_device *devs, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* GGFIT_H */
