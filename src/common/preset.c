/*
 * preset.c - llama-server's router presets (preset.h), as llama.cpp b10587
 * reads them: common/preset.cpp's parse_ini_from_file (its grammar: no
 * indented header or key, a key starting with a letter or '_', a value
 * running to the first ';' or '#', no quoting), load_from_ini (sections by
 * name, a repeated header starting its section again, keys before any
 * header a model named "default", "version" ignored, a repo's quant tag
 * upper-cased) and common_preset::to_args (a bool flag on or off, a no-...
 * key inverted).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/llama_args.h"
#include "common/preset.h"

#define PRESET_FILE_MAX ((size_t)4 << 20)

/* The whole of a regular file of at most PRESET_FILE_MAX bytes, NUL
 * added; llama.cpp's messages for a file missing or unreadable. */
static ggfit_status read_text(const char *path, char **out, size_t *size, char **err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return ggfit__fail(err, GGFIT_EIO, "preset file does not exist: %s", path);
    if (!S_ISREG(st.st_mode))
        return ggfit__fail(err, GGFIT_EIO, "%s: not a regular file (a preset is an INI file)",
                           path);
    if ((uint64_t)st.st_size > PRESET_FILE_MAX)
        return ggfit__fail(err, GGFIT_EINVAL, "%s: %lld bytes, more than a preset's %zu",
                           path, (long long)st.st_size, PRESET_FILE_MAX);
    FILE *f = fopen(path, "rb");
    if (!f)
        return ggfit__fail(err, GGFIT_EIO, "failed to open server preset file: %s", path);
    char *text = ggfit__malloc((size_t)st.st_size + 1);
    size_t n = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
    bool bad = ferror(f);
    fclose(f);
    if (!text)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    if (bad) {
        ggfit_free(text);
        return ggfit__fail(err, GGFIT_EIO, "failed to open server preset file: %s", path);
    }
    text[n] = '\0';
    *out = text;
    *size = n;
    return GGFIT_OK;
}

static void section_clear(ggfit__preset_section *s)
{
    for (uint32_t i = 0; i < s->n_kv; i++) {
        ggfit_free(s->kv[i].key);
        ggfit_free(s->kv[i].value);
    }
    s->n_kv = 0;
}

static void dir_clear(ggfit__preset_section *s)
{
    for (int k = 0; k < GGFIT__DIR_KEYS; k++) {
        ggfit_free(s->from_dir[k]);
        s->from_dir[k] = NULL;
    }
}

void ggfit__preset_free(ggfit__preset *p)
{
    section_clear(&p->global);
    for (uint32_t k = 0; k < p->n_models; k++) {
        section_clear(&p->models[k]);
        dir_clear(&p->models[k]);
        ggfit_free(p->models[k].name);
    }
    memset(p, 0, sizeof *p);
}

/* A repo's name with its quant tag as llama.cpp keys it (canonical_tag):
 * the tag after the last ':', or its part after the first '-' or '.' that
 * leaves only letters, digits and '_', upper-cased. */
static char *canonical(const char *name)
{
    const char *colon = strrchr(name, ':');
    char *out = ggfit__strndup(name, strlen(name));
    if (!out || !colon || !strcmp(name, "*") || !strcmp(name, "default"))
        return out;
    const char *tag = colon + 1;
    for (const char *c = tag; *c; c++)
        if ((*c == '-' || *c == '.') && c[1] && strspn(c + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                              "abcdefghijklmnopqrstuvwxyz"
                                                              "0123456789_") == strlen(c + 1)) {
            tag = c + 1;
            break;
        }
    size_t head = (size_t)(colon + 1 - name);
    snprintf(out + head, strlen(name) + 1 - head, "%s", tag);
    for (char *c = out + head; *c; c++)
        *c = (char)toupper((unsigned char)*c);
    return out;
}

/* The section named name (made when new; a header met again empties it). */
static ggfit__preset_section *section_of(ggfit__preset *p, const char *name, bool header,
                                         char **err)
{
    if (!strcmp(name, "*")) {
        if (header)
            section_clear(&p->global);
        return &p->global;
    }
    char *canon = canonical(name);
    if (!canon) {
        ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        return NULL;
    }
    for (uint32_t k = 0; k < p->n_models; k++)
        if (!strcmp(p->models[k].name, canon)) {
            ggfit_free(canon);
            if (header)
                section_clear(&p->models[k]);
            return &p->models[k];
        }
    if (p->n_models == GGFIT__PRESET_MODELS) {
        ggfit_free(canon);
        ggfit__fail(err, GGFIT_EINVAL, "more than %d models in the preset",
                    GGFIT__PRESET_MODELS);
        return NULL;
    }
    ggfit__preset_section *s = &p->models[p->n_models++];
    s->name = canon;
    return s;
}

static ggfit_status set_key(ggfit__preset_section *s, const char *key, size_t kn,
                            const char *value, size_t vn, const char *path, char **err)
{
    for (uint32_t i = 0; i < s->n_kv; i++)
        if (strlen(s->kv[i].key) == kn && !strncmp(s->kv[i].key, key, kn)) {
            char *v = ggfit__strndup(value, vn);   /* the last one given wins */
            if (!v)
                return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
            ggfit_free(s->kv[i].value);
            s->kv[i].value = v;
            return GGFIT_OK;
        }
    if (s->n_kv == GGFIT__PRESET_KEYS)
        return ggfit__fail(err, GGFIT_EINVAL, "%s: more than %d keys in section [%s]", path,
                           GGFIT__PRESET_KEYS, s->name ? s->name : "*");
    ggfit__preset_kv *kv = &s->kv[s->n_kv];
    kv->key = ggfit__strndup(key, kn);
    kv->value = ggfit__strndup(value, vn);
    if (!kv->key || !kv->value) {
        ggfit_free(kv->key);
        ggfit_free(kv->value);
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    }
    s->n_kv++;
    return GGFIT_OK;
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const ggfit__preset_kv *)a)->key, ((const ggfit__preset_kv *)b)->key);
}

static int section_cmp(const void *a, const void *b)
{
    return strcmp(((const ggfit__preset_section *)a)->name,
                  ((const ggfit__preset_section *)b)->name);
}

bool ggfit__truthy(const char *v)
{
    return !strcmp(v, "on") || !strcmp(v, "enabled") || !strcmp(v, "true") || !strcmp(v, "1");
}

bool ggfit__falsey(const char *v)
{
    return !strcmp(v, "off") || !strcmp(v, "disabled") || !strcmp(v, "false") ||
           !strcmp(v, "0");
}

static bool ini_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* [a-zA-Z0-9_.-]: a key's letters after its first ([a-zA-Z_]) */
static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
}

ggfit__ini_kind ggfit__ini_parse_line(const char *line, size_t len, ggfit__ini_line *out)
{
    const char *q = line, *end = line + len;
    memset(out, 0, sizeof *out);
    ggfit__ini_kind kind = GGFIT__INI_NOTHING;
    if (q < end && *q == '[') {
        q++;
        while (q < end && ini_blank(*q))
            q++;
        out->text = q;
        while (q < end && *q != ']')
            q++;
        if (q == end || q == out->text)
            return GGFIT__INI_BAD;
        out->n = (size_t)(q - out->text);
        q++;
        kind = GGFIT__INI_SECTION;
    } else if (q < end && (ident_char(*q) && !(*q >= '0' && *q <= '9') && *q != '.' &&
                           *q != '-')) {
        out->text = q;
        while (q < end && ident_char(*q))
            q++;
        out->n = (size_t)(q - out->text);
        while (q < end && ini_blank(*q))
            q++;
        if (q == end || *q != '=')
            return GGFIT__INI_BAD;
        q++;
        while (q < end && ini_blank(*q))
            q++;
        out->value = q;
        while (q < end && *q != ';' && *q != '#')
            q++;
        const char *v_end = q;
        while (v_end > out->value && ini_blank(v_end[-1]))
            v_end--;
        out->value_n = (size_t)(v_end - out->value);
        kind = GGFIT__INI_KEY;
    }
    /* the rest: blanks, then a comment or nothing */
    while (q < end && ini_blank(*q))
        q++;
    return q == end || *q == ';' || *q == '#' ? kind : GGFIT__INI_BAD;
}

/* One line (without its end) into p; false: not one of the grammar's four
 * forms. */
static bool parse_line(ggfit__preset *p, const char *line, ggfit__preset_section **cur,
                       const char *path, ggfit_status *rc, char **err)
{
    ggfit__ini_line l;
    switch (ggfit__ini_parse_line(line, strlen(line), &l)) {
    case GGFIT__INI_BAD:
        return false;
    case GGFIT__INI_NOTHING:
        return true;
    case GGFIT__INI_SECTION: {
        char *n = ggfit__strndup(l.text, l.n);
        if (!n) {
            *rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
            return true;
        }
        *cur = section_of(p, n, true, err);
        ggfit_free(n);
        if (!*cur)
            *rc = err && *err && strstr(*err, "memory") ? GGFIT_ENOMEM : GGFIT_EINVAL;
        return true;
    }
    case GGFIT__INI_KEY:
        break;
    }
    if (l.n == 7 && !strncmp(l.text, "version", 7))
        return true;   /* reserved */
    if (!*cur && !(*cur = section_of(p, "default", false, err))) {
        *rc = GGFIT_EINVAL;
        return true;
    }
    *rc = set_key(*cur, l.text, l.n, l.value, l.value_n, path, err);
    return true;
}

ggfit_status ggfit__preset_read(const char *path, ggfit__preset *p, char **err)
{
    memset(p, 0, sizeof *p);
    size_t size = 0;
    char *text = NULL;
    ggfit_status rc = read_text(path, &text, &size, err);
    if (rc)
        return rc;
    if (memchr(text, '\0', size)) {
        ggfit_free(text);
        return ggfit__fail(err, GGFIT_EINVAL, "failed to parse server config file: %s: a NUL "
                                              "byte in it (not a text file)", path);
    }
    ggfit__preset_section *cur = NULL;
    unsigned line_no = 0;
    for (char *s = text; *s && !rc;) {
        size_t len = strcspn(s, "\r\n");
        char *next = s + len + (s[len] == '\r' && s[len + 1] == '\n' ? 2 : s[len] ? 1 : 0);
        s[len] = '\0';
        line_no++;
        if (!parse_line(p, s, &cur, path, &rc, err))
            rc = ggfit__fail(err, GGFIT_EINVAL, "failed to parse server config file: %s: line "
                                                "%u: '%.60s' (a [section], a key = value "
                                                "with the key's name unindented and without "
                                                "dashes, or a ; comment)", path, line_no, s);
        s = next;
    }
    ggfit_free(text);
    if (rc)
        return rc;
    /* llama.cpp holds them in std::maps: sorted, and an empty "default"
     * (keys before any header) dropped */
    for (uint32_t k = 0; k < p->n_models; k++)
        if (!strcmp(p->models[k].name, "default") && !p->models[k].n_kv) {
            ggfit_free(p->models[k].name);
            p->models[k] = p->models[--p->n_models];
            memset(&p->models[p->n_models], 0, sizeof p->models[0]);
            k--;
        }
    qsort(p->global.kv, p->global.n_kv, sizeof p->global.kv[0], kv_cmp);
    for (uint32_t k = 0; k < p->n_models; k++)
        qsort(p->models[k].kv, p->models[k].n_kv, sizeof p->models[k].kv[0], kv_cmp);
    qsort(p->models, p->n_models, sizeof p->models[0], section_cmp);
    return GGFIT_OK;
}

/* The first name of a comma list, into buf. */
static const char *first_name(const char *list, char *buf, size_t n)
{
    return ggfit__flag_first(list, buf, n);
}

ggfit_status ggfit__preset_kv_words(const ggfit__preset_kv *kv, const char *model,
                                    const char **words, size_t max, size_t *n, char *buf,
                                    size_t *used, size_t cap, char **err)
{
    const char *k = kv->key;
    if (!strcmp(k, "load-on-startup") || !strcmp(k, "stop-timeout") ||
        !strcmp(k, "dedup-cache-models"))
        return GGFIT_OK;   /* the router's own: no flag of the child's */
    bool negated = false, env_no = false;
    ggfit__flag f;
    int row = ggfit__flag_find_key(k, &negated);
    if (row < 0 && !strncmp(k, "LLAMA_ARG_NO_", 13)) {
        /* LLAMA_ARG_NO_X names X's flag, not inverted (llama.cpp's quirk:
         * LLAMA_ARG_NO_MMAP = 1 gives --mmap) */
        char plain[128];
        snprintf(plain, sizeof plain, "LLAMA_ARG_%s", k + 13);
        row = ggfit__flag_find_key(plain, &negated);
        env_no = true;
    }
    if (row < 0 || !ggfit__flag_row((size_t)row, &f) || !f.llama ||
        !(f.programs & GGFIT_PROGRAM_SERVER))
        return ggfit__fail(err, GGFIT_EINVAL, "option '%.60s' not recognized in preset '%.80s' "
                                              "(a llama-server flag's name without its dashes, "
                                              "or its LLAMA_ARG_ variable)", k, model);
    (void)env_no;
    char name[64];
    if (*n + 2 > max)
        return ggfit__fail(err, GGFIT_EINVAL, "preset '%.80s': too many options", model);
    if (f.values == 0) {
        bool on = !ggfit__falsey(kv->value);
        if (negated)
            on = !ggfit__truthy(kv->value);
        const char *spelled = on ? f.names : f.negated;
        if (!spelled[0])
            return GGFIT_OK;   /* off, and no --no- form: the flag left out */
        first_name(spelled, name, sizeof name);
    } else {
        first_name(f.names, name, sizeof name);
    }
    size_t len = strlen(name) + 1;
    if (*used + len > cap)
        return ggfit__fail(err, GGFIT_EINVAL, "preset '%.80s': too many options", model);
    memcpy(buf + *used, name, len);
    words[(*n)++] = buf + *used;
    *used += len;
    if (f.values)
        words[(*n)++] = kv->value;
    return GGFIT_OK;
}

ggfit_status ggfit__preset_args(const ggfit__preset *p, uint32_t k, const char **words,
                                size_t max, size_t *n, char *buf, size_t cap, char **err)
{
    size_t used = 0;
    *n = 0;
    /* the --models-dir entry's files under everything else */
    static const char *const dir_keys[GGFIT__DIR_KEYS] = { "model", "mmproj", "model-draft" };
    for (int j = 0; j < GGFIT__DIR_KEYS; j++) {
        char key[16];
        snprintf(key, sizeof key, "%s", dir_keys[j]);
        ggfit__preset_kv kv = { key, p->models[k].from_dir[j] };
        ggfit_status rc = kv.value ? ggfit__preset_kv_words(&kv, p->models[k].name, words, max, n, buf,
                                               &used, cap, err)
                                   : GGFIT_OK;
        if (rc)
            return rc;
    }
    const ggfit__preset_section *s[2] = { &p->global, &p->models[k] };
    /* [*] first, the model's section after it: the later flag wins */
    for (int j = 0; j < 2; j++)
        for (uint32_t i = 0; i < s[j]->n_kv; i++) {
            ggfit_status rc = ggfit__preset_kv_words(&s[j]->kv[i], p->models[k].name, words, max, n, buf,
                                        &used, cap, err);
            if (rc)
                return rc;
        }
    return GGFIT_OK;
}

bool ggfit__preset_starts(const ggfit__preset *p, uint32_t k)
{
    const ggfit__preset_section *s[2] = { &p->global, &p->models[k] };
    bool on = false;
    for (int j = 0; j < 2; j++)
        for (uint32_t i = 0; i < s[j]->n_kv; i++)
            if (!strcmp(s[j]->kv[i].key, "load-on-startup"))
                on = !ggfit__falsey(s[j]->kv[i].value);
    return on;
}

/* ---- --models-dir ------------------------------------------------------ */

#define DIR_ENTRIES 4096   /* names read from one directory at most */

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir, sorted (n of them, each and the array freed by
 * names_free); "." and ".." left out. */
static ggfit_status names_of(const char *dir, char ***out, size_t *n, char **err)
{
    DIR *d = opendir(dir);
    *out = NULL;
    *n = 0;
    if (!d)
        return ggfit__fail(err, GGFIT_EIO, "error: '%s' does not exist or is not a directory",
                           dir);
    char **names = ggfit__calloc(DIR_ENTRIES, sizeof *names);
    ggfit_status rc = names ? GGFIT_OK : ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (*n == DIR_ENTRIES)
            rc = ggfit__fail(err, GGFIT_EINVAL, "%s: more than %d entries (give the models "
                                                "in a --models-preset file)", dir, DIR_ENTRIES);
        else if (!(names[*n] = ggfit__strndup(e->d_name, strlen(e->d_name))))
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        else
            (*n)++;
    }
    closedir(d);
    if (names)
        qsort(names, *n, sizeof *names, name_cmp);
    *out = names;
    return rc;
}

static void names_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        ggfit_free(names[i]);
    ggfit_free(names);
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

static bool is_draft(const char *name)
{
    return !strncmp(name, "mtp-", 4) || !strncmp(name, "dspark-", 7) ||
           !strncmp(name, "dflash-", 7);
}

/* 1: a regular file (or a link to one), 2: a directory, 0: else. */
static int kind_of(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    return S_ISREG(st.st_mode) ? 1 : S_ISDIR(st.st_mode) ? 2 : 0;
}

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = ggfit__malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", dir, name);
    return s;
}

/* The entry name (files[] its paths, owned by the caller) merged into p. */
static ggfit_status dir_entry(ggfit__preset *p, const char *name, char **files, char **err)
{
    ggfit__preset_section *s = NULL;
    for (uint32_t k = 0; k < p->n_models && !s; k++)
        if (!strcmp(p->models[k].name, name))
            s = &p->models[k];
    if (!s) {
        if (p->n_models == GGFIT__PRESET_MODELS)
            return ggfit__fail(err, GGFIT_EINVAL, "more than %d models in the preset and the "
                                                  "models directory", GGFIT__PRESET_MODELS);
        s = &p->models[p->n_models];
        if (!(s->name = ggfit__strndup(name, strlen(name))))
            return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        p->n_models++;
    }
    for (int k = 0; k < GGFIT__DIR_KEYS; k++) {
        ggfit_free(s->from_dir[k]);
        s->from_dir[k] = files[k];
        files[k] = NULL;
    }
    return GGFIT_OK;
}

/* Subdirectory sub's files: its projector (the last), draft (the first),
 * model (the last first shard, else the last other file) into files. */
static ggfit_status dir_sub(const char *sub, char **files, char *warn, size_t cap,
                            char **err)
{
    char **names;
    size_t n;
    ggfit_status rc = names_of(sub, &names, &n, err);
    const char *pick[4] = { NULL, NULL, NULL, NULL };   /* mmproj, draft, shard, model */
    int seen[4] = { 0, 0, 0, 0 };
    for (size_t i = 0; !rc && i < n; i++) {
        if (!ends_with(names[i], ".gguf"))
            continue;
        char *path = path_join(sub, names[i]);
        if (!path) {
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
            break;
        }
        int kind = kind_of(path);
        ggfit_free(path);
        if (kind != 1)
            continue;
        int k = strstr(names[i], "mmproj") ? 0 : is_draft(names[i]) ? 1
                : strstr(names[i], "-00001-of-") ? 2 : 3;
        seen[k]++;
        if (k != 1 || !pick[1])
            pick[k] = names[i];
    }
    static const char *const kinds[4] = { "projectors", "drafts", "first shards", "models" };
    for (int k = 0; !rc && k < 4; k++) {
        size_t used = strlen(warn);
        if (seen[k] > 1 && used + 1 < cap)
            snprintf(warn + used, cap - used, "%s--models-dir: %s holds %d %s; llama-server "
                     "takes one by the order the directory lists them (ggfit planned %s)",
                     used ? "\n" : "", sub, seen[k], kinds[k], pick[k]);
    }
    const char *model = pick[2] ? pick[2] : pick[3];
    if (!rc && model) {
        char *f[GGFIT__DIR_KEYS] = { path_join(sub, model),
                                     pick[0] ? path_join(sub, pick[0]) : NULL,
                                     pick[1] ? path_join(sub, pick[1]) : NULL };
        if (!f[0] || (pick[0] && !f[1]) || (pick[1] && !f[2]))
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        for (int k = 0; k < GGFIT__DIR_KEYS; k++)
            if (rc)
                ggfit_free(f[k]);
            else
                files[k] = f[k];
    }
    names_free(names, n);
    return rc;
}

ggfit_status ggfit__preset_dir(ggfit__preset *p, const char *dir, char *warn, size_t cap,
                               char **err)
{
    if (cap)
        warn[0] = '\0';
    if (kind_of(dir) != 2)
        return ggfit__fail(err, GGFIT_EIO, "error: '%s' does not exist or is not a directory",
                           dir);
    char **names;
    size_t n;
    ggfit_status rc = names_of(dir, &names, &n, err);
    for (size_t i = 0; !rc && i < n; i++) {
        char *path = path_join(dir, names[i]), *files[GGFIT__DIR_KEYS] = { NULL, NULL, NULL };
        if (!path) {
            rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
            break;
        }
        int kind = kind_of(path);
        char name[256];
        if (kind == 1 && ends_with(names[i], ".gguf") && !strstr(names[i], "mmproj") &&
            !is_draft(names[i])) {
            /* the name without any ".gguf" (string_replace_all) */
            size_t o = 0;
            for (const char *c = names[i]; *c && o + 1 < sizeof name;)
                if (!strncmp(c, ".gguf", 5))
                    c += 5;
                else
                    name[o++] = *c++;
            name[o] = '\0';
            files[GGFIT__DIR_MODEL] = path;
            path = NULL;
            rc = dir_entry(p, name, files, err);
        } else if (kind == 2) {
            rc = dir_sub(path, files, warn, cap, err);
            if (!rc && files[GGFIT__DIR_MODEL])
                rc = dir_entry(p, names[i], files, err);
        }
        for (int k = 0; k < GGFIT__DIR_KEYS; k++)
            ggfit_free(files[k]);
        ggfit_free(path);
    }
    names_free(names, n);
    if (!rc)
        qsort(p->models, p->n_models, sizeof p->models[0], section_cmp);
    return rc;
}
