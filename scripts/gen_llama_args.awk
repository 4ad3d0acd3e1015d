# gen_llama_args.awk - turns data/llama_args.tsv (llama.cpp's flags, from
# tools/llama_args.py) into the C table src/common/llama_args.c includes.
# Run: awk -f gen_llama_args.awk FILE
#
# The rows hold their strings, in arrays as long as the longest of each
# column, rather than pointers to them: a table of pointers needs one
# relocation per string (some 1,400), each written by the loader at every
# start, and the pages that hold them copied. The programs column is not
# used by ggfit and is left out.
BEGIN { FS = "\t"; n = 0; w[1] = w[2] = w[4] = 1 }
function fail(why) {
    printf "%s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"
    exit 1
}
function width(k, s) {
    if (s ~ /["\\]/) fail("a quote or backslash in \"" s "\"")
    if (length(s) + 1 > w[k])
        w[k] = length(s) + 1
}
/^#/ || /^[ \t]*$/ { next }
{
    if (NF != 5) fail("expected 5 tab-separated fields, got " NF)
    if ($1 !~ /^-/) fail("names must start with -")
    if ($3 !~ /^[0-2]$/) fail("values must be 0, 1 or 2")
    neg = $2 == "-" ? "" : $2
    env = $4 == "-" ? "" : $4
    width(1, $1); width(2, neg); width(4, env)
    rows[n++] = sprintf("    { \"%s\", \"%s\", %d, \"%s\" },", $1, neg, $3, env)
}
END {
    print "/* Generated from data/llama_args.tsv by scripts/gen_llama_args.awk; do not edit. */"
    print "typedef struct llama_arg {"
    printf "    char names[%d];    /* comma-separated, as llama.cpp spells them */\n", w[1]
    printf "    char negated[%d];  /* the --no-... names, or \"\" */\n", w[2]
    print  "    int values;         /* 0, 1 or 2 */"
    printf "    char env[%d];      /* LLAMA_ARG_..., or \"\" */\n", w[4]
    print "} llama_arg;"
    print ""
    print "static const llama_arg llama_args[] = {"
    for (i = 0; i < n; i++) print rows[i]
    print "};"
}
