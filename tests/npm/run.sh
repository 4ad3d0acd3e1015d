#!/bin/sh
# run.sh TARBALL GGFIT MODELS - the npm package as a user gets it: the
# tarball npm pack made, installed into an empty folder (no network: the
# package depends on nothing), and `npx ggfit` run there with the same
# flags as the native ggfit, whose output (stdout, stderr and exit status)
# it must equal, byte for byte: plans in text and JSON, a pasted
# llama-server line, bench, sweep, inspect, an error, and a Hugging Face
# repo and a URL read over HTTP from tests/http_server.sh.
set -u
tgz=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ggfit=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
models=$(cd "$3" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
command -v npm >/dev/null || { echo "npm: node's npm is not installed: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'sh "$here/../http_server.sh" stop "$dir/srv" >/dev/null 2>&1; rm -rf "$dir"' EXIT
mkdir -p "$dir/app" "$dir/srv"
(cd "$dir/app" && npm init -y >/dev/null && npm install --offline --no-audit --no-fund "$tgz" >/dev/null) ||
    { echo "FAIL npm install of $tgz"; exit 1; }
pass=0
fail=0
# both ARGS...: npx ggfit and the native CLI, from the same folder, into
# $dir/w.* and $dir/n.* (out, err, rc)
both() {
    (cd "$dir/app" && npx --offline ggfit "$@" >"$dir/w.out" 2>"$dir/w.err"; echo $? >"$dir/w.rc")
    (cd "$dir/app" && "$ggfit" "$@" >"$dir/n.out" 2>"$dir/n.err"; echo $? >"$dir/n.rc")
}
# same ARGS...: the same stdout, stderr and exit status
same() {
    both "$@"
    if cmp -s "$dir/w.out" "$dir/n.out" && cmp -s "$dir/w.err" "$dir/n.err" &&
       cmp -s "$dir/w.rc" "$dir/n.rc"; then
        pass=$((pass + 1))
        echo "ok npx ggfit $*"
    else
        fail=$((fail + 1))
        echo "FAIL npx ggfit $* (exit $(cat "$dir/w.rc"), native $(cat "$dir/n.rc"))"
        diff "$dir/n.out" "$dir/w.out" | head -5
        diff "$dir/n.err" "$dir/w.err" | head -5
    fi
}
# like ARGS...: the same exit status and output, and the same first words
# of the message (a bad -ot pattern: PCRE2 and JavaScript's RegExp say why
# in their own words)
like() {
    both "$@"
    if cmp -s "$dir/w.out" "$dir/n.out" && cmp -s "$dir/w.rc" "$dir/n.rc" &&
       [ "$(cut -d: -f1-2 "$dir/w.err")" = "$(cut -d: -f1-2 "$dir/n.err")" ]; then
        pass=$((pass + 1))
        echo "ok npx ggfit $* ($(cat "$dir/w.err"))"
    else
        fail=$((fail + 1))
        echo "FAIL npx ggfit $*: $(cat "$dir/w.err") (exit $(cat "$dir/w.rc")); native: $(cat "$dir/n.err") (exit $(cat "$dir/n.rc"))"
    fi
}
m=$models/qwen3-14b-Q4_K_M.gguf
same --version
same -m "$m" --gpu rtx-3090 --host-mem 32GiB
same -m "$m" --gpu rtx-3090 --host-mem 32GiB --json
same -m "$m" --gpu rtx-3060-12gb,8GiB --host-mem 64GiB -c 32768 -ctk q8_0 -ctv q8_0 --print-command
same -m "$models/qwen3-30b-a3b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 32GiB -ot 'blk\.(1[0-9])\.ffn_.*_exps=CPU' --json
same --gpu rtx-3090 --host-mem 64GiB -- llama-server -m "$models/qwen3-14b-f16.gguf" -ngl 99 -c 32768
same bench -m "$models/gpt-oss-20b-mxfp4.gguf" --gpu rtx-4090 --host-mem 64GiB
same sweep -m "$m" --gpu rtx-3060-12gb --host-mem 32GiB --json
same inspect -m "$models/gemma-3-4b-Q4_K_M.gguf"
same -m "$m" -m "$models/qwen3-14b-f16.gguf" --gpu rtx-3090 --host-mem 32GiB
same -m "$dir/nothing.gguf" --gpu rtx-3090 --host-mem 32GiB
like -m "$m" --gpu rtx-3090 --host-mem 32GiB -ot '(=CPU'
# over HTTP: the hub of tests/http_server.sh
if port=$(sh "$here/../http_server.sh" start "$dir/srv" "$models" 2>/dev/null); then
    export MODEL_ENDPOINT="http://127.0.0.1:$port/" GGFIT_CACHE_DIR="$dir/cache"
    same -hf ggfit/Qwen3-GGUF --list --gpu rtx-4090 --host-mem 32GiB
    same -hf ggfit/Qwen3-GGUF:Q4_K_M --gpu rtx-4090 --host-mem 32GiB --json
    same -hf ggfit/Qwen3-GGUF:Q6_K --gpu rtx-4090 --host-mem 32GiB
    same -hf ggfit/gated-GGUF --gpu rtx-4090 --host-mem 32GiB
    same -m "http://127.0.0.1:$port/redirect/llama-3.1-8b-Q4_K_M.gguf" --gpu 24GiB --host-mem 32GiB
    same -m "http://127.0.0.1:$port/norange/gemma-3-4b-Q4_K_M.gguf" --gpu 24GiB --host-mem 32GiB
    same -m "http://127.0.0.1:$port/files/big.gguf" --gpu 24GiB --host-mem 32GiB --json
    unset MODEL_ENDPOINT GGFIT_CACHE_DIR
else
    echo "skipped the HTTP cases: tests/http_server.sh could not start nginx"
fi
echo "npm: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
