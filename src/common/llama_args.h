/*
 * llama_args.h - every flag ggfit takes, as one table (not installed).
 *
 * One row per flag, as llama.cpp's common/arg.cpp keeps one common_arg per
 * flag: its names and negated names, its LLAMA_ARG_* variable, the kind of
 * its value, where it lands (a field or a handler of common/args.c), its
 * scope, the programs that take it and whether it changes memory. The rows
 * are data/llama_args.tsv (llama.cpp's flags, tools/llama_args.py) joined
 * with data/flags.tsv (what ggfit does with them, and ggfit's own flags) by
 * scripts/gen_llama_args.awk at build time. A flag ggfit does not know is a
 * row of data/flags.tsv away.
 */
#ifndef GGFIT_LLAMA_ARGS_H
#define GGFIT_LLAMA_ARGS_H

#include "ggfit_app.h"

/* A flag's value kind, scope and programs are ggfit_app.h's: ggfit_flag_kind,
 * ggfit_flag_scope and the GGFIT_PROGRAM_* bits. */

/* Where a flag lands. The fields of ggfit_params come first (the target's,
 * or the draft's for GGFIT_SCOPE_DRAFT: common/params.c), then the
 * request's (common/args.c), the speculative flags' (common/draft.c) and
 * the projector's (common/mmproj.c). */
typedef enum ggfit__flag_at {
    GGFIT__AT_NOTE,            /* recognised, and listed in the plan's notes */
    GGFIT__AT_CLI,             /* the command line tool's own (cli/ggfit.c,
                                  which one: the row's cli): the library's
                                  parsers leave it to their caller */
    /* ggfit_params */
    GGFIT__AT_CTX, GGFIT__AT_BATCH, GGFIT__AT_UBATCH, GGFIT__AT_PARALLEL, GGFIT__AT_THREADS,
    GGFIT__AT_KV_UNIFIED, GGFIT__AT_KV_OFFLOAD, GGFIT__AT_SWA_FULL, GGFIT__AT_FLASH_ATTN,
    GGFIT__AT_TYPE_K, GGFIT__AT_TYPE_V, GGFIT__AT_EMBEDDINGS, GGFIT__AT_RERANK,
    GGFIT__AT_POOLING, GGFIT__AT_REPACK, GGFIT__AT_CPU_MOE, GGFIT__AT_NO_HOST, GGFIT__AT_MMAP,
    GGFIT__AT_NGL, GGFIT__AT_TENSOR_SPLIT, GGFIT__AT_SPLIT_MODE, GGFIT__AT_MAIN_GPU,
    GGFIT__AT_OVERRIDE_TENSOR, GGFIT__AT_N_CPU_MOE,
    /* ggfit_request */
    GGFIT__AT_MODEL, GGFIT__AT_HF_REPO, GGFIT__AT_HF_FILE, GGFIT__AT_HF_TOKEN,
    GGFIT__AT_MODEL_URL, GGFIT__AT_OFFLINE, GGFIT__AT_GPU, GGFIT__AT_RPC, GGFIT__AT_HOST_MEM,
    GGFIT__AT_CPU, GGFIT__AT_FOR, GGFIT__AT_FIT, GGFIT__AT_FIT_PRINT, GGFIT__AT_PRINT_MEMORY,
    GGFIT__AT_FIT_AROUND, GGFIT__AT_FIT_TARGET, GGFIT__AT_FIT_CTX, GGFIT__AT_LLAMA_VERSION,
    GGFIT__AT_LLAMA_BIN, GGFIT__AT_DETECT, GGFIT__AT_VS_VERSION, GGFIT__AT_LLAMA_SERVER,
    GGFIT__AT_CACHE_RAM,
    /* the speculative flags */
    GGFIT__AT_DRAFT_MODEL, GGFIT__AT_SPEC_TYPE, GGFIT__AT_SPEC_DEFAULT,
    GGFIT__AT_SPEC_DRAFT_N_MAX, GGFIT__AT_SPEC_MOD_N_MAX, GGFIT__AT_SPEC_SIMPLE_SIZE_M,
    GGFIT__AT_SPEC_MAP_K_SIZE_M, GGFIT__AT_SPEC_MAP_K4V_SIZE_M, GGFIT__AT_DRAFT_DEVICE,
    /* the projector */
    GGFIT__AT_MMPROJ, GGFIT__AT_MMPROJ_OFFLOAD, GGFIT__AT_WARMUP, GGFIT__AT_IMAGE_MIN_TOKENS,
    GGFIT__AT_IMAGE_MAX_TOKENS,
    GGFIT__AT_COUNT
} ggfit__flag_at;

#define GGFIT__AT_PARAMS_FIRST GGFIT__AT_CTX
#define GGFIT__AT_PARAMS_LAST GGFIT__AT_N_CPU_MOE
#define GGFIT__AT_REQUEST_FIRST GGFIT__AT_MODEL
#define GGFIT__AT_REQUEST_LAST GGFIT__AT_CACHE_RAM
#define GGFIT__AT_DRAFT_FIRST GGFIT__AT_DRAFT_MODEL
#define GGFIT__AT_DRAFT_LAST GGFIT__AT_DRAFT_DEVICE
#define GGFIT__AT_MMPROJ_FIRST GGFIT__AT_MMPROJ
#define GGFIT__AT_MMPROJ_LAST GGFIT__AT_IMAGE_MAX_TOKENS

typedef enum ggfit__flag_memory {
    GGFIT__MEM_COUNTED,        /* ggfit applies it */
    GGFIT__MEM_UNCOUNTED,      /* changes memory ggfit does not count: a note */
    GGFIT__MEM_UNCOUNTED_OFF,  /* so, under its negated names only */
    GGFIT__MEM_NONE,           /* no effect on memory: a note */
    GGFIT__MEM_COUNT
} ggfit__flag_memory;

/* One row, as ggfit__flag_row gives it: strings in the table. The public
 * face of a row is ggfit_flag_info (ggfit_app.h, ggfit_flag_get). */
typedef struct ggfit__flag {
    const char *names;    /* comma-separated, as llama.cpp spells them */
    const char *negated;  /* the --no-... names, or "" */
    const char *env;      /* LLAMA_ARG_..., or "" */
    const char *example;  /* a valid value, "" for a bool */
    const char *prints;   /* the name a printed plan gives it, or "" */
    const char *metavar;  /* its value in the help, or "" */
    const char *help;     /* its line of --help and the man page, or "" */
    ggfit_flag_kind kind;
    ggfit__flag_at lands;
    ggfit_flag_scope scope;
    unsigned programs;    /* GGFIT_PROGRAM_* */
    ggfit__flag_memory memory;
    int values;           /* 0, 1 or 2 */
    unsigned commands;    /* GGFIT_COMMAND_* */
    ggfit_cli_flag cli;   /* the command line tool's own: which */
    /* The llama.cpp versions that have it (data/llama_args.tsv's builds) */
    bool llama;           /* llama.cpp's flag, not ggfit's own */
    uint32_t since;       /* the first build that has it; 0: every supported */
    uint32_t until;       /* the last build that has it; 0: every newer */
    unsigned programs_before; /* its programs (GGFIT_PROGRAM_*) before build */
    uint32_t programs_until;  /* programs_until; 0: the same in every one */
    const char *value;    /* a value its handler takes from build value_since */
    uint32_t value_since; /* on ("" and 0: none) */
} ggfit__flag;

/* Whether llama.cpp at build (the rules' build, not 0) takes flag a of row
 * f, with value v (NULL: none), in program prog: GGFIT_OK, or the error
 * llama.cpp would stop with, in ggfit's words ("llama.cpp b10309 has no
 * --mmproj-device (added in b10541)"). env: a is an LLAMA_ARG_* variable,
 * which only a value the version refuses stops. */
ggfit_status ggfit__flag_in_version(const ggfit__flag *f, const char *a, const char *v, bool env,
                                    uint32_t build, ggfit_program prog, char **err);

/* Whether row f's presence, programs or values differ between the
 * supported versions. */
bool ggfit__flag_versioned(const ggfit__flag *f);

/* Row i of the table, in llama.cpp's order (false past its end). */
bool ggfit__flag_row(size_t i, ggfit__flag *out);

/* The row that has a as a name or (*negated then true) a negated name, or
 * -1. */
int ggfit__flag_find(const char *a, bool *negated);

/* The row whose key k is, as a router preset's key=value names flags
 * (llama.cpp's common/preset.cpp): a name without its leading dashes
 * ("ctx-size", "c", "no-mmap") or its variable ("LLAMA_ARG_CTX_SIZE");
 * *negated as for ggfit__flag_find. -1: none. */
int ggfit__flag_find_key(const char *k, bool *negated);

/* The name a printed plan gives the flag that lands at at (of the draft:
 * draft), as data/flags.tsv's prints column says ("-nkvo", "-ctkd"); a
 * string in the table. */
const char *ggfit__flag_printed(ggfit__flag_at at, bool draft);

/* The name closest to a of every name and negated name of the rows one of
 * commands takes (GGFIT_COMMAND_*; 0: every row), by edit distance, as
 * git's "did you mean"; NULL when none is close enough (more than a third
 * of a's letters apart). */
const char *ggfit__flag_nearest(const char *a, unsigned commands, char *buf, size_t n);

/* The first name of a comma list, into buf. */
const char *ggfit__flag_first(const char *list, char *buf, size_t n);

/* Whether a is one of the comma-separated names in list. */
bool ggfit__flag_named(const char *list, const char *a);

#endif
