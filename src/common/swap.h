/*
 * swap.h - llama-swap's configuration file (github.com/mostlygeek/llama-swap,
 * read at v250-5-g0bdb3720: internal/config/, internal/router/group.go), read
 * as llama-swap reads it, for the planner to know each model's command and
 * which models can be resident together. The spec this follows, rule by
 * rule: /work/notes/issue31/llama-swap.md.
 *
 * The pipeline, in llama-swap's order:
 *   1. the file's text: ${env.NAME} replaced by the variable's value, its
 *      '\' and '"' escaped (names taken from the comment-free document);
 *   2. YAML (libyaml), the first document only: anchors and aliases (an
 *      alias is a copy), merge keys "<<" (own keys win, then the earlier
 *      source; shallow), a key given twice in one mapping is an error;
 *   3. per model: its macros: block dropped, comment lines stripped from
 *      cmd and cmdStop, proxy defaulted to http://localhost:${PORT};
 *   4. the global macros in every top-level value but models:, then
 *      startPort (5800);
 *   5. per model, in byte-sorted id order: [MODEL_ID] + global macros with
 *      the model's own replacing in place or appended, substituted in all
 *      its values (a value that is exactly ${m} takes m's type); then
 *      ${PORT} (the next port) where the cmd asks for it;
 *   6. any ${name} left is an error, the typed fields decoded (unknown keys
 *      ignored), llama-swap's checks, the "(default)" group added;
 *   7. cmd split into argv as llama-swap's SanitizeCommand does (comment
 *      lines dropped, a trailing '\' a space, POSIX shell words, no
 *      expansion).
 * Not read: -config-dir merging, the matrix router (GGFIT_EUNSUPPORTED),
 * peers, profiles, selectors, apiKeys, performance, capabilities, the
 * scheduler, proxy URLs' syntax; commands are split as on POSIX (llama-swap
 * on Windows splits with its Windows dialect).
 *
 * Where llama-swap is not followed to the letter: where it walks a Go map
 * (which model or group an error names first), ids are taken in sorted and
 * groups in the file's order; only the first of yaml.v3's collected errors is
 * given, with the file's line (llama-swap's count the lines of the document
 * it re-encoded); a mapping key is its text (yaml.v3 makes {1: x} a map
 * llama-swap's checks skip: an all-digit model id turns macros off there); a
 * plain YYYY-M-D[Thh:mm...] is a timestamp by its shape, and a string field
 * keeps its text (yaml.v3 writes it again in RFC 3339); a merge source's own
 * "<<" yields to the mapping's keys (yaml.v3 lets it override them); macro
 * values are expanded once each, which differs from llama-swap's passes of
 * strings.ReplaceAll only where a replacement glues a new ${name} together
 * across its edges; an explicit tag other than !!str resolves by the text.
 *
 * Limits on hostile input, each a short error: the file at most 8 MiB;
 * nesting at most 1000 deep; the document as its aliases expand it at most
 * 64 Mi units (a node 64, a scalar its bytes more: a billion-laughs file stops
 * here, before anything is copied); macros expanding to at most 32 MiB in
 * all, one value at most 1 MiB; 1000 macros a scope; 4096 aliases and 4096
 * group members in all; everything the reader allocates at most 256 MiB. A
 * file at the limits reads in well under a second.
 */
#ifndef GGFIT_SWAP_H
#define GGFIT_SWAP_H

#include "base/base.h"

#define GGFIT__SWAP_NO_GROUP UINT32_MAX
#define GGFIT__SWAP_DEFAULT_GROUP "(default)"

typedef struct ggfit__swap_model {
    char name[256];          /* its id under models: */
    char **argv; int argc;   /* cmd after macros and ${PORT}, comment lines stripped, split
                              * as llama-swap splits it (SanitizeCommand, POSIX); argv[argc]
                              * NULL; argc 0 for an empty cmd (llama-swap: "empty command"
                              * when it starts it) */
    char **env; int n_env;   /* its env: entries, "K=V", as given (they override the inherited
                              * environment of llama-swap, which the file cannot show) */
    char *cmd;               /* cmd as stored after substitution, before splitting */
    char *cmd_stop;          /* cmdStop ("" = SIGTERM); ${PID} left in it */
    char *proxy;             /* where requests go */
    char *check_endpoint;    /* "/health" unless set; "none" skips health checks */
    char *use_model_name;    /* "" unless set */
    char **aliases; uint32_t n_aliases;  /* aliases:, then filters.setParamsByID's keys */
    int64_t ttl;             /* seconds idle before unloading; 0 = never (globalTTL applied) */
    int64_t unload_timeout;  /* seconds; the global one applied */
    int64_t concurrency_limit; /* 0 = llama-swap's default (10) */
    int port;                /* the ${PORT} it was given; 0 when its cmd asks for none */
    bool unlisted;           /* hidden from /v1/models only */
    uint32_t group;          /* index into groups; GGFIT__SWAP_NO_GROUP when in none (a member of
                              * a user group named "(default)", which llama-swap replaces) */
} ggfit__swap_model;

typedef struct ggfit__swap_group {
    char name[256];
    bool swap, exclusive, persistent;       /* absent: true, true, false (llama-swap's) */
    uint32_t *members; uint32_t n_members;  /* indices into models, in the file's order
                                             * ("(default)": sorted) */
} ggfit__swap_group;

typedef struct ggfit__swap_alias {
    const char *name;
    uint32_t model;
} ggfit__swap_alias;

typedef struct ggfit__swap {
    /* Byte-sorted by id: the only order llama-swap has (its models are a Go map; ports,
     * checks and the default group all go in sort.Strings order), so the file's order
     * would be a fact llama-swap never uses. */
    ggfit__swap_model *models; uint32_t n_models;
    /* The user's groups in the file's order, then "(default)" (always there, maybe empty):
     * the models in no group, as AddDefaultGroupToConfig adds them (every model when the
     * file has no groups). */
    ggfit__swap_group *groups; uint32_t n_groups;
    char **preload; uint32_t n_preload;     /* hooks.on_startup.preload as model ids: trimmed,
                                             * blanks dropped, aliases resolved, unknown dropped */
    int64_t start_port, global_ttl, health_check_timeout, unload_timeout;  /* seconds, ports */
    ggfit__swap_alias *by_alias;            /* every alias, sorted: ggfit__swap_find's */
    uint32_t n_by_alias;
    void *arena;                            /* owns everything above */
} ggfit__swap;

/* Reads llama-swap's config file path into out (zeroed first). Errors read as
 * llama-swap's ("model m: invalid TTL value -2", "yaml: line 7: did not find
 * expected key"), GGFIT_EIO for a file that cannot be read, GGFIT_ELIMIT past
 * a limit above, GGFIT_EUNSUPPORTED for a matrix router, GGFIT_EINVAL for the
 * rest. Environment variables come from getenv. Free with ggfit__swap_free
 * (also after a failure). */
ggfit_status ggfit__swap_read(const char *path, ggfit__swap *out, char **err);
/* The same from text[0..len), name standing for the file in messages. */
ggfit_status ggfit__swap_parse(const char *text, size_t len, const char *name, ggfit__swap *out,
                               char **err);
void ggfit__swap_free(ggfit__swap *s);

/* The model whose id or alias is name, or UINT32_MAX. */
uint32_t ggfit__swap_find(const ggfit__swap *s, const char *name);

/* Which models llama-swap stops when model `asked` is requested while the
 * models with running[m] are up (groupSwapper.EvictionFor, computed on every
 * request, also when `asked` is already up): stopped[m] set for each, before
 * `asked` starts. A model in the asked one's group goes when that group
 * swaps; a model of another group goes when the asked group is exclusive and
 * its own group is not persistent. Nothing is stopped for a model in no group
 * (llama-swap cannot start it). Both arrays have n_models entries. */
void ggfit__swap_evicts(const ggfit__swap *s, uint32_t asked, const bool *running, bool *stopped);

#endif
