/*
 * preset.h - llama-server's router presets (--models-preset FILE), read as
 * llama.cpp b10587 reads them (tools/server/server-models.cpp,
 * common/preset.cpp): an INI file whose [*] section goes to every model and
 * whose other sections are models, each turned into the flags its child
 * llama-server is started with.
 */
#ifndef GGFIT_PRESET_H
#define GGFIT_PRESET_H

#include "base/base.h"

/* One line of llama.cpp's INI (common/preset.cpp's parse_ini_from_file),
 * the grammar of its router presets and of its config.ini files alike:
 * "[name]", "key = value" (neither indented; a key [a-zA-Z_][a-zA-Z0-9_.-]*,
 * the value up to a ';' or '#' or the line's end, blanks around it
 * dropped), a comment (; or #) or a blank line, each comment or blank line
 * indentable; any other line fails the whole file. */
typedef enum ggfit__ini_kind {
    GGFIT__INI_NOTHING,       /* blank, or a comment */
    GGFIT__INI_SECTION,       /* text/n: the name (leading blanks dropped, trailing kept) */
    GGFIT__INI_KEY,           /* text/n: the key; value/value_n: its value */
    GGFIT__INI_BAD,           /* none of the four forms */
} ggfit__ini_kind;

typedef struct ggfit__ini_line {
    const char *text, *value;
    size_t n, value_n;
} ggfit__ini_line;

/* The line line[0..len) (its end not in it) into *out. */
ggfit__ini_kind ggfit__ini_parse_line(const char *line, size_t len, ggfit__ini_line *out);

/* llama.cpp's words for a bool's value (common/arg.cpp is_truthy,
 * is_falsey), exact and lower-case. */
bool ggfit__truthy(const char *v);
bool ggfit__falsey(const char *v);

#define GGFIT__PRESET_MODELS 64     /* models of one preset at most */
#define GGFIT__PRESET_KEYS 128      /* keys of one section at most */

typedef struct ggfit__preset_kv {
    char *key, *value;
} ggfit__preset_kv;

/* What a --models-dir entry gives its model: the files it found. */
enum { GGFIT__DIR_MODEL, GGFIT__DIR_MMPROJ, GGFIT__DIR_DRAFT, GGFIT__DIR_KEYS };

typedef struct ggfit__preset_section {
    char *name;                    /* canonical (a repo's quant tag upper-cased) */
    ggfit__preset_kv kv[GGFIT__PRESET_KEYS];
    uint32_t n_kv;
    char *from_dir[GGFIT__DIR_KEYS]; /* its --models-dir entry's files, or NULL */
} ggfit__preset_section;

/* A preset: [*] apart, the models in llama.cpp's order (names sorted byte
 * by byte: std::map), each section's keys sorted too. A preset may hold
 * the models of a --models-dir too (ggfit__preset_dir). */
typedef struct ggfit__preset {
    ggfit__preset_section global;
    ggfit__preset_section models[GGFIT__PRESET_MODELS];
    uint32_t n_models;
} ggfit__preset;

/* Reads path into p; a syntax error is llama.cpp's "failed to parse server
 * config file" with the line that breaks it. Free with ggfit__preset_free
 * (also after a failure). */
ggfit_status ggfit__preset_read(const char *path, ggfit__preset *p, char **err);
void ggfit__preset_free(ggfit__preset *p);

/* The models of llama-server's --models-dir DIR (common/preset.cpp
 * load_from_models_dir) added to p: each DIR/NAME.gguf a model NAME (every
 * ".gguf" taken out of the name; a file whose name holds "mmproj" or starts
 * with mtp-, dspark- or dflash- skipped), each subdirectory D a model D with
 * its model (the first shard of a split one), projector and draft; deeper
 * directories are not read. A section of p's of the same name is merged
 * over the entry, as the router merges a preset over it. llama.cpp lists
 * the directory unsorted and keeps the last file of a kind (the first
 * draft): ggfit sorts the names, and says in warn (cap bytes, "" when
 * none) which subdirectory held more than one file of a kind. */
ggfit_status ggfit__preset_dir(ggfit__preset *p, const char *dir, char *warn, size_t cap,
                               char **err);

/* The flags model k's child gets from the preset ([*], then its section:
 * the later wins), as words for ggfit's parser: "--ctx-size", "32768", ...
 * (the files of its --models-dir entry first, under them; a bool flag on
 * or off, a no-... key inverted, the preset's own keys
 * load-on-startup, stop-timeout and dedup-cache-models left out). *n words
 * into words[0..max), pointing into the preset and into buf (cap bytes: the
 * flags' names); an unknown key is llama.cpp's error, "option 'K' not
 * recognized in preset 'M'". */
ggfit_status ggfit__preset_args(const ggfit__preset *p, uint32_t k, const char **words,
                                size_t max, size_t *n, char *buf, size_t cap, char **err);

/* One key (a flag's name without dashes, or its LLAMA_ARG_ variable) and
 * its value as the words of its flag, appended to words[*n..max): 0, 1 or
 * 2, the flag's name copied into buf (*used of cap bytes taken); model
 * names the model in llama.cpp's error for a key it does not know. */
ggfit_status ggfit__preset_kv_words(const ggfit__preset_kv *kv, const char *model,
                                    const char **words, size_t max, size_t *n, char *buf,
                                    size_t *used, size_t cap, char **err);

/* Whether model k loads on startup (load-on-startup in its section, else
 * in [*]; any value but a false one is on). */
bool ggfit__preset_starts(const ggfit__preset *p, uint32_t k);

#endif
