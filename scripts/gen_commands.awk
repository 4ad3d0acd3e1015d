# gen_commands.awk - data/commands.txt (each command's synopsis, its entry
# in the plan's list of commands and what its -h says) as the rows of
# cli/ggfit.c's table of commands, which usage() prints before the flags.
# Run: awk -f gen_commands.awk data/commands.txt >build/commands_data.h
#
# A row: { name ("" the plan), GGFIT_COMMAND_*, synopsis, about }: the
# synopsis's lines after the first with the 7 columns of "usage: " before
# them; the plan's about is "commands:" and every command's summary, its
# name in columns 3 to 12 ("(none)" the plan), the text from column 13.
BEGIN { n = 0; part = "" }
function fail(why) {
    printf "%s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"
    failed = 1
    exit 1
}
function c_string(s) {   # s as a C string literal's inside
    gsub(/\\/, "\\\\", s)
    gsub(/"/, "\\\"", s)
    return s
}
/^#/ || /^$/ { next }
/^command / {
    name[n] = $2
    if (NF != 2 || name[n] !~ /^[a-z]+$/) fail("expected: command NAME")
    if ((name[n] in seen) || (n == 0) != (name[n] == "plan"))
        fail(name[n] ": the plan first, then each command once")
    seen[name[n]] = 1
    n++
    part = ""
    next
}
/^(synopsis|summary|about)$/ {
    if (!n) fail("a part before the first command")
    part = $0
    if ((n - 1, part) in has) fail(name[n - 1] ": two " part "s")
    has[n - 1, part] = 1
    next
}
/^\t/ {
    if (part == "") fail("a text line outside a part")
    line = substr($0, 2)
    if (length(line) + (part == "summary" ? 12 : part == "synopsis" ? 7 : 0) > 80)
        fail("past 80 columns as printed")
    k = n - 1
    if (part == "synopsis")
        syn[k] = syn[k] (syn[k] == "" ? "" : "       ") c_string(line) "\\n"
    else if (part == "summary")
        summ[k] = summ[k] (summ[k] == "" ? sprintf("  %-10s", k ? name[k] : "(none)") \
                                          : "            ") c_string(line) "\\n"
    else
        about[k] = about[k] c_string(line) "\\n"
    next
}
{ fail("expected a comment, command NAME, a part's keyword or a tab and text") }
END {
    if (failed) exit 1
    FNR = 0
    for (k = 0; k < n; k++) {
        if (syn[k] == "" || summ[k] == "") fail(name[k] ": no synopsis or summary")
        if ((k == 0) != (about[k] == "")) fail(name[k] ": an about (the plan: none)")
    }
    about[0] = "commands:\\n"
    for (k = 0; k < n; k++)
        about[0] = about[0] summ[k]
    print "/* Generated from data/commands.txt by scripts/gen_commands.awk; do not"
    print " * edit. The rows of cli/ggfit.c's table of commands. */"
    for (k = 0; k < n; k++) {
        printf "{ \"%s\", GGFIT_COMMAND_%s,\n  \"%s\",\n  \"%s\" },\n", k ? name[k] : "",
               toupper(name[k]), syn[k], about[k]
    }
}
