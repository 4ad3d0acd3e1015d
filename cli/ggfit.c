/*
 * ggfit.c - the command-line tool, a thin client of libggfit.
 *
 * Exit status: 0 success (the plan fits the whole machine), 1 it does not
 * fit, 2 bad input or usage, 3 the devices hold it but system memory does
 * not.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggfit_app.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GGFIT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define GGFIT_SANITIZED 1
#endif
#endif

#ifdef __GLIBC__
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#endif

#define EXIT_BAD_INPUT 2

/* ---- usage: each command's synopsis and words, its flags from the table -- */

/* A command: its synopsis and what it does (the flags' lines come from the
 * table, data/flags.tsv's help column: every row the command takes); the
 * rows are data/commands.txt's. */
typedef struct command {
    const char *name;         /* "inspect"; "" the plan */
    unsigned bit;             /* GGFIT_COMMAND_* */
    const char *synopsis;     /* after "usage: " */
    const char *about;        /* after the synopsis */
} command;

/* data/commands.txt, which the man page's SYNOPSIS and COMMANDS come from
 * too (tools/gen_man.py), as build/commands_data.h (scripts/gen_commands.awk). */
static const command commands[] = {
#include "commands_data.h"
};

/* Prints the words of text after column *col, wrapped at 80 columns to
 * --help's description column. */
static void wrapped(FILE *f, int *col, const char *text)
{
    while (*text) {
        size_t n = strcspn(text, " ");
        if (n) {
            if (*col > 21 && *col + 1 + (int)n > 80) {
                fputs("\n                     ", f);
                *col = 21;
            }
            fprintf(f, "%s%.*s", *col > 21 ? " " : "", (int)n, text);
            *col += (*col > 21) + (int)n;
        }
        text += n + (text[n] == ' ');
    }
}

/* The names of a comma list, ", "-separated, after *col. */
static void names_of(FILE *f, int *col, const char *list, bool first)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        *col += fprintf(f, "%s%.*s", first ? "" : ", ", (int)len, p);
        first = false;
        p += len + (p[len] == ',');
    }
}

/* A row's entry: its names and value, then its help at column 21. */
static void flag_entry(FILE *f, const ggfit_flag_info *row)
{
    int col = 2;
    fputs("  ", f);
    names_of(f, &col, row->names, true);
    names_of(f, &col, row->negated, false);
    if (row->metavar[0])
        col += fprintf(f, " %s", row->metavar);
    if (col < 21) {
        col += fprintf(f, "%*s", 21 - col, "");
    } else {
        fputc(' ', f);   /* and wrapped's: two spaces before the text */
        col++;
    }
    wrapped(f, &col, row->help);
    fputc('\n', f);
}

/* Whether an earlier row than i has row's names (llama.cpp lists -np twice);
 * *programs: those of every row with them. */
static bool repeated(size_t i, const ggfit_flag_info *row, unsigned *programs)
{
    ggfit_flag_info g;
    *programs = 0;
    for (size_t j = 0; ggfit_flag_get(j, &g); j++) {
        if (strcmp(g.names, row->names))
            continue;
        if (j < i)
            return true;
        *programs |= g.programs;
    }
    return false;
}

/* The llama.cpp flags of the model and the context that ggfit counts and
 * says nothing of its own about, each by its first name and first negated
 * name, those of llama-server alone last. */
static void llama_flags_help(FILE *f)
{
    int col = 21;
    ggfit_flag_info row;
    fputs("  llama.cpp flags    ", f);
    for (int server = 0; server < 2; server++) {
        if (server)
            wrapped(f, &col, "and llama-server's");
        for (size_t i = 0; ggfit_flag_get(i, &row); i++) {
            unsigned programs;
            char name[64];
            if (row.help[0] || !row.counted || row.cli != GGFIT_CLI_NONE ||
                (row.scope != GGFIT_SCOPE_MODEL && row.scope != GGFIT_SCOPE_CONTEXT) ||
                repeated(i, &row, &programs) ||
                server != !(programs & (GGFIT_PROGRAM_CLI | GGFIT_PROGRAM_FIT_PARAMS)))
                continue;
            snprintf(name, sizeof name, "%.*s", (int)strcspn(row.names, ","), row.names);
            wrapped(f, &col, name);
            if (row.negated[0]) {
                snprintf(name, sizeof name, "%.*s", (int)strcspn(row.negated, ","), row.negated);
                wrapped(f, &col, name);
            }
        }
    }
    fputc('\n', f);
}

/* --cpu's features and classes, as the library knows them. */
static void cpu_help(FILE *f)
{
    int col = 21;
    fputs("  CPU                ", f);
    wrapped(f, &col, "features:");
    for (unsigned k = 0; k < 32; k++)
        if (ggfit_cpu_feature_name(1u << k))
            wrapped(f, &col, ggfit_cpu_feature_name(1u << k));
    wrapped(f, &col, "none; classes:");
    for (size_t i = 0; i < ggfit_cpu_class_count(); i++)
        wrapped(f, &col, ggfit_cpu_class_get(i)->id);
    fputc('\n', f);
}

static const command *command_of(unsigned bit)
{
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
        if (commands[k].bit == bit)
            return &commands[k];
    return &commands[0];
}

/* A command's -h: its synopsis, its words and every flag of the table it
 * takes (an error prints none of it: the line that says where it is). The
 * plan's lists the rows of its own and the library's with a help line (and
 * those without, of llama.cpp's model and context, by name); bench's and
 * sweep's their own, the model's source, and the plan's flags by
 * reference. */
static void usage(FILE *f, unsigned bit)
{
    const command *c = command_of(bit);
    fprintf(f, "usage: %s", c->synopsis);
    fprintf(f, "\n%s\noptions:\n", c->about);
    ggfit_flag_info row;
    bool library = bit & (GGFIT_COMMAND_BENCH | GGFIT_COMMAND_SWEEP);
    for (size_t i = 0; ggfit_flag_get(i, &row); i++) {
        unsigned programs;
        if (!(row.commands & bit) || !row.help[0] || repeated(i, &row, &programs))
            continue;
        /* bench and sweep take the plan's flags: the model's source here */
        if (library && row.cli == GGFIT_CLI_NONE && !(row.commands & GGFIT_COMMAND_INSPECT))
            continue;
        flag_entry(f, &row);
    }
    if (bit == GGFIT_COMMAND_PLAN) {
        llama_flags_help(f);
        cpu_help(f);
    } else if (library) {
        fputs("  flags              the plan's: the machine, the fit and llama.cpp's\n"
              "                     (ggfit --help)\n", f);
    }
}

/* ---- errors: one or two lines, what is wrong and the fix, then where the
 * help is (never the usage block) ------------------------------------------ */

static unsigned running = GGFIT_COMMAND_PLAN;   /* the command run: its -h */

static void help_hint(void)
{
    const command *c = command_of(running);
    fprintf(stderr, "ggfit%s%s -h for help\n", c->name[0] ? " " : "", c->name);
}

/* A bad command line: "ggfit[ COMMAND]: " and the message, then the hint. */
#ifdef __GNUC__
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
static int bad(const char *fmt, ...)
{
    const command *c = command_of(running);
    va_list ap;
    fprintf(stderr, "ggfit%s%s: ", c->name[0] ? " " : "", c->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    help_hint();
    return EXIT_BAD_INPUT;
}

static int fail(const char *msg)
{
    return bad("%s", msg);
}

static int out_of_memory(void)
{
    fputs("ggfit: out of memory\n", stderr);
    return EXIT_BAD_INPUT;
}

/* A value echoed in a message: its first 40 characters and "...". */
#define CLIP(s) 40, (s), (strlen(s) > 40 ? "..." : "")

/* ---- flags: each looked up in the table for its command ------------------ */

/* The row of the table that a names for command bit (the tool's own rows
 * first), in *f: which of the tool's it is (GGFIT_CLI_NONE: the library's
 * parsers take it), or -1: the command takes no such flag. */
static int flag_of(const char *a, unsigned bit, ggfit_flag_info *f)
{
    bool negated;
    int k = ggfit_flag_find(a, bit, &negated);
    if (k < 0 || !ggfit_flag_get((size_t)k, f))
        return -1;
    return (int)f->cli;
}

/* An argument command bit does not take: the closest flag it does. */
static int unknown(unsigned bit, const char *a)
{
    char near[64];
    const char *s = a[0] == '-' ? ggfit_flag_suggest(a, bit, near, sizeof near) : NULL;
    size_t n = strlen(a);
    if (a[0] != '-' && n > 5 && !strcmp(a + n - 5, ".gguf"))
        return bad("%.*s%s: give the model with -m: -m %.*s%s", CLIP(a), CLIP(a));
    if (a[0] != '-')
        return bad("unexpected argument '%.*s%s'", CLIP(a));
    if (s)
        return bad("unknown option '%.*s%s': did you mean %s?", CLIP(a), s);
    return bad("unknown option '%.*s%s'", CLIP(a));
}

/* The value of the tool's flag at argv[i], or NULL (said on stderr). */
static const char *value_of(unsigned bit, int argc, char **argv, int i)
{
    (void)bit;
    if (i + 1 < argc)
        return argv[i + 1];
    bad("%s needs a value", argv[i]);
    return NULL;
}

/* The CLI is linked statically where make can (no dynamic loader to start:
 * a tenth of a short run). Such a program cannot load libcurl, NVML or the
 * resolver's NSS modules (src/base/linking.c): a request that needs one
 * fails with GGFIT_ESTATIC before anything is printed on stdout, and is
 * then run again, whole, by the dynamically linked build beside this one,
 * ggfit-dynamic (what is buffered for stdout goes with this process). */
static char **main_argv;

static void run_dynamic(void)
{
    static const char twin[] = "ggfit-dynamic";
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path);
    if (n <= 0 || (size_t)n >= sizeof path - sizeof twin || getenv("GGFIT_FROM_STATIC"))
        return;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash)
        return;
    memcpy(slash + 1, twin, sizeof twin);
    if (access(path, X_OK) != 0 || setenv("GGFIT_FROM_STATIC", "1", 1) != 0)
        return;
    execv(path, main_argv);
}

/* Prints the library's message for status rc (and frees it). */
static int report(int rc, char *err)
{
    if (rc == GGFIT_ESTATIC)
        run_dynamic();   /* returns only when it could not */
    fprintf(stderr, "ggfit: %s\n", err ? err : ggfit_status_str(rc));
    if (rc == GGFIT_ESTATIC)
        fputs("ggfit: this ggfit is linked statically, and could not run ggfit-dynamic, the "
              "dynamically linked build that make puts beside it\n", stderr);
    else if (rc == GGFIT_EINVAL)
        help_hint();   /* a bad value given: where the flags are told */
    ggfit_free(err);
    return EXIT_BAD_INPUT;
}

/* Prints rendered text (NULL: the renderer ran out of memory), frees it. */
static int emit(char *text, bool json)
{
    if (!text)
        return out_of_memory();
    fputs(text, stdout);
    if (json)
        fputc('\n', stdout);
    ggfit_free(text);
    return 0;
}

/* A model by path, URL (-m URL, -mu URL) or Hugging Face repo (-hf, -hff):
 * the token (-hft, else HF_TOKEN) goes to Hugging Face only. */
static int open_model(const char *path, const char *hf, const char *hff, const char *token,
                      bool offline, ggfit_model **m, char **err)
{
    if (!hf && !ggfit_is_url(path))
        return ggfit_model_open(path, m, err);
    ggfit_remote_options o;
    ggfit_remote_options_init(&o);
    o.offline = offline;
    o.progress = isatty(STDERR_FILENO);
    if (!hf)
        return ggfit_model_open_url(path, &o, NULL, m, err);
    o.token = token ? token : getenv("HF_TOKEN");
    ggfit_hf_model h;
    int rc = ggfit_hf_resolve(hf, hff, &o, NULL, &h, err);
    if (rc)
        return rc;
    rc = ggfit_model_open_url(h.url, &o, NULL, m, err);
    ggfit_hf_model_free(&h);
    return rc;
}

/* ---- the one loop of every command's flags ---------------------------------- */

/* After "--": a llama.cpp command line, llama-server -m M ... (any path);
 * the program decides the syntax the plan is printed in. */
static int program_of(ggfit_request *req, int argc, char **argv, int *i)
{
    if (++*i >= argc)
        return fail("--: expected a llama.cpp command, e.g. -- llama-server -m M ...");
    if (ggfit_program_named(argv[*i], &req->program)) {
        (*i)++;
        return 0;
    }
    return bad("--: '%.*s%s' is not llama-server, llama-cli, llama-fit-params or llama-bench",
               CLIP(argv[*i]));
}

/* --objective's value */
static int objective_of(const char *v, ggfit_objective *o)
{
    if (!strcmp(v, "speed") || !strcmp(v, "tg"))
        *o = GGFIT_OBJECTIVE_TG;
    else if (!strcmp(v, "pp"))
        *o = GGFIT_OBJECTIVE_PP;
    else if (!strcmp(v, "context"))
        *o = GGFIT_OBJECTIVE_CONTEXT;
    else
        return fail("--objective: expected speed, pp or context");
    return 0;
}

/* --min-ctx's value */
static int min_ctx_of(const char *v, uint32_t *n)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (!*end && end != v && v[0] != '-' && (errno == ERANGE || x > 100000000))
        return bad("--min-ctx: %.*s%s is too large (at most 100000000)", CLIP(v));
    if (*end || end == v || v[0] == '-' || x == 0)
        return bad("--min-ctx: expected a number of tokens, got '%.*s%s'", CLIP(v));
    *n = (uint32_t)x;
    return 0;
}

/* The speed model's constant of row f (bench, sweep, --objective) at
 * argv[*i], and *i moved past its value; 0, or the exit status of a bad
 * value. */
static int speed_flag(ggfit_speed_options *so, const char *cmd, const ggfit_flag_info *f,
                      int argc, char **argv, int *i)
{
    double *field = ggfit_speed_field(so, f->cli);
    /* --host-bw default: the model's default even for this machine's own
     * memory (no measuring) */
    if (f->cli == GGFIT_CLI_HOST_BW && *i + 1 < argc && !strcmp(argv[*i + 1], "default")) {
        so->host_bw_default = true;
        *i += 2;
        return 0;
    }
    (void)cmd;
    if (*i + 1 >= argc)
        return bad("%s needs a value", argv[*i]);
    const char *v = argv[*i + 1];
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= 0))
        return bad("%s: expected a number >= 0, got '%.*s%s'", argv[*i], CLIP(v));
    if (x > 1e9)   /* inf, 1e999: no bandwidth, throughput or time is */
        return bad("%s: %.*s%s is too large (at most 1000000000)", argv[*i], CLIP(v));
    *field = x;
    *i += 2;
    return 0;
}

/* llama-bench's token counts (-p, -n, -d) for ggfit cmd: up to max, and
 * not 0 unless zero. */
static int tokens_of(const char *cmd, const char *a, const char *v, unsigned long max, bool zero,
                     uint32_t *out)
{
    char *end;
    (void)cmd;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (!*end && end != v && v[0] != '-' && (errno == ERANGE || x > max))
        return bad("%s: %.*s%s is too large (at most %lu)", a, CLIP(v), max);
    if (*end || end == v || v[0] == '-' || (!zero && x == 0))
        return bad("%s: expected a number of tokens%s, got '%.*s%s'", a, zero ? "" : " (> 0)",
                   CLIP(v));
    *out = (uint32_t)x;
    return 0;
}

/* ggfit bench's -d: a depth, or a comma list of them (a row each, as
 * llama-bench's -d 0,4096,32768). */
static int depths_of(const char *a, const char *v, ggfit_speed_options *so)
{
    char buf[32];
    so->n_depths = 0;
    for (const char *p = v;;) {
        size_t len = strcspn(p, ",");
        if (so->n_depths == GGFIT_BENCH_MAX_DEPTHS)
            return bad("%s: more than %d depths", a, GGFIT_BENCH_MAX_DEPTHS);
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
        if (len >= sizeof buf || !len)
            return bad("%s: expected a number of tokens or a comma list of them, got "
                       "'%.*s%s'", a, CLIP(v));
        int rc = tokens_of("bench", a, buf, 10000000, true, &so->depths[so->n_depths++]);
        if (rc)
            return rc;
        if (!p[len])
            break;
        p += len + 1;
    }
    so->depth = so->depths[0];
    if (so->n_depths == 1)
        so->n_depths = 0;   /* one depth: the plain form */
    return 0;
}

/* What the tool's own flags set, for any command (each takes the rows
 * data/flags.tsv's commands column gives it). */
typedef struct cli_opts {
    bool json, quiet, verbose, list, csv, tensors, measure, markdown, force, catalog;
    int line_form;            /* --print-command 'c', --print-flags 'f', or 0:
                                 the command on a terminal without -q */
    bool speed_consts;        /* a speed constant was given */
    const char *svg;          /* sweep --svg FILE */
    const char *sysroot;      /* devices --sysroot DIR */
    const char *files[2];     /* reorder's IN and OUT, batch's FILE */
    uint32_t jobs;            /* batch -j: threads (0: one per CPU) */
    const char *order;        /* --order NAMES: a router's models */
    bool plan_set;            /* --plan-set: a router's set fitted */
    const char *priority;     /* --priority NAME=W,...: their weights in it */
    int n_files;
    ggfit_sweep_axis axis;    /* sweep --over */
    ggfit_fastest_options fo; /* --objective, --min-ctx, --quant-cache; the
                                 speed constants, -p, -n, -d, --as-type */
    int line;                 /* after -- llama-bench: its first flag; 0: none */
    const char **models;      /* the plan's: every -m given (or NULL) */
    size_t n_models;
} cli_opts;

static void cli_opts_init(cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->axis = GGFIT_SWEEP_CTX;
    ggfit_fastest_options_init(&o->fo);
    o->fo.objective = GGFIT_OBJECTIVE_CONTEXT;
}

/* The tool's flag f at argv[*i], its value into o and *i past it; 0, or
 * the exit status of a missing or bad value. */
static int tool_flag(unsigned bit, const ggfit_flag_info *f, cli_opts *o, int argc, char **argv,
                     int *i)
{
    const char *cmd = command_of(bit)->name, *v = NULL;
    ggfit_speed_options *so = &o->fo.speed;
    if (ggfit_speed_field(so, f->cli)) {
        o->speed_consts = true;
        return speed_flag(so, cmd, f, argc, argv, i);
    }
    if (f->n_values && !(v = value_of(bit, argc, argv, *i)))
        return EXIT_BAD_INPUT;
    int rc = 0;
    switch (f->cli) {
    case GGFIT_CLI_JSON: o->json = true; break;
    case GGFIT_CLI_QUIET: o->quiet = true; break;
    case GGFIT_CLI_PRINT_COMMAND: o->line_form = 'c'; break;
    case GGFIT_CLI_PRINT_FLAGS: o->line_form = 'f'; break;
    case GGFIT_CLI_VERBOSE: o->verbose = true; break;
    case GGFIT_CLI_LIST: o->list = true; break;
    case GGFIT_CLI_QUANT_CACHE: o->fo.quant_cache = true; break;
    case GGFIT_CLI_TENSORS: o->tensors = true; break;
    case GGFIT_CLI_MEASURE: o->measure = true; break;
    case GGFIT_CLI_CATALOG: o->catalog = true; break;
    case GGFIT_CLI_MARKDOWN: o->markdown = true; break;
    case GGFIT_CLI_FORCE: o->force = true; break;
    case GGFIT_CLI_CSV: o->csv = true; break;
    case GGFIT_CLI_WIDE: ggfit_text_set_columns(0); break;
    case GGFIT_CLI_JOBS: {
        char *end;
        long j = strtol(v, &end, 10);
        if (*end || end == v || j < 1 || j > 256)
            rc = bad("%s: expected a number of threads from 1 to 256, got '%.*s%s'", argv[*i],
                     CLIP(v));
        else
            o->jobs = (uint32_t)j;
        break;
    }
    case GGFIT_CLI_SVG: o->svg = v; break;
    case GGFIT_CLI_ORDER: o->order = v; break;
    case GGFIT_CLI_PLAN_SET: o->plan_set = true; break;
    case GGFIT_CLI_PRIORITY: o->priority = v; break;
    case GGFIT_CLI_SYSROOT: o->sysroot = v; break;
    case GGFIT_CLI_OBJECTIVE: rc = objective_of(v, &o->fo.objective); break;
    case GGFIT_CLI_MIN_CTX: rc = min_ctx_of(v, &o->fo.n_ctx_min); break;
    case GGFIT_CLI_OVER:
        if (!strcmp(v, "ctx") || !strcmp(v, "context"))
            o->axis = GGFIT_SWEEP_CTX;
        else if (!strcmp(v, "ngl"))
            o->axis = GGFIT_SWEEP_NGL;
        else if (!strcmp(v, "ncmoe"))
            o->axis = GGFIT_SWEEP_NCMOE;
        else
            rc = bad("--over: expected ctx, ngl or ncmoe, got '%.*s%s'", CLIP(v));
        break;
    case GGFIT_CLI_AS_TYPE:
        if ((so->as_type = ggfit_type_from_name(v)) < 0) {
            rc = bad("--as-type: unknown type '%.*s%s' (a ggml type: f16, q8_0, q4_K ...)",
                     CLIP(v));
        }
        break;
    case GGFIT_CLI_DEPTH:
        if (bit == GGFIT_COMMAND_BENCH) {
            rc = depths_of(argv[*i], v, so);
            break;
        }
        /* fall through */
    case GGFIT_CLI_N_PROMPT:
    case GGFIT_CLI_N_GEN:
        /* sweep's points need tokens; llama-bench's -p 0 skips the test */
        rc = tokens_of(cmd, argv[*i], v, bit == GGFIT_COMMAND_SWEEP ? 1000000 : 10000000,
                       bit != GGFIT_COMMAND_SWEEP,
                       f->cli == GGFIT_CLI_N_PROMPT ? &so->n_prompt
                       : f->cli == GGFIT_CLI_N_GEN  ? &so->n_gen
                                                    : &so->depth);
        break;
    default:
        break;
    }
    *i += 1 + (v != NULL);
    return rc;
}

/* The one loop of every command's flags, from argv[i]: each looked up in
 * the table for command bit; the tool's own into o (-h prints the
 * command's help), the library's into req (NULL: the command takes none),
 * the words that are no flag into o->files. After -- llama-bench, o->line
 * is where its flags start (llama-bench's parser's: bench_line). 0, -1
 * after -h, or the exit status. */
/* A flag of a pasted llama.cpp line that the table lacks (a newer
 * llama.cpp's): planned without it, said on stderr; the word after it,
 * when no flag, taken as its value. i moved past both. */
static void unknown_pasted(unsigned bit, ggfit_request *req, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = NULL;
    char near[64], value[80] = "", why[160] = "";
    if (*i + 1 < argc && (argv[*i + 1][0] != '-' ||
                          (argv[*i + 1][1] >= '0' && argv[*i + 1][1] <= '9')))
        v = argv[*i + 1];
    const char *s = ggfit_flag_suggest(a, bit, near, sizeof near);
    if (v)
        snprintf(value, sizeof value, "%.*s%s taken as its value", CLIP(v));
    if (v || s)
        snprintf(why, sizeof why, " (%s%s%s%s%s)", value, v && s ? "; " : "",
                 s ? "did you mean " : "", s ? s : "", s ? "?" : "");
    fprintf(stderr, "ggfit: warning: %.*s%s: unknown to ggfit%s; if it changes memory, the plan "
                    "may be off\n", CLIP(a), why);
    if (req && req->n_unknown < GGFIT_MAX_IGNORED) {   /* the command keeps it */
        req->unknown[req->n_unknown][0] = a;
        req->unknown[req->n_unknown++][1] = v;
    }
    *i += 1 + (v != NULL);
}

/* The sizes given in decimal units that were likely meant in binary ones
 * (--gpu 24GB for a 24 GiB card): a note each, on stderr. */
static void size_notes(const ggfit_request *req)
{
    char note[256];
    if (req->gpu && ggfit_size_note("--gpu", req->gpu, note, sizeof note))
        fprintf(stderr, "ggfit: note: %s\n", note);
    for (size_t k = 0; k < req->n_gpu_more; k++)
        if (ggfit_size_note("--gpu", req->gpu_more[k], note, sizeof note))
            fprintf(stderr, "ggfit: note: %s\n", note);
    if (req->host_mem && ggfit_size_note("--host-mem", req->host_mem, note, sizeof note))
        fprintf(stderr, "ggfit: note: %s\n", note);
}

static int parse_flags(unsigned bit, cli_opts *o, ggfit_request *req, int argc, char **argv,
                       int i)
{
    bool pasted = false;   /* past -- llama-server ...: a llama.cpp line */
    while (i < argc) {
        ggfit_flag_info f;
        char *err = NULL;
        bool used;
        int rc = 0, which = argv[i][0] == '-' ? flag_of(argv[i], bit, &f) : -1;
        /* reorder's IN OUT; devices --catalog's FILTER; batch's FILE */
        if (which < 0 && argv[i][0] != '-' && o->n_files < 2 &&
            (bit == GGFIT_COMMAND_REORDER ||
             (!o->n_files && ((bit == GGFIT_COMMAND_DEVICES && o->catalog) ||
                              bit == GGFIT_COMMAND_BATCH)))) {
            o->files[o->n_files++] = argv[i++];
            continue;
        }
        if (which < 0 && pasted && argv[i][0] == '-' && argv[i][1]) {
            unknown_pasted(bit, req, argc, argv, &i);
            continue;
        }
        if (which < 0 || (which == GGFIT_CLI_NONE && !req))
            return unknown(bit, argv[i]);
        if (which == GGFIT_CLI_HELP) {
            usage(stdout, bit);
            return -1;
        }
        if (which == GGFIT_CLI_COMMAND_LINE) {
            /* a whole llama.cpp command: its program, then its flags */
            if ((rc = program_of(req, argc, argv, &i)))
                return rc;
            if (req->program == GGFIT_FOR_BENCH) {
                o->line = i;   /* llama-bench's own flags, its tests planned */
                return 0;
            }
            if (bit == GGFIT_COMMAND_BENCH)
                return fail("--: expected a llama-bench command line: -- llama-bench -m FILE ...");
            pasted = true;
            continue;
        }
        if (which != GGFIT_CLI_NONE) {
            if ((rc = tool_flag(bit, &f, o, argc, argv, &i)))
                return rc;
            continue;
        }
        /* the library's: llama.cpp's, the model's, the machine's, the fit's */
        const char *model = req->model;
        if ((rc = ggfit_request_parse_arg(req, argc, argv, &i, &used, &err)))
            return report(rc, err);
        if (!used && pasted && argv[i][0] == '-') {
            unknown_pasted(bit, req, argc, argv, &i);
            continue;
        }
        if (!used)
            return unknown(bit, argv[i]);
        if (o->models && req->model != model)   /* -m FILE: each a plan of --list */
            o->models[o->n_models++] = req->model;
    }
    if (req)
        size_notes(req);
    return 0;
}

static int cmd_inspect(int argc, char **argv)
{
    cli_opts o;
    cli_opts_init(&o);
    /* a request for its model's fields alone: most of it is flags' overrides */
    ggfit_request *req = calloc(1, sizeof *req);
    if (!req)
        return out_of_memory();
    ggfit_request_init(req);
    /* the model's source, taken as a plan takes it, and inspect's own */
    int rc = parse_flags(GGFIT_COMMAND_INSPECT, &o, req, argc, argv, 0);
    const char *path = req->model_url ? req->model_url : req->model;
    if (!rc && !path && !req->hf_repo)
        rc = fail("give the model: -m FILE, -mu URL or -hf USER/MODEL");
    ggfit_model *m = NULL;
    char *err = NULL;
    if (!rc && (rc = open_model(path, req->hf_repo, req->hf_file, req->hf_token, req->offline,
                                &m, &err)))
        rc = report(rc, err);
    free(req);
    if (rc)
        return rc < 0 ? 0 : rc;   /* -1: -h */
    char *text = o.json ? ggfit_inspect_json(m, o.tensors) : ggfit_inspect_text(m);
    ggfit_model_free(m);
    return emit(text, o.json);
}

/* Rewrites a model with what llama.cpp offloads contiguous in the file. */
static int cmd_reorder(int argc, char **argv)
{
    cli_opts o;
    cli_opts_init(&o);
    int rc = parse_flags(GGFIT_COMMAND_REORDER, &o, NULL, argc, argv, 0);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (o.n_files != 2)
        return fail("give the files: ggfit reorder IN OUT");
    char *err = NULL;
    if ((rc = ggfit_reorder(o.files[0], o.files[1], o.force, &err)))
        return report(rc, err);
    fprintf(stderr, "ggfit: wrote %s\n", o.files[1]);
    return 0;
}

/* The architectures and what ggfit does with each. */
static int cmd_archs(int argc, char **argv)
{
    cli_opts o;
    cli_opts_init(&o);
    int rc = parse_flags(GGFIT_COMMAND_ARCHS, &o, NULL, argc, argv, 0);
    if (rc)
        return rc < 0 ? 0 : rc;
    return emit(o.json ? ggfit_archs_json() : o.markdown ? ggfit_archs_markdown()
                                                         : ggfit_archs_text(), o.json);
}

/* Lists this machine's host memory and devices; --sysroot reads /proc and
 * /sys under DIR instead (as GGFIT_SYSROOT does). */
/* ggfit devices --catalog [FILTER]: the catalog's devices whose id or name
 * contains FILTER. */
static int list_catalog(const char *filter, bool json)
{
    size_t n = ggfit_catalog_list(filter, NULL, 0);
    const ggfit_catalog_entry **rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows)
        return out_of_memory();
    ggfit_catalog_list(filter, rows, n);
    char why[160];
    snprintf(why, sizeof why, "devices --catalog: no device's id or name contains '%.60s' "
             "(without FILTER: all of them)", filter ? filter : "");
    int rc = n ? emit(json ? ggfit_catalog_json(rows, n) : ggfit_catalog_text(rows, n), json)
               : fail(why);
    free(rows);
    return rc;
}

static int cmd_devices(int argc, char **argv)
{
    ggfit_probe_options po = {NULL, NULL};
    cli_opts o;
    cli_opts_init(&o);
    int rc = parse_flags(GGFIT_COMMAND_DEVICES, &o, NULL, argc, argv, 0);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (o.catalog)
        return list_catalog(o.n_files ? o.files[0] : NULL, o.json);
    po.sysroot = o.sysroot;
    bool json = o.json;
    ggfit_host_info host;
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n = 0;
    char *err = NULL;
    rc = ggfit_host_probe(&po, &host, &err);
    if (rc || (rc = ggfit_devices_discover(&po, devs, GGFIT_MAX_DEVICES, &n, &err)))
        return report(rc, err);
    if (!o.measure)
        return emit(json ? ggfit_devices_json(&host, devs, n)
                         : ggfit_devices_text(&host, devs, n), json);
    /* --measure: this machine's memory read, beside the model's assumption */
    ggfit_host_bw bw;
    if ((rc = ggfit_host_measure(0, &bw, &err)))
        return report(rc, err);
    /* kept as the speed model's figure for this machine; a cache folder
     * that cannot be written costs only the next plan's measuring */
    if (!po.sysroot && !getenv("GGFIT_SYSROOT") &&   /* a fake root is not this machine */
        ggfit_host_bw_keep(host.cpu_name, host.total, &bw, &err) != GGFIT_OK) {
        ggfit_free(err);
        err = NULL;
    }
    if (json)
        return emit(ggfit_devices_json_measured(&host, devs, n, &bw), true);
    if ((rc = emit(ggfit_devices_text(&host, devs, n), false)))
        return rc;
    return emit(ggfit_host_bw_text(&bw), false);
}

/* The plan's line on stdout: the whole command (ggfit_plan_command, from
 * the request and the command line it was parsed from), or with req NULL
 * the bare flags (ggfit_plan_args). */
typedef struct plan_line {
    const ggfit_request *req;
    int argc;
    char **argv;
} plan_line;

/* A person at a terminal pastes the command, a pipe ($(...), xargs) and
 * -q take the flags; --print-command and --print-flags choose. */
static plan_line line_of(const cli_opts *o, const ggfit_request *req, int argc, char **argv)
{
    bool whole = o->line_form ? o->line_form == 'c' : !o->quiet && isatty(STDOUT_FILENO);
    return (plan_line){ whole ? req : NULL, argc, argv };
}

static char *line_text(const ggfit_plan *pl, plan_line l)
{
    return l.req ? ggfit_plan_command(pl, l.req, l.argc, l.argv) : ggfit_plan_args(pl);
}

/* Prints a plan: its line on stdout (command or flags, as line says), the
 * reasoning, the memory and the verdict on stderr; with -fitp on the memory and the verdict on
 * stdout; or everything as JSON. The exit status is the plan's. */
static int print_plan(const ggfit_plan *pl, plan_line line, bool json, bool quiet, bool verbose)
{
    char *out = json ? ggfit_plan_json(pl) : ggfit_plan_text(pl, verbose);
    char *args = line_text(pl, line);
    int rc = ggfit_plan_exit_status(pl);
    char why[320];
    if (!args || !out) {
        ggfit_free(args);
        ggfit_free(out);
        return out_of_memory();
    }
    if (json) {
        fputs(out, stdout);
        fputc('\n', stdout);
    } else if (pl->print_memory) {
        fputs(out, stdout);
    } else {
        if (!quiet)
            fputs(out, stderr);
        if (args[0])
            printf("%s\n", args);
        else if (quiet)
            fprintf(stderr, "ggfit: %s\n", ggfit_verdict_summary(&pl->verdict, why, sizeof why));
    }
    ggfit_free(args);
    ggfit_free(out);
    return rc;
}

static int bench_line(ggfit_request *req, cli_opts *o, int argc, char **argv, int i);

/* --objective speed|pp: the fastest plan beside llama.cpp's, its flags on
 * stdout (the comparison on stderr), or JSON. */
static int print_fastest(ggfit_request *req, const ggfit_fastest_options *fo,
                         plan_line line, bool json, bool quiet)
{
    ggfit_fastest *f = calloc(1, sizeof *f);   /* two plans: large for a stack */
    char *err = NULL;
    if (!f)
        return out_of_memory();
    int rc = ggfit_request_fastest(req, fo, f, &err);
    if (rc) {
        free(f);
        return report(rc, err);
    }
    const ggfit_plan *pl = f->faster && f->has_best_plan ? &f->best : &f->own;
    char *out = json ? ggfit_fastest_json(f) : ggfit_fastest_text(f);
    char *args = line_text(pl, line);
    rc = f->found ? 0 : ggfit_plan_exit_status(&f->own);
    if (!out || !args) {
        rc = out_of_memory();
    } else if (json) {
        printf("%s\n", out);
    } else {
        if (!quiet)
            fputs(out, stderr);
        if (args[0])
            printf("%s\n", args);
    }
    ggfit_free(out);
    ggfit_free(args);
    ggfit_fastest_free(f);
    free(f);
    return rc;
}

/* --vs-version: the request planned for two llama.cpp versions, side by
 * side on stdout (the comparison is the answer); the exit status is the
 * first plan's. */
static int print_vs(ggfit_request *req, ggfit_plan *plan, bool json)
{
    char *err = NULL;
    ggfit_plan *other = ggfit_plan_new();
    if (!other)
        return out_of_memory();
    int rc = ggfit_request_plan_vs(req, plan, other, &err);
    if (rc) {
        ggfit_plan_destroy(other);
        return report(rc, err);
    }
    rc = emit(json ? ggfit_plan_vs_json(plan, other) : ggfit_plan_vs_text(plan, other), json);
    if (!rc)
        rc = ggfit_plan_exit_status(plan);
    ggfit_plan_free(plan);
    ggfit_plan_destroy(other);
    return rc;
}

/* The main mode: fit llama.cpp's flags, or project its memory use. The
 * plan (which devices, which host, fit or projection) is the library's;
 * the CLI adds --json and prints. */
/* A llama-server line with --models-preset or --models-dir and no model
 * (-m, -hf): a router (tools/server/server.cpp); or a llama-swap line. */
static bool router_line(int argc, char **argv)
{
    bool pasted = false, models = false;
    for (int i = 1; i < argc; i++) {
        pasted |= !strcmp(argv[i], "--");
        if (!pasted)
            continue;
        models |= !strcmp(argv[i], "--models-preset") || !strcmp(argv[i], "--models-dir");
        if (!strcmp(argv[i], "-m") || !strcmp(argv[i], "--model") || !strcmp(argv[i], "-hf") ||
            !strcmp(argv[i], "--hf-repo") || !strcmp(argv[i], "-hfr"))
            return false;
    }
    return models;
}

/* A router's children planned one by one (the library's ggfit_router_plan)
 * on the machine's flags before --, the tool's own left out. */
static int print_router(int argc, char **argv, const char *order, bool set,
                        const char *priority, bool json)
{
    char **words = calloc((size_t)argc, sizeof *words);
    ggfit_router *r = calloc(1, sizeof *r);
    char *err = NULL;
    int n = 0, rc;
    if (!words || !r) {
        free(words);
        free(r);
        return out_of_memory();
    }
    for (int i = 1; i < argc; i++) {
        ggfit_flag_info f;
        int which = strcmp(argv[i], "--") ? flag_of(argv[i], GGFIT_COMMAND_PLAN, &f) : -1;
        if (which > GGFIT_CLI_NONE) {   /* --json, --order ...: the tool's */
            i += f.n_values;
            continue;
        }
        if (!strcmp(argv[i], "--")) {
            while (i < argc)
                words[n++] = argv[i++];
            break;
        }
        words[n++] = argv[i];
    }
    if (set && order) {
        free(words);
        free(r);
        return fail("--plan-set fits the set for any order: --order goes without it");
    }
    if (priority && !set) {
        free(words);
        free(r);
        return fail("--priority weighs the shares of --plan-set: give --plan-set too");
    }
    rc = set ? ggfit_router_fit_set(n, words, priority, r, &err)
             : ggfit_router_plan(n, words, order, r, &err);
    free(words);
    if (rc) {
        free(r);
        return report(rc, err);
    }
    if (set && !json) {
        /* the table on stderr, the preset that runs it on stdout */
        char *t = ggfit_router_text(r), *ini = ggfit_router_preset(r);
        if (!t || !ini) {
            ggfit_free(t);
            ggfit_free(ini);
            ggfit_router_free(r);
            free(r);
            return out_of_memory();
        }
        fputs(t, stderr);
        fputs(ini, stdout);
        ggfit_free(t);
        ggfit_free(ini);
    } else {
        rc = emit(json ? ggfit_router_json(r) : ggfit_router_text(r), json);
    }
    bool all = true, r_over = r->over;
    for (uint32_t k = 0; k < r->n_children; k++)
        all &= r->children[k].plan && ggfit_plan_exit_status(r->children[k].plan) == 0;
    ggfit_router_free(r);
    free(r);
    return rc ? rc : all && !r_over ? 0 : 1;
}

static int project_with(ggfit_request *req, ggfit_plan *plan, int argc, char **argv)
{
    cli_opts o;
    char *err = NULL;
    int rc;
    cli_opts_init(&o);
    /* every -m given: two or more (or --list) plan each, best first */
    const char **models = calloc((size_t)argc, sizeof *models);
    if (!models)
        return out_of_memory();
    o.models = models;
    ggfit_request_init(req);
    /* llama.cpp's LLAMA_ARG_* variables first: a flag wins over them. */
    if ((rc = ggfit_request_env(req, &err))) {
        free(models);
        return report(rc, err);
    }
    /* -- llama-swap ...: its flags are its own; ggfit's come before */
    int swap = 1;
    while (swap < argc && strcmp(argv[swap], "--"))
        swap++;
    if (swap + 1 >= argc || strcmp(argv[swap + 1], "llama-swap"))
        swap = 0;
    rc = parse_flags(GGFIT_COMMAND_PLAN, &o, req, swap ? swap : argc, argv, 1);
    if (!rc && swap) {
        free(models);
        return print_router(argc, argv, o.order, o.plan_set, o.priority, o.json);
    }
    if (rc || o.line) {
        free(models);
        /* -- llama-bench ...: its own flags, and its tests planned as it runs them */
        return rc ? (rc < 0 ? 0 : rc) : bench_line(req, &o, argc, argv, o.line);
    }
    bool json = o.json, quiet = o.quiet, verbose = o.verbose;
    size_t n_models = o.n_models;
    if (req->program == GGFIT_FOR_SERVER && !req->model && !req->hf_repo && !req->model_url &&
        router_line(argc, argv)) {
        free(models);
        return print_router(argc, argv, o.order, o.plan_set, o.priority, json);
    }
    ggfit_fastest_options fo = o.fo;
    if (o.list || n_models > 1) {
        /* which quant?: -hf USER/MODEL --list, or several -m */
        ggfit_quant_list l;
        if (req->hf_repo)
            n_models = 0;
        req->fit.no_log = !json;   /* the table never shows the fits' logs */
        rc = ggfit_request_quants(req, models, n_models, &l, &err);
        free(models);
        if (rc)
            return report(rc, err);
        rc = emit(json ? ggfit_quant_list_json(&l) : ggfit_quant_list_text(&l), json);
        if (!rc)
            rc = ggfit_quant_list_exit_status(&l);
        ggfit_quant_list_free(&l);
        return rc;
    }
    free(models);
    if (fo.objective == GGFIT_OBJECTIVE_CONTEXT &&
        (o.speed_consts || fo.n_ctx_min || fo.quant_cache))
        return fail("--min-ctx, --quant-cache and the speed constants (--host-bw ...) go with "
                    "--objective speed|pp (the constants also with bench and sweep)");
    /* The fit's log is in the JSON, and in the text with -v only; the
     * fastest plan's text never shows it. */
    req->fit.no_log = !json && (!verbose || fo.objective != GGFIT_OBJECTIVE_CONTEXT);
    if (fo.objective != GGFIT_OBJECTIVE_CONTEXT)
        return print_fastest(req, &fo, line_of(&o, req, argc, argv), json, quiet);
    if (req->vs_version)
        return print_vs(req, plan, json);
    if ((rc = ggfit_request_plan(req, plan, &err)))
        return report(rc, err);
    rc = print_plan(plan, line_of(&o, req, argc, argv), json, quiet, verbose);
    ggfit_plan_free(plan);
    return rc;
}

static int cmd_project(int argc, char **argv)
{
    /* The request and the plan are a megabyte of flags (copies of
     * ggfit_params, mostly override slots a run never touches): on the
     * heap, which main puts on huge pages, rather than on the stack, where
     * each of the pages their initialisation touches is a fault. */
    struct { ggfit_request req; ggfit_plan plan; } *w = malloc(sizeof *w);
    if (!w)
        return out_of_memory();
    int rc = project_with(&w->req, &w->plan, argc, argv);
    free(w);
    return rc;
}


/* ggfit bench's answer (or a llama-bench line's) on stdout; the exit
 * status is the plan's (the deciding test's for a line). Frees b. */
static int print_bench(ggfit_bench_result *b, bool json, bool quiet)
{
    int rc = b->exit_status;
    char *out = quiet ? NULL : json ? ggfit_bench_json(b) : ggfit_bench_text(b);
    char why[320];
    if (quiet && rc)
        fprintf(stderr, "ggfit: %s: %s\n", b->tests[b->decides].name,
                ggfit_verdict_summary(&b->tests[b->decides].verdict, why, sizeof why));
    else if (!quiet && emit(out, json))
        rc = EXIT_BAD_INPUT;
    ggfit_bench_result_free(b);
    free(b);
    return rc;
}

/* The rest of a llama-bench command line, from argv[i] (after its
 * program's name): llama-bench's flags, the machine's (--gpu, --host-mem)
 * and the plan's --json, -q and speed constants (into o); its tests planned
 * (ggfit_bench_line). */
static int bench_line(ggfit_request *req, cli_opts *o, int argc, char **argv, int i)
{
    ggfit_bench_args *a = calloc(1, sizeof *a);
    ggfit_speed_options *so = &o->fo.speed;
    char *err = NULL;
    int rc;
    if (!a)
        return out_of_memory();
    ggfit_bench_args_init(a);
    while (i < argc) {
        bool used = false;
        ggfit_flag_info f;
        /* the plan's --json, -q and constants; the rest is llama-bench's */
        int which = flag_of(argv[i], GGFIT_COMMAND_PLAN, &f);
        if (which == GGFIT_CLI_JSON || which == GGFIT_CLI_QUIET ||
            (which > GGFIT_CLI_NONE && ggfit_speed_field(so, f.cli))) {
            if ((rc = tool_flag(GGFIT_COMMAND_PLAN, &f, o, argc, argv, &i))) {
                free(a);
                return rc;
            }
            continue;
        }
        if ((rc = ggfit_bench_parse_arg(a, req, argc, argv, &i, &used, &err))) {
            free(a);
            return report(rc, err);
        }
        if (!used) {
            free(a);
            return bad("llama-bench has no flag '%.*s%s' (tools/llama-bench/llama-bench.cpp), "
                       "nor has ggfit beside it", CLIP(argv[i]));
        }
    }
    ggfit_bench_result *b = calloc(1, sizeof *b);   /* a plan: large for a stack */
    if (!b) {
        free(a);
        return out_of_memory();
    }
    req->fit.no_log = true;
    rc = ggfit_bench_line(req, a, so, b, &err);
    free(a);
    if (rc) {
        free(b);
        return report(rc, err);
    }
    return print_bench(b, o->json, o->quiet);
}

/* ggfit bench: the plan's predicted llama-bench speeds (the library's
 * ggfit_bench); llama-bench's -p, -n, -d and the model's constants. */
static int cmd_bench(int argc, char **argv)
{
    ggfit_request req;
    cli_opts o;
    char *err = NULL;
    int rc;
    ggfit_request_init(&req);
    cli_opts_init(&o);
    if ((rc = ggfit_request_env(&req, &err)))
        return report(rc, err);
    if ((rc = parse_flags(GGFIT_COMMAND_BENCH, &o, &req, argc, argv, 0)))
        return rc < 0 ? 0 : rc;
    if (o.line)   /* a llama-bench line: its tests, planned */
        return bench_line(&req, &o, argc, argv, o.line);
    ggfit_speed_options so = o.fo.speed;
    /* llama-bench's context: the prompt, the generated tokens and the depth
     * (the deepest of a list) */
    uint32_t deepest = so.depth;
    for (uint32_t k = 0; k < so.n_depths; k++)
        deepest = so.depths[k] > deepest ? so.depths[k] : deepest;
    if (!req.params.set_n_ctx) {
        req.params.n_ctx = deepest + so.n_prompt + so.n_gen;
        req.params.set_n_ctx = true;
    }
    req.fit.no_log = true;   /* the speeds are printed, not the fit */
    ggfit_bench_result *b = calloc(1, sizeof *b);   /* a plan: large for a stack */
    if (!b)
        return out_of_memory();
    if ((rc = ggfit_bench(&req, &so, b, &err))) {
        free(b);
        return report(rc, err);
    }
    return print_bench(b, o.json, false);
}

/* ---- ggfit batch ---------------------------------------------------------- */

#define BATCH_LINE_MAX ((size_t)1 << 20)   /* a longer line is answered with an error */
#define BATCH_CHUNK 512                    /* lines read, answered, then written */

typedef struct batch_work {
    ggfit_batch *batch;
    char *lines[BATCH_CHUNK];
    size_t lens[BATCH_CHUNK];
    char *answers[BATCH_CHUNK];
    size_t n, next;
    pthread_mutex_t lock;
} batch_work;

static void *batch_worker(void *arg)
{
    batch_work *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        size_t k = w->next++;
        pthread_mutex_unlock(&w->lock);
        if (k >= w->n)
            return NULL;
        w->answers[k] = w->lines[k] ? ggfit_batch_answer(w->batch, w->lines[k], w->lens[k])
                                    : NULL;
    }
}

/* The next line of f without its end (CR LF or LF), in *line (malloc'd, *len
 * bytes); a line over BATCH_LINE_MAX is read past and given as NULL with
 * *len its length. 0 at the end of f, 1 a line, -1 out of memory. */
static int batch_read(FILE *f, char **line, size_t *len)
{
    size_t cap = 256, n = 0;
    char *buf = malloc(cap);
    int c;
    if (!buf)
        return -1;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (n + 1 >= cap && n < BATCH_LINE_MAX) {
            char *more = realloc(buf, cap * 2);
            if (!more) {
                free(buf);
                return -1;
            }
            buf = more;
            cap *= 2;
        }
        if (n < BATCH_LINE_MAX)
            buf[n] = (char)c;
        n++;
    }
    if (c == EOF && n == 0) {
        free(buf);
        return 0;
    }
    if (n > BATCH_LINE_MAX) {
        free(buf);
        *line = NULL;
        *len = n;
        return 1;
    }
    if (n && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    *line = buf;
    *len = n;
    return 1;
}

/* ggfit batch: JSON lines in, a plan (or an error) each out, in order
 * (the library's ggfit_batch_answer), answered by -j threads. */
static int cmd_batch(int argc, char **argv)
{
    cli_opts o;
    cli_opts_init(&o);
    int rc = parse_flags(GGFIT_COMMAND_BATCH, &o, NULL, argc, argv, 0);
    if (rc)
        return rc < 0 ? 0 : rc;
    FILE *in = o.n_files ? fopen(o.files[0], "r") : stdin;
    if (!in)
        return bad("%.*s%s: cannot open: %s", CLIP(o.files[0]), strerror(errno));
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t jobs = o.jobs ? o.jobs : ncpu < 1 ? 1 : ncpu > 256 ? 256 : (uint32_t)ncpu;
    batch_work *w = calloc(1, sizeof *w);
    pthread_t th[256];
    if (!w || !(w->batch = ggfit_batch_new()) || pthread_mutex_init(&w->lock, NULL)) {
        if (w)
            ggfit_batch_free(w->batch);
        free(w);
        if (in != stdin)
            fclose(in);
        return out_of_memory();
    }
    size_t line_no = 0;
    for (bool end = false; !end && !rc;) {
        /* a chunk of lines (blank ones are no question) */
        w->n = w->next = 0;
        while (w->n < BATCH_CHUNK) {
            char *line;
            size_t len;
            int got = batch_read(in, &line, &len);
            if (got <= 0) {
                end = true;
                rc = got < 0 ? out_of_memory() : 0;
                break;
            }
            line_no++;
            if (line && strspn(line, " \t") == len) {
                free(line);
                continue;
            }
            w->lines[w->n] = line;
            w->lens[w->n++] = len;
            if (!line) {   /* too long to read: its answer is this */
                char msg[160];
                snprintf(msg, sizeof msg, "{\"id\":null,\"error\":\"line %zu: %zu bytes, more "
                         "than the %zu a line may have\"}", line_no, len, BATCH_LINE_MAX);
                w->answers[w->n - 1] = strdup(msg);
            }
        }
        /* answered on the threads (this one too), then written in order */
        uint32_t started = 0;
        for (uint32_t t = 1; t < jobs && t < w->n; t++)
            if (pthread_create(&th[started], NULL, batch_worker, w) == 0)
                started++;
        batch_worker(w);
        for (uint32_t t = 0; t < started; t++)
            pthread_join(th[t], NULL);
        for (size_t k = 0; k < w->n; k++) {
            if (!w->answers[k] && !rc)
                rc = out_of_memory();
            else if (!rc && (fputs(w->answers[k], stdout) == EOF || putchar('\n') == EOF))
                rc = EXIT_BAD_INPUT;   /* main says why */
            free(w->lines[k]);
            ggfit_free(w->answers[k]);
            w->answers[k] = NULL;
        }
    }
    if (!rc && ferror(in))
        rc = bad("%s: read error", o.n_files ? o.files[0] : "standard input");
    if (in != stdin)
        fclose(in);
    pthread_mutex_destroy(&w->lock);
    ggfit_batch_free(w->batch);
    free(w);
    return rc;
}

/* ggfit sweep: memory and predicted speed against the context, -ngl or
 * -ncmoe (the library's ggfit_request_sweep), as a table, CSV, JSON, and
 * an SVG picture. */
static int cmd_sweep(int argc, char **argv)
{
    ggfit_request req;
    cli_opts o;
    char *err = NULL;
    int rc;
    ggfit_request_init(&req);
    cli_opts_init(&o);
    if ((rc = ggfit_request_env(&req, &err)))
        return report(rc, err);
    if ((rc = parse_flags(GGFIT_COMMAND_SWEEP, &o, &req, argc, argv, 0)))
        return rc < 0 ? 0 : rc;
    ggfit_speed_options so = o.fo.speed;
    const char *svg = o.svg;
    bool json = o.json, csv = o.csv;
    ggfit_sweep *sw = calloc(1, sizeof *sw);
    if (!sw)
        return out_of_memory();
    req.fit.no_log = true;   /* the points are printed, not the fits */
    if ((rc = ggfit_request_sweep(&req, o.axis, &so, sw, &err))) {
        free(sw);
        return report(rc, err);
    }
    if (svg) {
        char *pic = ggfit_sweep_svg(sw);
        FILE *f = pic ? fopen(svg, "w") : NULL;
        bool wrote = f && fputs(pic, f) >= 0;
        if (f && fclose(f) != 0)
            wrote = false;
        if (!wrote) {
            fprintf(stderr, "ggfit sweep: cannot write %s: %s\n", svg,
                    pic ? strerror(errno) : "out of memory");
            ggfit_free(pic);
            free(sw);
            return EXIT_BAD_INPUT;
        }
        ggfit_free(pic);
        fprintf(stderr, "ggfit: wrote %s\n", svg);
    }
    rc = emit(json ? ggfit_sweep_json(sw) : csv ? ggfit_sweep_csv(sw) : ggfit_sweep_text(sw),
              json);
    free(sw);
    return rc;
}

static int run(int argc, char **argv);

/*
 * The heap on transparent huge pages. A run is short and touches 2 to 3 MB
 * of fresh heap (graphs, the scheduler's and ggml-alloc's tables): 400 to 700
 * page faults at about 2 us each, a fifth of a fit's time. Where the kernel
 * gives huge pages on request (transparent_hugepage "madvise" or "always"),
 * the heap is grown once by 8 MB past its start, the part from the next 2 MB
 * boundary on is marked MADV_HUGEPAGE before anything touches it, and the
 * gap up to that boundary is held by one block never touched, so that
 * malloc's later blocks come from the marked part: one fault per 2 MB.
 * Large blocks stay on the heap too (M_MMAP_THRESHOLD), and it is not
 * trimmed. glibc's malloc only: another allocator (valgrind's, a
 * sanitizer's) fails the check on where the block landed, and nothing is
 * marked. GGFIT_HEAP=plain leaves the heap alone.
 */
static void heap_on_huge_pages(void)
{
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE) && !defined(GGFIT_SANITIZED)
    static void *heap_gap;
    const uintptr_t huge = (uintptr_t)2 << 20;
    const char *env = getenv("GGFIT_HEAP");
    if (env && !strcmp(env, "plain"))
        return;
    /* Room to grow the heap by 10 MB (a memory limit may not leave it),
     * asked of the kernel and handed back before malloc is told anything. */
    if (sbrk(10 << 20) == (void *)-1)
        return;
    sbrk(-(10 << 20));
    if (!mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TRIM_THRESHOLD, 64 << 20))
        return;
    void *volatile first = malloc(1);   /* the arena exists from here */
    free(first);
    struct mallinfo2 mi = mallinfo2();
    uintptr_t end = (uintptr_t)sbrk(0);
    if (end == (uintptr_t)-1 || mi.keepcost == 0 || mi.keepcost > end)
        return;
    uintptr_t top = end - mi.keepcost;  /* malloc's top block: the free end */
    /* The first 2 MB boundary past the heap's end (a static program's C
     * library has started the arena before main, and its top may hold the
     * next one): the gap's block, past the top, then grows the heap by it
     * and the top pad, and ends 48 bytes before the boundary, where malloc
     * writes the next block's header at once. The boundary's huge page
     * stays untouched until it is marked. */
    uintptr_t start = (top + 4096 + huge - 1) & ~(huge - 1);
    while (start <= end)
        start += huge;
    if (!mallopt(M_TOP_PAD, 8 << 20))
        return;
    heap_gap = malloc(start - top - 64);
    if ((uintptr_t)heap_gap != top + 16 || (uintptr_t)sbrk(0) < start + huge) {
        /* not the heap expected (or no room to grow it: a memory limit):
         * glibc's defaults back (without its sliding mmap threshold) */
        free(heap_gap);
        heap_gap = NULL;
        mallopt(M_TOP_PAD, 128 << 10);
        mallopt(M_TRIM_THRESHOLD, 128 << 10);
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
        return;
    }
    end = (uintptr_t)sbrk(0) & ~(huge - 1);
    madvise((void *)start, end - start, MADV_HUGEPAGE);
#endif
}

/* Output that could not be written (a full disk, a closed pipe) is a
 * failure, not a success. */
int main(int argc, char **argv)
{
    main_argv = argv;
    heap_on_huge_pages();
    int rc = run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ggfit: cannot write the output: %s\n", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    return rc;
}

/* A first word that is neither a flag nor a command: a model's file given
 * without -m, or a command mistyped. */
static int not_a_command(const char *w)
{
    size_t n = strlen(w);
    if (strchr(w, '/') || (n > 5 && !strcmp(w + n - 5, ".gguf")) || access(w, F_OK) == 0)
        return bad("%.*s%s: give the model with -m: ggfit -m %.*s%s", CLIP(w), CLIP(w));
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t k = 1; k < sizeof commands / sizeof commands[0]; k++)
        names[k - 1] = commands[k].name;
    const char *near = ggfit_nearest_word(w, names, sizeof commands / sizeof commands[0] - 1, 2);
    if (near)
        return bad("'%.*s%s' is not a command: did you mean %s?", CLIP(w), near);
    return bad("'%.*s%s' is not a command: inspect, devices, archs, reorder, bench, sweep, batch",
               CLIP(w));
}

static int run(int argc, char **argv)
{
    /* what a run sets for the process, as it starts (in WebAssembly one
     * process runs main again and again) */
    running = GGFIT_COMMAND_PLAN;
    ggfit_text_set_columns(GGFIT_TEXT_COLS);
    if (argc < 2)
        return bad("no model: ggfit -m FILE [flags], or a command (inspect, devices, ...)");
    if (!strcmp(argv[1], "--version")) {
        /* and the llama.cpp versions it is exact for, newest (the default) last */
        printf("ggfit %s\nexact for llama.cpp", GGFIT_VERSION);
        for (size_t i = 0; ggfit_llama_version_supported(i); i++) {
            ggfit_llama_version v;
            char b[16], text[256];
            snprintf(b, sizeof b, "b%u", ggfit_llama_version_supported(i));
            if (ggfit_llama_version_parse(b, &v, NULL) == GGFIT_OK)
                printf("%s %s", i ? "," : "", ggfit_llama_version_str(&v, text, sizeof text));
        }
        printf("; the newest is the default (--llama-version)\n");
        return 0;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout, GGFIT_COMMAND_PLAN);
        return 0;
    }
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } cmds[] = {
        { "inspect", cmd_inspect }, { "devices", cmd_devices }, { "archs", cmd_archs },
        { "reorder", cmd_reorder }, { "bench", cmd_bench }, { "sweep", cmd_sweep },
        { "batch", cmd_batch },
    };
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        if (!strcmp(argv[1], cmds[k].name)) {
            for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
                if (!strcmp(commands[c].name, cmds[k].name))
                    running = commands[c].bit;
            return cmds[k].run(argc - 2, argv + 2);
        }
    if (argv[1][0] == '-')
        return cmd_project(argc, argv);
    return not_a_command(argv[1]);
}
