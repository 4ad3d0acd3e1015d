# gen_catalog.awk - turns data/gpus.tsv (the catalog of GPUs and Macs) into
# the C table src/catalog.c includes. Every line is checked; a bad one stops
# the build with FILE:LINE and the reason. Run: awk -f gen_catalog.awk FILE
BEGIN {
    FS = "\t"
    kinds["cuda"] = "GGFIT_BACKEND_CUDA"; kinds["rocm"] = "GGFIT_BACKEND_ROCM"
    kinds["vulkan"] = "GGFIT_BACKEND_VULKAN"; kinds["metal"] = "GGFIT_BACKEND_METAL"
    n = 0; bad = 0
}
function fail(why) {
    printf "%s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"
    bad = 1
    exit 1
}
function cstr(s) {
    gsub(/\\/, "\\\\", s)
    gsub(/"/, "\\\"", s)
    return "\"" s "\""
}
/^#/ || /^[ \t]*$/ { next }
{
    if (NF != 7) fail("expected 7 tab-separated fields, got " NF)
    id = $1; name = $2; kind = $3; mem = $4; sys = $5; bw = $6; src = $7
    if (id !~ /^[a-z][a-z0-9-]*$/ || length(id) > 47)
        fail("id '" id "' is not a lowercase letter then [a-z0-9-] (at most 47 characters)")
    if (id in seen) fail("id '" id "' repeats line " seen[id])
    seen[id] = FNR
    if (name == "" || length(name) > 127) fail("name is empty or longer than 127 characters")
    if (!(kind in kinds)) fail("kind '" kind "' is not cuda, rocm, vulkan or metal")
    if (bw !~ /^[0-9]+(\.[0-9]+)?$/ || bw + 0 <= 0) fail("bandwidth '" bw "' is not a positive number")
    if (src !~ /[A-Za-z]/) fail("no source")
    if (mem == "metal") {
        if (kind != "metal") fail("memory 'metal' needs kind metal")
        if (sys !~ /^[1-9][0-9]*$/) fail("a Mac needs its unified memory in GiB, got '" sys "'")
        memory = "GGFIT__METAL_WS(GGFIT__GIB(" sys "))"
        sysmem = "GGFIT__GIB(" sys ")"
    } else {
        if (mem !~ /^[1-9][0-9]*$/) fail("memory '" mem "' is not a whole number of GiB")
        if (sys != "-" && sys !~ /^[1-9][0-9]*$/)
            fail("system memory is a whole number of GiB (unified memory), or '-' for a GPU")
        if (sys != "-" && sys + 0 < mem + 0) fail("a unified GPU has at most the system's memory")
        memory = "GGFIT__GIB(" mem ")"
        sysmem = sys == "-" ? "0" : "GGFIT__GIB(" sys ")"
    }
    rows[n++] = sprintf("    { %s, %s, %s, %s, %s, %s, %s },", cstr(id), cstr(name),
                        kinds[kind], memory, sysmem, bw + 0 == int(bw) ? bw ".0" : bw, cstr(src))
}
END {
    if (bad) exit 1
    if (n == 0) { printf "%s: no devices\n", FILENAME > "/dev/stderr"; exit 1 }
    print "/* Generated from data/gpus.tsv by scripts/gen_catalog.awk; do not edit. */"
    print "static const ggfit_catalog_entry catalog[] = {"
    for (i = 0; i < n; i++) print rows[i]
    print "};"
}
