/*
 * argv.c - a plan as the command line of the llama.cpp program that will
 * run it: every setting that changes memory use and that the plan assumed
 * (the fitted ones, the user's, and the defaults that differ between
 * llama.cpp's programs), so that `ggfit ... | xargs llama-server -m M`
 * uses exactly the memory ggfit projected. llama-fit-params' own line is
 * ggfit_fit_args (render/flags.c); this is the plan's.
 *
 * Words are printed so that both `xargs` and `$(...)` pass them unchanged:
 * the fit's -ot patterns are written without backslashes or quotes (a dot
 * as [.], no trailing .*, which std::regex_search does not need), and a
 * word that still holds a character either would change is single-quoted.
 * That bare line is for pipes; a person at a terminal gets the whole
 * command instead (ggfit_plan_command: the program, the model, the same
 * words), quoted for a POSIX shell, as `( | [ ] * $` in an -ot pattern
 * are a shell's syntax when pasted.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "render/render.h"
#include "common/llama_args.h"
#include "common/params.h"
#include "llama/patterns.h"

typedef struct words {
    char **v;
    size_t n, cap;
    bool oom;
} words;

static void add(words *w, const char *fmt, ...) GGFIT_PRINTF(2, 3);

/* A flag by the name the table prints it under (data/flags.tsv, prints):
 * the target's, and the draft's. llama-bench's own spellings (-mmp, -embd)
 * are its parser's, not in the table. */
#define NAME(at) ggfit__flag_printed(GGFIT__AT_##at, false)
#define DRAFT_NAME(at) ggfit__flag_printed(GGFIT__AT_##at, true)

static void add(words *w, const char *fmt, ...)
{
    if (w->oom)
        return;
    if (w->n + 2 > w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 32;
        char **v = ggfit__realloc(w->v, cap * sizeof *v);
        if (!v) {
            w->oom = true;
            return;
        }
        w->v = v;
        v[w->n] = NULL;   /* whole even if this word's allocation fails */
        w->cap = cap;
    }
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = len >= 0 ? ggfit__malloc((size_t)len + 1) : NULL;
    if (!s) {
        va_end(aq);
        w->oom = true;
        return;
    }
    vsnprintf(s, (size_t)len + 1, fmt, aq);
    va_end(aq);
    w->v[w->n++] = s;
    w->v[w->n] = NULL;
}

void ggfit_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

/* A regex written without backslashes where that means the same: "\." is
 * "[.]" and a trailing ".*" adds nothing to a search. */
static void plain_regex(char *out, size_t n, const char *re)
{
    size_t k = 0, len = strlen(re);
    if (len >= 2 && !strcmp(re + len - 2, ".*") && (len < 3 || re[len - 3] != '\\'))
        len -= 2;
    for (size_t i = 0; i < len && k + 4 < n; i++) {
        if (re[i] == '\\' && i + 1 < len && re[i + 1] == '.') {
            memcpy(out + k, "[.]", 3);
            k += 3;
            i++;
        } else {
            out[k++] = re[i];
        }
    }
    out[k] = '\0';
}

/* A pattern of one block, "blk\.N\.TAIL": N and TAIL. */
static bool block_pattern(const char *re, uint32_t *il, const char **tail)
{
    if (strncmp(re, "blk\\.", 5) || re[5] < '0' || re[5] > '9')
        return false;
    char *end;
    unsigned long n = strtoul(re + 5, &end, 10);
    if (n > 100000 || strncmp(end, "\\.", 2))
        return false;
    *il = (uint32_t)n;
    *tail = end + 2;
    return true;
}

/* The blocks lo..hi as one regex alternative per decade: 13..35 is
 * "1[3-9]|2[0-9]|3[0-5]". */
static void range_regex(ggfit_sb *sb, uint32_t lo, uint32_t hi)
{
    bool first = true;
    for (uint32_t d = lo / 10; d <= hi / 10; d++) {
        uint32_t a = d * 10 > lo ? d * 10 : lo, b = d * 10 + 9 < hi ? d * 10 + 9 : hi;
        ggfit__sb_printf(sb, "%s", first ? "" : "|");
        first = false;
        if (d)
            ggfit__sb_printf(sb, "%u", d);
        if (a == b)
            ggfit__sb_printf(sb, "%u", a % 10);
        else
            ggfit__sb_printf(sb, "[%u-%u]", a % 10, b % 10);
    }
}

/* The overrides, -cmoe and -ncmoe as one -ot value (llama-bench: groups of
 * one, ';' between overrides). Runs of consecutive blocks with the same
 * pattern and buffer become one pattern over the range, as the fit's
 * per-block patterns are printed by llama.cpp one by one. -cmoe and -ncmoe
 * stay flags of their own where the program has them. */
static void overrides(words *w, const ggfit_params *p, bool bench, uint32_t n_layer)
{
    ggfit_sb sb = {0};
    char re[600];
    const char *sep = bench ? ";" : ",";
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->n_overrides; i++, k++) {
        const ggfit_override *o = &p->overrides[i];
        uint32_t il, jl;
        const char *tail, *tail2;
        uint32_t j = i;
        if (block_pattern(o->pattern, &il, &tail)) {
            while (j + 1 < p->n_overrides &&
                   block_pattern(p->overrides[j + 1].pattern, &jl, &tail2) &&
                   jl == il + (j + 1 - i) && !strcmp(tail, tail2) &&
                   !strcmp(o->buffer, p->overrides[j + 1].buffer))
                j++;
        }
        if (j > i) {
            ggfit__sb_printf(&sb, "%sblk[.](", k ? sep : "");
            range_regex(&sb, il, il + (j - i));
            plain_regex(re, sizeof re, tail);
            ggfit__sb_printf(&sb, ")[.]%s=%s", re, o->buffer);
            i = j;
            continue;
        }
        plain_regex(re, sizeof re, o->pattern);
        ggfit__sb_printf(&sb, "%s%s=%s", k ? sep : "", re, o->buffer);
    }
    if (bench && p->cpu_moe) {
        plain_regex(re, sizeof re, GGFIT_FFN_EXPS_REGEX);
        ggfit__sb_printf(&sb, "%s%s=CPU", k++ ? sep : "", re);
    }
    bool oom = sb.oom;
    char *s = ggfit__sb_take(&sb);   /* NULL when empty, or out of memory */
    if (oom || (k && !s)) {
        w->oom = true;
        free(s);
        return;
    }
    if (k) {
        add(w, "%s", NAME(OVERRIDE_TENSOR));
        add(w, "%s", s);
    }
    free(s);
    if (p->cpu_moe && !bench)
        add(w, "%s", NAME(CPU_MOE));
    if (p->n_cpu_moe && !p->cpu_moe) {
        /* more layers than the model has is every layer: print that */
        add(w, "%s", NAME(N_CPU_MOE));
        add(w, "%u", p->n_cpu_moe < n_layer ? p->n_cpu_moe : n_layer);
    }
}

static const char *type_name(uint32_t t)
{
    static char buf[GGFIT_TYPE_COUNT][16];
    const char *n = ggfit_type_name(t);
    if (!n || t >= GGFIT_TYPE_COUNT)
        return "f16";
    size_t i = 0;
    for (; n[i] && i + 1 < sizeof buf[t]; i++)
        buf[t][i] = (char)(n[i] >= 'A' && n[i] <= 'Z' ? n[i] - 'A' + 'a' : n[i]);
    buf[t][i] = '\0';
    return buf[t];
}

/* The flags the plan chose, and the memory flags it assumed. */
static const ggfit_params *chosen(const ggfit_plan *pl)
{
    if (pl->has_alternative)
        return &pl->alternative.params;
    if (pl->print_memory)
        return &pl->asked;
    return &pl->fit.params;
}

char **ggfit_plan_argv(const ggfit_plan *pl, ggfit_program prog, size_t *n_out)
{
    words w = {0};
    const ggfit_params *p = chosen(pl);
    ggfit_params def;   /* the defaults compared with; its overrides unused */
    ggfit__params_init_head(&def);
    bool bench = prog == GGFIT_FOR_BENCH;
    if (n_out)
        *n_out = 0;
    if (prog == GGFIT_FOR_FIT_PARAMS) {
        /* llama-fit-params' own line, split into words as a shell would */
        const ggfit_fit_result *r = pl->has_alternative ? &pl->alternative : &pl->fit;
        char *line = ggfit_fit_args(r, pl->devices, pl->n_devices);
        if (!line)
            return NULL;
        for (char *s = line; *s;) {
            while (*s == ' ')
                s++;
            if (!*s)
                break;
            bool quoted = *s == '"';
            char *start = s + quoted, *end = quoted ? strchr(start, '"') : strchr(start, ' ');
            if (!end)
                end = start + strlen(start);
            add(&w, "%.*s", (int)(end - start), start);
            s = *end ? end + 1 : end;
        }
        free(line);
        goto done;
    }

    /* rpc-servers the devices came from, each once */
    ggfit_sb rpc = {0};
    size_t n_rpc = 0;
    for (size_t d = 0; d < pl->n_devices; d++) {
        const ggfit_device *dv = &pl->devices[d];
        bool dup = false;
        for (size_t e = 0; e < d && !dup; e++)
            dup = !strcmp(pl->devices[e].endpoint, dv->endpoint);
        if (dv->kind == GGFIT_BACKEND_RPC && dv->endpoint[0] && !dup)
            ggfit__sb_printf(&rpc, "%s%s", n_rpc++ ? "," : "", dv->endpoint);
    }
    w.oom |= rpc.oom;
    char *eps = ggfit__sb_take(&rpc);
    if (n_rpc && eps) {
        add(&w, "%s", NAME(RPC));
        add(&w, "%s", eps);
    }
    free(eps);

    if (!bench) {
        add(&w, "%s", NAME(CTX));
        add(&w, "%u", p->n_ctx);
    }
    add(&w, "%s", NAME(NGL));
    if (p->n_gpu_layers == GGFIT_NGL_ALL)
        add(&w, bench ? "999" : "all");
    else if (p->n_gpu_layers == GGFIT_NGL_AUTO)   /* with the fit off: every layer */
        add(&w, bench ? "99" : "all");
    else
        add(&w, "%d", p->n_gpu_layers);
    size_t nd = pl->n_devices;
    while (nd > 1 && p->tensor_split[nd - 1] == 0.0f)
        nd--;
    /* "-ts 1,0" is "-ts 1": everything on the first device, which no -ts
     * (a split by free memory) is not */
    if (nd > 1 || (nd == 1 && pl->n_devices > 1 && p->tensor_split[0] != 0.0f)) {
        ggfit_sb sb = {0};
        for (size_t d = 0; d < nd; d++)
            ggfit__sb_printf(&sb, "%s%g", d ? (bench ? "/" : ",") : "", p->tensor_split[d]);
        char *ts = ggfit__sb_take(&sb);
        if (ts) {
            add(&w, "%s", NAME(TENSOR_SPLIT));
            add(&w, "%s", ts);
        }
        free(ts);
    }
    overrides(&w, p, bench, pl->n_layer);
    if (p->split_mode != def.split_mode) {
        add(&w, "%s", NAME(SPLIT_MODE));
        add(&w, "%s", p->split_mode == GGFIT_SPLIT_NONE ? "none" : "row");
    }
    if (p->main_gpu != def.main_gpu) {
        add(&w, "%s", NAME(MAIN_GPU));
        add(&w, "%d", p->main_gpu);
    }
    if (p->n_batch != def.n_batch) {
        add(&w, "%s", NAME(BATCH));
        add(&w, "%u", p->n_batch);
    }
    if (p->n_ubatch != def.n_ubatch) {
        add(&w, "%s", NAME(UBATCH));
        add(&w, "%u", p->n_ubatch);
    }
    if (p->n_threads) {   /* as given: no effect on memory, the CPU's speed */
        add(&w, "%s", NAME(THREADS));
        add(&w, "%u", p->n_threads);
    }
    /* llama-server's default is -np auto (4 slots): say what was planned */
    bool server = prog == GGFIT_FOR_DEFAULT || prog == GGFIT_FOR_SERVER;
    bool serves = ggfit__serves(prog);   /* llama-cli runs llama-server's code */
    if (!bench && (server || p->n_seq != def.n_seq)) {
        add(&w, "%s", NAME(PARALLEL));
        add(&w, "%u", p->n_seq);
    }
    if (p->kv_unified && !bench)
        add(&w, "%s", NAME(KV_UNIFIED));
    if (p->flash_attn != GGFIT_FA_AUTO) {
        add(&w, "%s", NAME(FLASH_ATTN));
        add(&w, bench ? (p->flash_attn == GGFIT_FA_ON ? "1" : "0")
                      : (p->flash_attn == GGFIT_FA_ON ? "on" : "off"));
    }
    if (p->type_k != def.type_k) {
        add(&w, "%s", NAME(TYPE_K));
        add(&w, "%s", type_name(p->type_k));
    }
    if (p->type_v != def.type_v) {
        add(&w, "%s", NAME(TYPE_V));
        add(&w, "%s", type_name(p->type_v));
    }
    if (p->no_kv_offload) {
        add(&w, "%s", NAME(KV_OFFLOAD));
        if (bench)
            add(&w, "1");
    }
    if (p->swa_full && !bench)
        add(&w, "%s", NAME(SWA_FULL));
    if (!p->use_mmap) {
        if (bench) {
            add(&w, "-mmp");
            add(&w, "0");
        } else {
            add(&w, "%s", NAME(MMAP));
        }
    }
    if (p->no_repack && !bench)
        add(&w, "%s", NAME(REPACK));
    if (p->no_host) {
        add(&w, "%s", NAME(NO_HOST));
        if (bench)
            add(&w, "1");
    }
    /* llama-server's embedding modes (llama-bench: -embd 1) */
    static const char *const pooling[] = { "none", "mean", "cls", "last", "rank" };
    bool rerank = p->embeddings && p->pooling == GGFIT_POOLING_RANK;
    if (p->embeddings && bench) {
        add(&w, "-embd");
        add(&w, "1");
    } else if (rerank && server) {
        add(&w, "%s", NAME(RERANK));
    } else if (p->embeddings && server) {
        add(&w, "%s", NAME(EMBEDDINGS));
    }
    /* --for server: the prompt cache planned, when not llama-server's 8192 */
    if (serves && p->cache_ram_mib != 8192) {
        add(&w, "%s", NAME(CACHE_RAM));
        add(&w, "%d", p->cache_ram_mib);
    }
    if (server && !rerank && p->pooling >= GGFIT_POOLING_NONE &&
        p->pooling <= GGFIT_POOLING_RANK) {
        add(&w, "%s", NAME(POOLING));
        add(&w, "%s", pooling[p->pooling]);
    }
    /* --for server -md: the draft model and the draft's flags planned */
    if (serves && pl->has_draft) {
        const ggfit_params *d = &pl->draft_params;
        bool md = pl->draft_model != NULL;   /* else an MTP context */
        if (md) {
            add(&w, "%s", DRAFT_NAME(DRAFT_MODEL));
            add(&w, "%s", pl->draft_model);
        }
        if (md && d->n_gpu_layers != GGFIT_NGL_AUTO) {
            add(&w, "%s", DRAFT_NAME(NGL));
            if (d->n_gpu_layers == GGFIT_NGL_ALL)
                add(&w, "all");
            else
                add(&w, "%d", d->n_gpu_layers);
        }
        if (d->type_k != def.type_k) {
            add(&w, "%s", DRAFT_NAME(TYPE_K));
            add(&w, "%s", type_name(d->type_k));
        }
        if (d->type_v != def.type_v) {
            add(&w, "%s", DRAFT_NAME(TYPE_V));
            add(&w, "%s", type_name(d->type_v));
        }
        if (md && d->n_overrides) {
            ggfit_sb ot = {0};
            for (uint32_t i = 0; i < d->n_overrides; i++)
                ggfit__sb_printf(&ot, "%s%s=%s", i ? "," : "", d->overrides[i].pattern,
                                 d->overrides[i].buffer);
            w.oom |= ot.oom;
            char *s = ggfit__sb_take(&ot);
            if (s) {
                add(&w, "%s", DRAFT_NAME(OVERRIDE_TENSOR));
                add(&w, "%s", s);
            }
            free(s);
        }
        if (md && d->cpu_moe) {
            add(&w, "%s", DRAFT_NAME(CPU_MOE));
        } else if (md && d->n_cpu_moe) {
            add(&w, "%s", DRAFT_NAME(N_CPU_MOE));
            add(&w, "%u", d->n_cpu_moe);
        }
    }
    /* --for server: the speculative flags (--spec-type ..., -devd) */
    for (const char *sp = pl->spec_args; serves && *sp;) {
        size_t len = strcspn(sp, " ");
        add(&w, "%.*s", (int)len, sp);
        sp += len + (sp[len] == ' ');
    }
    /* --for server --mmproj: the projector and its flags, as measured */
    if (serves && pl->has_mmproj) {
        const ggfit_mmproj_params *mp = &pl->mmproj_params;
        if (!pl->mmproj_auto) {   /* -hf loads its own */
            add(&w, "%s", NAME(MMPROJ));
            add(&w, "%s", pl->mmproj);
        }
        if (!mp->use_gpu)
            add(&w, "%s", NAME(MMPROJ_OFFLOAD));
        if (!mp->warmup)
            add(&w, "%s", NAME(WARMUP));
        if (mp->image_min_tokens > 0) {
            add(&w, "%s", NAME(IMAGE_MIN_TOKENS));
            add(&w, "%d", mp->image_min_tokens);
        }
        if (mp->image_max_tokens > 0) {
            add(&w, "%s", NAME(IMAGE_MAX_TOKENS));
            add(&w, "%d", mp->image_max_tokens);
        }
    }
    if (serves && pl->no_mmproj)   /* -hf would load the repo's projector */
        add(&w, "--no-mmproj");
    /* The flags are the plan: llama.cpp's own fit would change them. */
    if (!bench) {
        add(&w, "%s", NAME(FIT));
        add(&w, "off");
    }
done:
    if (w.oom) {
        ggfit_argv_free(w.v);
        return NULL;
    }
    if (!w.v) {   /* an empty line */
        w.v = ggfit__calloc(1, sizeof *w.v);
        if (!w.v)
            return NULL;
    }
    if (n_out)
        *n_out = w.n;
    return w.v;
}

/* Whether s is a word of letters, digits and the characters of set. */
static bool word_of(const char *s, const char *set)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(set, *s))
            return false;
    return true;
}

/* The characters a word may hold and be passed unquoted: those that
 * xargs and $(...) both pass unchanged (the bare line), and those no POSIX
 * shell quoting, globbing, expansion, operator or word splitting can touch
 * (the whole command, for a shell). */
#define BARE_CHARS "_-.,:;=/+^$()|[]@%"
#define SHELL_CHARS "_-.,:=/+@%"

/* The words space-separated, each as it is when word_of(word, safe), else
 * in single quotes, each ' closed, escaped and reopened ('\''); the empty
 * word is ''. "" for no words; NULL when out of memory. */
static char *join(char *const *argv, const char *safe)
{
    ggfit_sb sb = {0};
    for (size_t i = 0; argv && argv[i]; i++) {
        const char *s = argv[i];
        if (i)
            ggfit__sb_printf(&sb, " ");
        if (word_of(s, safe)) {
            ggfit__sb_printf(&sb, "%s", s);
            continue;
        }
        ggfit__sb_printf(&sb, "'");
        for (const char *e; (e = strchr(s, '\'')); s = e + 1)
            ggfit__sb_printf(&sb, "%.*s'\\''", (int)(e - s), s);
        ggfit__sb_printf(&sb, "%s'", s);
    }
    if (!sb.buf && !sb.oom) {
        char *e = ggfit__malloc(1);
        if (e)
            e[0] = '\0';
        return e;
    }
    return ggfit__sb_take(&sb);
}

char *ggfit_argv_join(char *const *argv)
{
    return join(argv, BARE_CHARS);
}

/* ---- the whole command, for a shell ------------------------------------------ */

char *ggfit_argv_quote(char *const *argv)
{
    return join(argv, SHELL_CHARS);
}

static const char *program_name(ggfit_program prog)
{
    switch (prog) {
    case GGFIT_FOR_CLI: return "llama-cli";
    case GGFIT_FOR_FIT_PARAMS: return "llama-fit-params";
    case GGFIT_FOR_BENCH: return "llama-bench";
    case GGFIT_FOR_DEFAULT:
    case GGFIT_FOR_SERVER:
    default: return "llama-server";
    }
}

static bool is_url(const char *s)
{
    return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8);
}

/* The model's words, as the request gave it, in llama.cpp's order of
 * precedence: -hf (with -hff), else -mu, else -m (a URL there is -mu's:
 * llama.cpp's -m takes a file). */
static void model_words(words *w, const ggfit_request *r)
{
    if (!r)
        return;
    if (r->hf_repo) {
        add(w, "-hf");
        add(w, "%s", r->hf_repo);
        if (r->hf_file) {
            add(w, "-hff");
            add(w, "%s", r->hf_file);
        }
    } else if (r->model_url || (r->model && is_url(r->model))) {
        add(w, "-mu");
        add(w, "%s", r->model_url ? r->model_url : r->model);
    } else if (r->model) {
        add(w, "-m");
        add(w, "%s", r->model);
    }
}

/* The row of a flag word, or -1 for a value (or a word of no row). */
static int row_of(const char *word)
{
    bool negated;
    return word[0] == '-' ? ggfit__flag_find(word, &negated) : -1;
}

/* The program's bit of a row's programs. */
static unsigned program_bit(ggfit_program prog)
{
    switch (prog) {
    case GGFIT_FOR_CLI: return GGFIT_PROGRAM_CLI;
    case GGFIT_FOR_FIT_PARAMS: return GGFIT_PROGRAM_FIT_PARAMS;
    case GGFIT_FOR_BENCH: return GGFIT_PROGRAM_BENCH;
    default: return GGFIT_PROGRAM_SERVER;
    }
}

/* Whether a word of w or of plan is a flag of row row. */
static bool given(const words *w, char *const *plan, int row)
{
    for (size_t j = 0; j < w->n; j++)
        if (row_of(w->v[j]) == row)
            return true;
    for (size_t j = 0; plan[j]; j++)
        if (row_of(plan[j]) == row)
            return true;
    return false;
}

/* The user's flags the plan leaves out of its words (plan), as given, with
 * their values: those without effect on memory (--port, -t, --jinja) and
 * those ggfit does not count (--lora FILE): the program takes them all the
 * same. Each is a pointer into argv (the plan's notes); one the program
 * does not take, or of a row w or plan already gives, is left out. */
static void user_flags(words *w, char *const *plan, const ggfit_plan *pl, int argc,
                       char *const *argv)
{
    const char *const *lists[2] = { pl->ignored, pl->not_counted };
    uint32_t counts[2] = { pl->n_ignored, pl->n_not_counted };
    for (int l = 0; l < 2 && argv; l++)
        for (uint32_t k = 0; k < counts[l]; k++) {
            int i = 0;
            while (i < argc && argv[i] != lists[l][k])
                i++;
            bool negated;
            int row = ggfit__flag_find(lists[l][k], &negated);
            ggfit__flag f;
            if (i == argc || row < 0 || !ggfit__flag_row((size_t)row, &f) ||
                !(f.programs & program_bit(pl->program)))
                continue;
            int nv = negated ? 0 : f.values;
            if (i + nv >= argc || given(w, plan, row))
                continue;
            for (int v = 0; v <= nv; v++)
                add(w, "%s", argv[i + v]);
        }
}

/* The command of ggfit_plan_command, with the model's words given (NULL
 * ended; NULL: those of req). */
static char *command(const ggfit_plan *pl, const ggfit_request *req, const char *const *model,
                     int argc, char *const *argv)
{
    if (!pl->has_alternative && (pl->print_memory || pl->verdict.status != GGFIT_VERDICT_FITS)) {
        char *s = ggfit__malloc(1);   /* nothing to run: as ggfit_plan_args */
        if (s)
            s[0] = '\0';
        return s;
    }
    char **plan = ggfit_plan_argv(pl, pl->program, NULL);
    if (!plan)
        return NULL;
    words w = {0};
    add(&w, "%s", program_name(pl->program));
    if (model)
        for (size_t i = 0; model[i]; i++)
            add(&w, "%s", model[i]);
    else
        model_words(&w, req);
    user_flags(&w, plan, pl, argc, argv);
    for (uint32_t k = 0; req && k < req->n_unknown; k++)   /* a newer llama.cpp's */
        for (int v = 0; v < 2 && req->unknown[k][v]; v++)
            add(&w, "%s", req->unknown[k][v]);
    for (size_t i = 0; plan[i]; i++)
        add(&w, "%s", plan[i]);
    ggfit_argv_free(plan);
    char *line = w.oom ? NULL : ggfit_argv_quote(w.v);
    ggfit_argv_free(w.v);
    return line;
}

char *ggfit_plan_command(const ggfit_plan *pl, const ggfit_request *req, int argc,
                         char *const *argv)
{
    return command(pl, req, NULL, argc, argv);
}

char *ggfit__plan_command_model(const ggfit_plan *pl, const char *const *model)
{
    return command(pl, NULL, model, 0, NULL);
}
