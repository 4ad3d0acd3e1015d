#!/bin/sh
# run.sh BUILD_DIR MODELS - runs every test binary and the CLI checks, then
# closes with one line: "tests: N passed, N failed" (cmocka test counts).
b=$1
models=$2
shift 2
# The speed model measures this machine's memory for plans on it (and
# keeps the figure in the cache folder): the suite takes the default instead,
# so that no figure depends on this machine; the tests of the measured
# figure set their own.
GGFIT_HOST_BW=default
export GGFIT_HOST_BW
# llama.cpp's config files (/etc/llama.cpp, ~/.config/llama.cpp) are this
# machine's: none for the suite (tests/test_versions.c names its own).
GGFIT_LLAMA_CONFIG=
export GGFIT_LLAMA_CONFIG
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# run_test TEST [VAR=VALUE ...]: one test binary, its counts added.
run_test() {
    t=$1
    shift
    echo "== $t${1:+ ($*)}"
    env "$@" GGFIT_MODELS=$models GGFIT_MALFORMED=tests/malformed $b/tests/$t >"$log" 2>&1
    rc=$?
    grep -vE '^\[ (RUN|      OK) ' "$log"
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log")
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log")
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    # A crash or a binary that ran nothing is a failure too.
    if [ "$rc" -ne 0 ] && [ -z "$f" ] || [ -z "$p$f" ]; then
        echo "$t: exit status $rc"
        failed=$((failed + 1))
    fi
}
# The JSON documents only the library prints (ggfit_projection_json, ...),
# kept by the tests that make them (keep_json), valid against docs/schema/
# as the CLI's are (tests/cli.sh)
json_dir=$(mktemp -d)
GGFIT_JSON_DIR=$json_dir
export GGFIT_JSON_DIR
trap 'rm -f "$log"; rm -rf "$json_dir"' EXIT
for t in "$@"; do
    run_test "$t"
done
unset GGFIT_JSON_DIR
echo "== json (library)"
if ls "$json_dir"/*.json >/dev/null 2>&1 && python3 tools/jsonschema_check.py "$json_dir"/*.json; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi
# The two paths of a split (src/llama/graph_cache.h, GGFIT_CACHE): the runs
# above take the library's default (a plain split, resumed ones in fits);
# the recorded graphs, the kept graphs and the fits again with every cached
# piece on, each resume checked against a split from scratch, and with none.
for t in test_sched test_cache test_oracle_fit; do
    run_test "$t" GGFIT_CACHE=all GGFIT_SCHED_VERIFY=1
    run_test "$t" GGFIT_CACHE=none
done
echo "== cli"
if sh tests/cli.sh "$b/ggfit" "$models" >"$log" 2>&1; then :; fi
cat "$log"
p=$(sed -n 's/^cli: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log")
f=$(sed -n 's/^cli: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log")
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-1}))
# The CPU's speed model against llama-bench as run on this project's
# machine (data/speed/local.csv): every row within 25%.
echo "== speed (local)"
if sh tests/speed_local.sh "$b/ggfit"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
# llama-server's router run here (tools/routercmp.py, recorded): each
# child's fit and what it held, against ggfit's plan of the same order
echo "== router (recorded)"
if python3 tools/routercmp.py --replay tests/router/real-b10587.txt --ggfit "$b/ggfit" >"$b/router-real.log" 2>&1 &&
    tail -1 "$b/router-real.log"; then passed=$((passed + 1)); else cat "$b/router-real.log"; failed=$((failed + 1)); fi
# The Python module (ctypes over libggfit.so) installed with pip into a
# venv, then pytest; the plain build only (a sanitizer's library needs its
# runtime preloaded into python).
if [ "$(basename "$b")" = build ]; then
    echo "== python"
    if sh tests/python.sh "$b"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
fi
# llama.cpp loading real models through include/ggfit_llama.h
# (tools/llamaload.py: examples/llama_load.c on rpc-servers and the CPU),
# its breakdown against ggfit's projection; where no llama.cpp build is
# found it says so and passes. The plain build only, as above.
if [ "$(basename "$b")" = build ]; then
    echo "== llama.cpp load"
    if python3 tools/llamaload.py --ggfit-build "$b" >"$b/llamaload.log" 2>&1; then
        tail -1 "$b/llamaload.log"
        passed=$((passed + 1))
    else
        cat "$b/llamaload.log"
        failed=$((failed + 1))
    fi
fi
echo "== symbols"
if sh tests/symbols.sh "$b"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
# make install into a DESTDIR of its own, and what it installed used as a
# user would (tests/install.sh); make's variables come with MAKEFLAGS.
echo "== install"
if sh tests/install.sh "$b" "$models"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
echo "== folders"
if python3 tools/folder_cycles.py "$b/obj"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
echo "== stages"
if python3 tools/stages.py "$b/obj"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
