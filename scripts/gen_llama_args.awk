# gen_llama_args.awk - joins data/flags.tsv (what ggfit does with each flag,
# and ggfit's own flags) and data/llama_args.tsv (llama.cpp's flags, from
# tools/llama_args.py) into the one table of flags that
# src/common/llama_args.c includes.
# Run: awk -f gen_llama_args.awk data/flags.tsv data/llama_args.tsv
#
# The rows hold their strings, in arrays as long as the longest of each
# column, rather than pointers to them: a table of pointers needs one
# relocation per string (some 1,400), each written by the loader at every
# start, and the pages that hold them copied.
#
# Rows: llama.cpp's, in data/llama_args.tsv's order (the order llama.cpp
# reads LLAMA_ARG_* in), then ggfit's own in data/flags.tsv's order. A name
# is in one row only (but for the rows llama.cpp itself repeats, and the
# command line tool's, which may take a name of llama.cpp's for its own
# commands). The help texts are members of one struct (flag_help), which a
# row names by offset; flag_order lists the rows data/flags.tsv names first,
# in its order (--help's and the man page's), then the rest.
BEGIN {
    FS = "\t"; n = 0; n_own = 0; n_help = 1
    w["names"] = w["neg"] = w["env"] = w["ex"] = w["pr"] = w["mv"] = w["val"] = 1
    help[0] = ""
}
function fail(why) {
    printf "%s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"
    failed = 1
    exit 1
}
function width(k, s) {
    if (s ~ /["\\]/) fail("a quote or backslash in \"" s "\"")
    if (length(s) + 1 > w[k])
        w[k] = length(s) + 1
}
function upper(s) { s = toupper(s); gsub(/-/, "_", s); return s }
function named(list, a,    m, p, i) {
    m = split(list, p, ",")
    for (i = 1; i <= m; i++)
        if (p[i] == a)
            return 1
    return 0
}
function kind_values(k) { return k == "bool" ? 0 : k == "pair" ? 2 : 1 }
# ggfit's commands that take a flag (GGFIT_COMMAND_*); "-" or "=": those
# that hand the library's flags to ggfit_request_parse_arg
function commands(list, scope,    out, m, p, i) {
    if (list == "-" || list == "=") {
        if (scope == "cli") fail("a row of scope cli names its commands")
        list = "plan,bench,sweep"
    }
    m = split(list, p, ",")
    out = ""
    for (i = 1; i <= m; i++) {
        if (p[i] !~ /^(plan|inspect|devices|archs|reorder|bench|sweep|batch)$/)
            fail("unknown command " p[i])
        out = out "|GGFIT_COMMAND_" upper(p[i])
    }
    return substr(out, 2)
}
# llama.cpp's LLAMA_EXAMPLE_* list (or data/flags.tsv's server, cli, bench,
# fit-params) as the programs ggfit plans for
function progs(list,    out, m, p, i) {
    if (list == "all")
        return "GGFIT_PROGRAM_SERVER|GGFIT_PROGRAM_CLI|GGFIT_PROGRAM_BENCH|GGFIT_PROGRAM_FIT_PARAMS"
    m = split(list, p, ",")
    out = ""
    for (i = 1; i <= m; i++) {
        # ggfit's own rows name the programs in lower case
        p[i] = p[i] == "bench" ? "LLAMA_BENCH" : upper(p[i])
        if (p[i] == "COMMON")
            out = out "|GGFIT_PROGRAM_SERVER|GGFIT_PROGRAM_CLI|GGFIT_PROGRAM_FIT_PARAMS"
        else if (p[i] == "SERVER")
            out = out "|GGFIT_PROGRAM_SERVER"
        else if (p[i] == "CLI")
            out = out "|GGFIT_PROGRAM_CLI"
        else if (p[i] == "FIT_PARAMS")
            out = out "|GGFIT_PROGRAM_FIT_PARAMS"
        else if (p[i] == "LLAMA_BENCH")   # llama-bench's own parser takes it too
                                           # (arg.cpp's BENCH is llama-batched-bench)
            out = out "|GGFIT_PROGRAM_BENCH"
    }
    return out == "" ? "0" : substr(out, 2)
}
# a row's scope as ggfit_flag_scope names it
function scope_name(scope) {
    return scope == "ggfit" ? "MACHINE" : scope == "cli" ? "TOOL" : upper(scope)
}
# data/llama_args.tsv's builds column as the row's initialiser fields:
# since, until, programs before a build and that build, a value taken from
# a build and that build (0 and "" for none)
function builds(b,    since, until, pb, pbb, val, vb, m, t, i, f) {
    since = until = pbb = vb = 0; pb = "0"; val = ""
    if (b != "-" && b != "") {
        m = split(b, t, /; */)
        for (i = 1; i <= m; i++) {
            if (t[i] ~ /^since [0-9]+$/) since = substr(t[i], 7) + 0
            else if (t[i] ~ /^until [0-9]+$/) until = substr(t[i], 7) + 0
            else if (t[i] ~ /^programs<[0-9]+ [A-Z_,]+$/) {
                split(substr(t[i], 10), f, " ")
                pbb = f[1] + 0; pb = progs(f[2])
            } else if (t[i] ~ /^value [^ ]+ since [0-9]+$/) {
                if (val != "") fail("one value with a build per row")
                split(t[i], f, " ")
                val = f[2]; vb = f[4] + 0
            } else fail("unknown builds term '" t[i] "'")
        }
    }
    width("val", val)
    return sprintf("%d, %d, %s, %d, \"%s\", %d", since, until, pb, pbb, val, vb)
}
function row(names, neg, env, pr, kind, lands, scope, mem, ex, prints, cmds, mv, hl, bl,    h, cli) {
    if (neg == "-") neg = ""
    if (env == "-") env = ""
    if (ex == "-") ex = ""
    if (prints == "-") prints = ""
    if (mv == "-" || mv == "=") mv = ""
    width("names", names); width("neg", neg); width("env", env); width("ex", ex)
    width("pr", prints); width("mv", mv)
    h = 0
    if (hl != "-" && hl != "=" && hl != "") {
        width("help", hl)
        h = n_help
        help[n_help++] = hl
    }
    cli = "GGFIT_CLI_NONE"
    if (scope == "cli") {
        if (lands !~ /^[a-z_]+$/) fail(names ": a row of scope cli lands at its own name")
        cli = "GGFIT_CLI_" upper(lands)
        lands = "cli"
    }
    if (prints != "" && !named(names, prints) && !named(neg, prints))
        fail(names ": prints " prints ", not one of its names")
    if (kind !~ /^(bool|int|number|size|enum|list|regex|path|text|pair)$/)
        fail("unknown kind " kind)
    if (scope !~ /^(model|context|ggfit|draft|projector|cli|other)$/) fail("unknown scope " scope)
    if (mem !~ /^(counted|uncounted|uncounted-off|none)$/) fail("unknown memory " mem)
    if ((kind == "bool") != (ex == "")) fail(names ": a bool has no example, a value has one")
    return sprintf("    { \"%s\", \"%s\", \"%s\", \"%s\", \"%s\", \"%s\", HELP(%d), GGFIT_FLAG_%s, " \
                   "GGFIT__AT_%s, GGFIT_SCOPE_%s, %s, GGFIT__MEM_%s, %d, %s, %s, %d, %s },", names,
                   neg, env, ex, prints, mv, h, upper(kind), upper(lands), scope_name(scope),
                   progs(pr), upper(mem), kind_values(kind), commands(cmds, scope), cli,
                   bl != "", builds(bl))
}
# every name of a row, once in the whole table (a row of the command line
# tool's, scope cli, may take a name of llama.cpp's)
function claim(list, where, cli,    m, p, i) {
    m = split(list, p, ",")
    for (i = 1; i <= m; i++) {
        if (p[i] !~ /^-/) fail("names must start with -: " p[i])
        if ((p[i] in owner) && owner[p[i]] != where && !(cli && !(p[i] in cli_owner)))
            fail(p[i] " is in two rows")
        if (cli)
            cli_owner[p[i]] = where
        else
            owner[p[i]] = where
    }
}
/^#/ || /^[ \t]*$/ { next }
FILENAME == ARGV[1] {
    if (NF != 13) fail("expected 13 tab-separated fields, got " NF)
    if ($2 == "=") {
        if ($3 != "=" || ($4 != "=" && $4 != "=,bench"))
            fail("a llama.cpp row takes its negated, env and programs from data/llama_args.tsv")
        if ($1 in ext) fail($1 " given twice")
        ext[$1] = $0
        ext_line[$1] = FNR
        used[$1] = 0
    } else {
        own_line[n_own] = FNR
        own[n_own++] = $0
    }
    next
}
{
    if (NF != 6) fail("expected 6 tab-separated fields, got " NF)
    if ($3 !~ /^[0-2]$/) fail("values must be 0, 1 or 2")
    claim($1, $1, 0); if ($2 != "-") claim($2, $1, 0)
    m = split($1 ($2 == "-" ? "" : "," $2), nm, ",")
    key = ""
    for (i = 1; i <= m; i++)
        if (nm[i] in ext) {
            if (key != "" && key != nm[i]) fail("two rows of data/flags.tsv for " $1)
            key = nm[i]
        }
    if (key == "") {
        kind = $3 == 0 ? "bool" : $3 == 2 ? "pair" : "text"
        rank[n] = 100000 + n
        rows[n++] = row($1, $2, $4, $5, kind, "note", "other", "none", $3 ? "1" : "-", "-",
                        "-", "-", "-", $6)
        next
    }
    used[key] = 1
    split(ext[key], e, "\t")
    kind = e[5] == "=" ? ($3 == 0 ? "bool" : $3 == 2 ? "pair" : "text") : e[5]
    if (kind_values(kind) != $3)
        fail($1 ": kind " kind " in data/flags.tsv, but llama.cpp takes " $3 " values")
    ex = e[9] == "=" ? ($3 ? "1" : "-") : e[9]
    rank[n] = ext_line[key]
    rows[n++] = row($1, $2, $4, $5 (e[4] == "=,bench" ? ",LLAMA_BENCH" : ""), kind, e[6], e[7], e[8],
                    ex, e[10], e[11], e[12], e[13], $6)
}
END {
    if (failed) exit 1
    for (k in used)
        if (!used[k]) {
            FILENAME = ARGV[1]
            FNR = ext_line[k]
            fail(k " is not a flag of data/llama_args.tsv")
        }
    for (i = 0; i < n_own; i++) {
        split(own[i], e, "\t")
        FILENAME = ARGV[1]; FNR = own_line[i]
        claim(e[1], e[1], e[7] == "cli"); if (e[2] != "-") claim(e[2], e[1], e[7] == "cli")
        rank[n] = own_line[i]
        rows[n++] = row(e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10], e[11],
                        e[12], e[13], "")
    }
    # the order of help: data/flags.tsv's lines, then the table's (stable)
    for (i = 0; i < n; i++)
        order[i] = i
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && rank[order[j - 1]] > rank[order[j]]; j--) {
            t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
        }
    print "/* Generated from data/flags.tsv and data/llama_args.tsv by"
    print " * scripts/gen_llama_args.awk; do not edit. */"
    print "#include <stddef.h>"
    print ""
    print "/* The help texts, one member each (no pointers: no relocations). */"
    print "static const struct flag_help_t {"
    for (i = 0; i < n_help; i++)
        printf "    char h%d[%d];\n", i, length(help[i]) + 1
    print "} flag_help = {"
    for (i = 0; i < n_help; i++)
        printf "    \"%s\",\n", help[i]
    print "};"
    print "#define HELP(k) ((unsigned short)offsetof(struct flag_help_t, h##k))"
    print ""
    print "typedef struct flag_row {"
    printf "    char names[%d];    /* comma-separated, as llama.cpp spells them */\n", w["names"]
    printf "    char negated[%d];  /* the --no-... names, or \"\" */\n", w["neg"]
    printf "    char env[%d];      /* LLAMA_ARG_..., or \"\" */\n", w["env"]
    printf "    char example[%d];  /* a valid value, \"\" for a bool */\n", w["ex"]
    printf "    char prints[%d];   /* the name a printed plan gives it, or \"\" */\n", w["pr"]
    printf "    char metavar[%d];  /* its value in the help, or \"\" */\n", w["mv"]
    print  "    unsigned short help;  /* offset of its text in flag_help (0: none) */"
    print  "    unsigned char kind, lands, scope, programs, memory, values, commands, cli;"
    print  "    unsigned char llama;  /* llama.cpp's (data/llama_args.tsv), not ggfit's own */"
    print  "    unsigned since, until;  /* its first and last build (0: every supported one) */"
    print  "    unsigned char programs_before;  /* its programs before build programs_until */"
    print  "    unsigned programs_until;"
    printf "    char value[%d];    /* a value its handler takes from build value_since */\n", w["val"]
    print  "    unsigned value_since;"
    print "} flag_row;"
    print ""
    print "static const flag_row flag_rows[] = {"
    for (i = 0; i < n; i++) print rows[i]
    print "};"
    print ""
    print "/* The rows data/flags.tsv names, in its order, then the rest. */"
    print "static const unsigned short flag_order[] = {"
    line = "   "
    for (i = 0; i < n; i++) {
        if (length(line) > 90) { print line; line = "   " }
        line = line " " order[i] ","
    }
    print line
    print "};"
}
