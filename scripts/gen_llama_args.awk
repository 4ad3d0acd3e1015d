# gen_llama_args.awk - turns data/llama_args.tsv (llama.cpp's flags, from
# tools/llama_args.py) into the C table src/common/llama_args.c includes.
# Run: awk -f gen_llama_args.awk FILE
BEGIN { FS = "\t"; n = 0 }
function fail(why) {
    printf "%s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"
    exit 1
}
/^#/ || /^[ \t]*$/ { next }
{
    if (NF != 5) fail("expected 5 tab-separated fields, got " NF)
    if ($1 !~ /^-/) fail("names must start with -")
    if ($3 !~ /^[0-2]$/) fail("values must be 0, 1 or 2")
    neg = $2 == "-" ? "" : $2
    env = $4 == "-" ? "" : $4
    rows[n++] = sprintf("    { \"%s\", \"%s\", %d, \"%s\", \"%s\" },", $1, neg, $3, env, $5)
}
END {
    print "/* Generated from data/llama_args.tsv by scripts/gen_llama_args.awk; do not edit. */"
    print "static const llama_arg llama_args[] = {"
    for (i = 0; i < n; i++) print rows[i]
    print "};"
}
