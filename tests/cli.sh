#!/bin/sh
# cli.sh GGFIT MODELS - the command line as a user runs it: output, errors,
# exit status. Prints "N passed, N failed".
ggfit=$1
models=$2
pass=0
failn=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every ggfit command a check runs (or runs through fitted), its words
# NUL-separated in $tmp/plans/N: the plans among them are run again at the
# end as the whole command a terminal prints (paste_commands).
mkdir "$tmp/plans" "$tmp/json"
n_recorded=0
record() {
    case $1 in   # the helpers below that plan their arguments, as they do
    fitted) shift ;;
    same_heap | placement_again) shift; set -- "$ggfit" "$@" ;;
    same_as_cli) shift; set -- "$ggfit" --host-mem 64GiB/60GiB "$@" ;;
    same_verdict) shift; set -- "$ggfit" -c 640 "$@" ;;
    around_again)
        m=$2 g=$3
        shift 3
        set -- "$ggfit" -m "$m" --gpu "$g" --host-mem 64GiB "$@" --fit-around ;;
    esac
    [ "$1" = "$ggfit" ] || return 0
    n_recorded=$((n_recorded + 1))
    printf '%s\0' "$@" >"$tmp/plans/$n_recorded"
}

check() {  # check NAME WANT_STATUS PATTERN -- command...
    name=$1 want=$2 pattern=$3
    shift 4
    record "$@"
    "$@" >"$tmp/out" 2>&1
    got=$?
    if [ "$got" -eq "$want" ] && grep -q -- "$pattern" "$tmp/out"; then
        pass=$((pass + 1))
    else
        failn=$((failn + 1))
        echo "FAIL $name: exit $got (want $want), output:"
        sed 's/^/    /' "$tmp/out" | head -20
    fi
}

check inspect-figures 0 '687, 63,374,323,968 B of data' -- \
    "$ggfit" inspect -m "$models/gpt-oss-120b-mxfp4.gguf"
check inspect-experts 0 '61,073,326,080 B in 36 layers (1,696,481,280 B per layer)' -- \
    "$ggfit" inspect -m "$models/gpt-oss-120b-mxfp4.gguf"
check inspect-json 0 '"tensor_bytes": 42512531712' -- \
    "$ggfit" inspect -m "$models/llama-3.3-70b-Q4_K_M.gguf" --json
check inspect-json-tensors 0 '"name": "blk.0.ffn_down_exps.weight"' -- \
    "$ggfit" inspect --json --tensors -m "$models/gpt-oss-20b-mxfp4.gguf"
check version 0 '^ggfit ' -- "$ggfit" --version
check help 0 'ggfit inspect -m FILE' -- "$ggfit" --help
check no-args 2 '^ggfit: no model: ggfit -m FILE' -- "$ggfit"
check no-model 2 '^ggfit inspect: give the model: -m FILE' -- "$ggfit" inspect
check missing-file 2 "$tmp/none.gguf: cannot open" -- "$ggfit" inspect -m "$tmp/none.gguf"
printf 'GGUX0000' >"$tmp/bad.gguf"
check bad-magic 2 "$tmp/bad.gguf: not a GGUF file: magic is \"GGUX\"" -- \
    "$ggfit" inspect -m "$tmp/bad.gguf"
check unknown-arg 2 "^ggfit inspect: unknown option '--frobnicate'$" -- \
    "$ggfit" inspect -m "$models/qwen3-0.6b-f16.gguf" --frobnicate
check unknown-command 2 "^ggfit: 'frobnicate' is not a command: inspect, devices" -- "$ggfit" frobnicate
# Headers a fuzz run found that made the CLI divide by zero (SIGFPE): refused
# with the key and its value, exit status 2.
check hostile-minimax-m3 2 'minimax-m3.attention.head_count is 0 in layer 0, which has 2 KV' -- \
    "$ggfit" -m tests/malformed/crash-minimax-m3.gguf --gpu rpc:24GiB -fitp on
check hostile-rwkv6 2 "crash-rwkv6.gguf: key 'rwkv6.embedding_length' is missing; llama.cpp refuses the file" -- \
    "$ggfit" -m tests/malformed/crash-rwkv6.gguf --gpu rpc:24GiB -fitp on
check hostile-rwkv7 2 "crash-rwkv7.gguf: key 'rwkv7.embedding_length' is missing; llama.cpp refuses the file" -- \
    "$ggfit" -m tests/malformed/crash-rwkv7.gguf --gpu rpc:24GiB -fitp on

# libggfit.so next to the CLI exports the public API only: ggfit_*, never an
# internal ggfit__* or a symbol without the prefix.
exports() {
    nm -D --defined-only "$1" | awk '$NF !~ /^ggfit_[a-z0-9]/ { print "exported: " $NF; bad = 1 }
        $NF == "ggfit_model_open" { api = 1 } END { if (api && !bad) print "exports: public only" }'
}
check exports 0 '^exports: public only$' -- exports "$(dirname "$ggfit")/libggfit.so"

# A statically linked ggfit (Makefile STATIC_CLI) cannot load shared
# libraries: a request that needs one (here an rpc-server by name, which
# the resolver's NSS modules resolve) is run by ggfit-dynamic beside it,
# with the same outcome; alone, it says so instead of crashing.
if command -v readelf >/dev/null &&
    ! LC_ALL=C readelf -lW "$ggfit" 2>/dev/null | grep -q 'INTERP'; then
    check static-to-dynamic 2 "rpc-server localhost:1: cannot connect" -- \
        "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --rpc localhost:1 --gpu 8GiB
    cp "$ggfit" "$tmp/lonely"
    check static-alone 2 "linked statically, and could not run ggfit-dynamic" -- \
        "$tmp/lonely" -m "$models/qwen3-0.6b-f16.gguf" --rpc localhost:1 --gpu 8GiB
    check static-numeric 2 "rpc-server 127.0.0.1:1: cannot connect" -- \
        "$tmp/lonely" -m "$models/qwen3-0.6b-f16.gguf" --rpc 127.0.0.1:1 --gpu 8GiB
fi

# The heap on transparent huge pages (cli/ggfit.c) changes the page faults
# and nothing else: the same plan and log with glibc's heap left alone.
same_heap() {
    "$ggfit" "$@" >"$tmp/heap1" 2>&1
    a=$?
    GGFIT_HEAP=plain "$ggfit" "$@" >"$tmp/heap2" 2>&1
    b=$?
    [ "$a" -eq "$b" ] && cmp -s "$tmp/heap1" "$tmp/heap2" && echo "same with GGFIT_HEAP=plain"
}
check heap-plain 0 '^same with GGFIT_HEAP=plain$' -- \
    same_heap -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rpc:24077MiB,rpc:24077MiB,rpc:8192MiB \
    --host-mem 256GiB -v

check project-table 0 'RPC0 .* 81920 .* 1137 .* 448' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu rpc:81920MiB -c 4096 -fitp on
# several -m: each planned, best first (a single -m keeps its plan)
check quants-local 0 '^  1  qwen3-14b-Q4_K_M.gguf  .* fits, less context' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" -m "$models/qwen3-14b-f16.gguf" \
    -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu 12GiB --host-mem 32GiB
check quants-local-best 0 "^  llama-server -m $models/qwen3-14b-Q4_K_M.gguf -c 15616 -ngl all -np 4 -kvu" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" -m "$models/qwen3-14b-f16.gguf" \
    -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu 12GiB --host-mem 32GiB
check quants-local-none 3 'best: none fits this machine' -- \
    "$ggfit" -m "$models/qwen3-14b-f16.gguf" -m "$models/gpt-oss-120b-mxfp4.gguf" \
    --gpu 4GiB --host-mem 8GiB -c 8192
check quants-local-error 0 'cannot open' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" -m "$tmp/none.gguf" --gpu 8GiB --host-mem 16GiB
check quants-local-json 0 '"expert_blocks_in_ram": 22' -- \
    "$ggfit" -m "$models/qwen3-30b-a3b-Q4_K_M.gguf" -m "$models/qwen3-0.6b-f16.gguf" \
    --gpu 12GiB --host-mem 32GiB --json
check quants-single-list 0 '^1 model, planned for' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --list --gpu 8GiB --host-mem 16GiB
check project-json 0 '"context": 469762048' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu rpc:80GiB -c 4096 -fitp on --json
check project-bad-gpu 2 "unknown kind 'tpu'" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu tpu:8GiB -fitp on
check rpc-refused 2 'rpc-server 127.0.0.1:1: cannot connect: Connection refused' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --rpc 127.0.0.1:1 --gpu 8GiB
check rpc-bad-endpoint 2 "rpc 127.0.0.1: expected host:port" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --rpc 127.0.0.1
check project-bad-ot 2 "unknown buffer type 'GPU9'" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB -ot 'exps=GPU9' -fitp on
check project-bad-regex 2 "pattern '(': missing closing parenthesis" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB -ot '(=CPU' -fitp on
# a repeated --gpu adds its devices, numbered across all of them
check gpu-repeated 0 '^  CUDA1  ' -- \
    "$ggfit" -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rtx-3090 --gpu rtx-3060-12gb \
    --host-mem 64GiB
check gpu-repeated-same 0 '^same$' -- sh -c '
    a=$("$1" -m "$2" --gpu rpc:24077MiB --gpu rpc:24077MiB,rpc:8192MiB --host-mem 256GiB --json)
    b=$("$1" -m "$2" --gpu rpc:24077MiB,rpc:24077MiB,rpc:8192MiB --host-mem 256GiB --json)
    [ "$a" = "$b" ] && echo same' sh "$ggfit" "$models/gpt-oss-120b-mxfp4.gguf"
# an MLA model takes only K and V caches of one type (llama_init_from_model)
check project-mla-kv-types 2 "does not support different K (Q8_0) and V (F16) cache types" -- \
    "$ggfit" -m "$models/deepseek-v2-lite-Q4_K_M.gguf" --gpu 24GiB -c 4096 -ctk q8_0
check project-mla-kv-same 0 "^-c 4096 -ngl all -np 4 -kvu -ctk q8_0 -ctv q8_0 -fit off$" -- \
    "$ggfit" -m "$models/deepseek-v2-lite-Q4_K_M.gguf" --gpu 24GiB -c 4096 -ctk q8_0 -ctv q8_0 -q
check project-quant-v-no-fa 2 'needs flash attention' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB -ctv q8_0 -fa off -fitp on

# The fit: llama.cpp's own decisions on its documented examples.
fitted() {  # stdout only
    "$@" 2>/dev/null
}
check fit-qwen3-14b-40k 0 '^-c 40960 -ngl 27$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-f16.gguf" --gpu cuda:24576MiB/24077MiB -c 40960 --for fit-params
check fit-qwen3-14b-8k 0 '^-c 8192 -ngl 33$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-f16.gguf" --gpu cuda:24576MiB/24077MiB -c 8192 --for fit-params
check fit-gpt-oss-120b 0 '^-c 32768 -ngl 37 -ot "blk\\\.12\\\.ffn_(gate|up|gate_up|down)\.\*=CPU,blk\\\.13\\\.ffn_(up|down|gate_up|gate)_(ch|)exps=CPU,' -- \
    fitted "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu cuda:24576MiB/24077MiB -c 32768 --host-mem 64GiB --for fit-params
# a fit that changes nothing: b10587 writes the trained context into -c
# (llama-fit-params b10587 prints -c 40960 here, b10309 -c 0)
check fit-unchanged 0 '^-c 40960 -ngl -1$' -- \
    fitted "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 80GiB --for fit-params
check fit-unchanged-b10309 0 '^-c 0 -ngl -1$' -- \
    fitted "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 80GiB --for fit-params --llama-version b10309
check fit-log 0 'no changes needed' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 80GiB -v
check fit-report 0 '^verdict: fits: every device keeps its margin' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 80GiB
check fit-quiet 0 '^-c 40960 -ngl -1$' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 80GiB -q --for fit-params
check host-short 3 'fits on the GPUs but not in system memory' -- \
    "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090 --host-mem 16GiB
check host-short-json 3 '"status": "host_short"' -- \
    "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090 --host-mem 16GiB --json
check mac-unified 1 'the GPU and the host share one memory' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu m1-8gb
check catalog-assumed 0 'CUDA0: free assumed 24077 of 24576 MiB' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu rtx-3090 -c 4096 -fitp on
check reorder-header-only 2 'a header-only file or a partial download cannot be reordered' -- \
    "$ggfit" reorder "$models/qwen3-0.6b-f16.gguf" "$tmp/reordered.gguf"
check reorder-usage 2 '^ggfit reorder: give the files: ggfit reorder IN OUT$' -- \
    "$ggfit" reorder "$models/qwen3-0.6b-f16.gguf"
# OUT that is no regular file is refused before the input is read (here
# there is none), --force or not: /dev/full stays a device, the directory,
# the FIFO and the link stay as they were.
check reorder-device 2 '/dev/full is a character device, not a regular file: give a path' -- \
    "$ggfit" reorder "$tmp/none.gguf" /dev/full --force
mkdir "$tmp/outdir"
check reorder-directory 2 "$tmp/outdir is a directory, not a regular file" -- \
    "$ggfit" reorder "$tmp/none.gguf" "$tmp/outdir" --force
ln -s "$tmp/bad.gguf" "$tmp/link.gguf"
check reorder-link 2 "$tmp/link.gguf is a symbolic link, not a regular file" -- \
    "$ggfit" reorder "$tmp/none.gguf" "$tmp/link.gguf" --force
if mkfifo "$tmp/fifo.gguf" 2>/dev/null; then
    check reorder-fifo 2 "$tmp/fifo.gguf is a FIFO, not a regular file" -- \
        "$ggfit" reorder "$tmp/none.gguf" "$tmp/fifo.gguf" --force
fi
check reorder-device-kept 0 '^c' -- sh -c 'ls -l /dev/full | cut -c1'
check metal-span 1 'Metal maps [0-9]* MiB of the file for [0-9]* MiB of tensors' -- \
    "$ggfit" -m "$models/gpt-oss-20b-mxfp4.gguf" --gpu m3-pro-18gb -c 4096 --cpu-moe -fitp on
check plan-server 0 '^-c 8192 -ngl 33 -np 4 -kvu -ctk q8_0 -ctv q8_0 -fit off$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-f16.gguf" --gpu rtx-3090 -c 8192 -ctk q8_0 -ctv q8_0
check plan-bench 0 '^-ngl 99 -ts 3/1 -fa 1$' -- \
    fitted "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu rtx-3090,rtx-3090 -ts 3,1 -fa on --for bench
check plan-json-argv 0 '"argv": \[$' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu rtx-3090 --json
check plan-ncmoe-compact 0 ' -ncmoe 48 ' -- \
    fitted "$ggfit" -m "$models/qwen3-30b-a3b-Q4_K_M.gguf" --gpu rtx-3090 -ncmoe 1000 -c 4096 --host-mem 64GiB
check bad-gpu-bare 2 '^ggfit: --gpu 24: give a unit: 24GiB$' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 24
check bad-gpu-4090 2 "did you mean rtx-4090" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 4090
check bad-gpu-empty 2 "gpu: empty" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu ''
check bad-gpu-zero 2 "has no memory" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 0GiB
check bad-gpu-comma 2 "ends with a comma" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 24GiB,
check bad-ot-comma 2 "a trailing comma" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 24GiB -ot 'exps=CPU,'
check bad-rpc-comma 2 "ends with a comma" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --rpc 127.0.0.1:1,
check bad-ts-nan 2 "expected proportions like 3,1 (finite" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 24GiB,24GiB -ts nan,1
check bad-ts-inf 2 "expected proportions like 3,1 (finite" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 24GiB,24GiB -ts inf,1
check bad-batch 2 "-b: expected at least 1 token" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 24GiB -b 0
check bad-np 2 "^ggfit: -np: expected 1 to 256 sequences (llama.cpp's LLAMA_MAX_SEQ), got '257'$" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 24GiB -np 257
check bad-fitp 2 "-fitp: expected on or off, got 'garbage'" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 24GiB -fitp garbage
check bad-ctx-huge 2 "-c: 4294967295 is too large" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 24GiB -c 4294967295
mkfifo "$tmp/fifo"
check bad-fifo 2 "not a regular file" -- \
    timeout 10 "$ggfit" -m "$tmp/fifo" --gpu 24GiB
check full-disk 2 "cannot write the output" -- \
    sh -c '"$0" -m "$1" --gpu 24GiB -q >/dev/full' "$ggfit" "$models/qwen3-0.6b-f16.gguf"
check paste-server 0 '^-c 16384 -ngl 99 -t 8 -np 4 -kvu -fit off$' -- \
    fitted "$ggfit" --gpu rtx-3090 -- llama-server -m "$models/qwen3-14b-Q4_K_M.gguf" \
    --host 0.0.0.0 --port 8080 -t 8 --jinja -c 16384 --temp 0.7 --top-k 40 --top-p 0.9 \
    --min-p 0.05 --repeat-penalty 1.1 -ngl 99 --metrics --no-webui --api-key secret \
    --alias qwen -tb 8 --timeout 600 --threads-http 4 --slot-save-path /tmp --cont-batching
# --for server plans as llama-server fits (-np auto = 4 slots and -kvu, one
# output per slot reserved): llama-server itself fits -c 18688 here
# (tools/servercmp.py --fit-mib 12288), llama-fit-params -c 17664.
check server-fit 0 '^-c 18688 -ngl all -np 4 -kvu -fit off$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --host-mem 64GiB --for server
# without --for the plan is llama-server's; llama-fit-params' own is smaller
check server-default-fit 0 '^-c 18688 -ngl all -np 4 -kvu -fit off$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --host-mem 64GiB
check fit-params-fit 0 '^-c 17664 -ngl -1$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --host-mem 64GiB \
    --for fit-params
check server-compute 0 '"compute": 180365344' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:80GiB --for server -fitp on --json
check server-prompt-cache 0 "Host: 8192 MiB of what it uses are llama-server's prompt cache" -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --host-mem 64GiB --for server
check server-cache-short 3 "prompt cache: --cache-ram 6712 leaves system memory enough" -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --host-mem 8GiB --for server \
    --wide
check server-cache-ram 0 '^-c 18688 -ngl all -np 4 -kvu --cache-ram 6712 -fit off$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --host-mem 8GiB --for server -cram 6712
check server-cache-env 0 '^-c 18688 -ngl all -np 4 -kvu --cache-ram 2048 -fit off$' -- \
    env LLAMA_ARG_CACHE_RAM=2048 "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB \
    --host-mem 64GiB --for server -q
check server-np-auto 0 '^-c 18688 -ngl all -np 4 -kvu -fit off$' -- \
    fitted "$ggfit" --gpu rpc:12288MiB --host-mem 64GiB -- llama-server -m "$models/qwen3-14b-Q4_K_M.gguf" -np -1
check server-np 0 '^-c 18944 -ngl all -np 2 -fit off$' -- \
    fitted "$ggfit" --gpu rpc:12288MiB --host-mem 64GiB -- llama-server -m "$models/qwen3-14b-Q4_K_M.gguf" -np 2
# a draft model (-md) as llama-server b10309 fits it: measured at the
# target's -c (-c 0: the draft's trained context), its bytes added to the
# device's fit target; llama-server itself fits -c 8704 here
# (tools/servercmp.py --draft)
check server-draft 0 '^-c 8704 -ngl all -np 1 -md .*qwen3-0.6b-f16.gguf -fit off$' -- \
    fitted "$ggfit" --gpu rpc:16384MiB --host-mem 64GiB --llama-version b10309 -- llama-server \
    -m "$models/qwen3-14b-Q4_K_M.gguf" -md "$models/qwen3-0.6b-f16.gguf" -np 1
check server-draft-rows 0 '^  RPC0 .* 16384 .* 5683 .* 1137 .* 4480 .* 66$' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:16384MiB --host-mem 64GiB --for server \
    -np 1 -md "$models/qwen3-0.6b-f16.gguf" --llama-version b10309
check server-draft-json 0 '"context": 4697620480' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:16384MiB --for server -np 1 \
    -md "$models/qwen3-0.6b-f16.gguf" --json --llama-version b10309
# b10587 fits the draft beside the target, its context following the
# target's: llama-server b10587 fits -c 22016 here (servercmp.py --draft
# --fit-mib 16384), the draft's KV at 22016 cells (2,523,922,432 B)
check server-draft-b10587 0 '^-c 22016 -ngl all -np 1 -md .*qwen3-0.6b-f16.gguf -fit off$' -- \
    fitted "$ggfit" --gpu rpc:16384MiB --host-mem 64GiB --llama-version b10587 -- llama-server \
    -m "$models/qwen3-14b-Q4_K_M.gguf" -md "$models/qwen3-0.6b-f16.gguf" -np 1
check server-draft-flags 0 ' -md .*qwen3-0.6b-f16.gguf -ngld 20 -ctkd q8_0 -fit off$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:16384MiB,rpc:16384MiB --for server \
    -md "$models/qwen3-0.6b-f16.gguf" --spec-draft-ngl 20 -ctkd q8_0
# -md alone runs no speculative type: llama-server loads the draft, then
# frees it (the shipped layouts have no tokenizer, so draft-simple's
# vocabulary check passes them, as llama.cpp's does)
check server-draft-no-type 0 "^note: -md without --spec-type draft-simple: llama-server measures" -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:81920MiB --for server \
    -md "$models/llama-3.1-8b-Q4_K_M.gguf"
# --mmproj under --for server: the projector's bytes (mtmd_get_memory_usage)
# in the fit target: -c 6144, llama-server's own fit (tools/servercmp.py
# --mmproj --fit-mib 12288; 18688 without it, and with --no-mmproj-offload)
check server-mmproj 0 '^-c 6144 -ngl all -np 4 -kvu -mm data/real/mmproj-qwen2.5-vl-7b-f16.gguf -fit off$' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --for server \
    --mmproj data/real/mmproj-qwen2.5-vl-7b-f16.gguf
check server-mmproj-no-offload 0 '^-c 18688 .* --no-mmproj-offload -fit off$' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --for server \
    --mmproj data/real/mmproj-qwen2.5-vl-7b-f16.gguf --no-mmproj-offload
check server-mmproj-json 0 '"weights": 1355636736' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --for server \
    -mm data/real/mmproj-qwen2.5-vl-7b-f16.gguf --json
check mmproj-fit-params-not-counted 0 '^note: not counted yet .*: -mm' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:12288MiB --for fit-params \
    -mm data/real/mmproj-qwen2.5-vl-7b-f16.gguf
# an MTP context (--spec-type draft-mtp) on a NextN model: its context and
# compute in the fit targets, the NextN block in the fit's layers (-ngl 50
# on 49 blocks: llama-server's own fit, tools/servercmp.py --mtp --fit-mib)
check server-mtp 0 '^-c 4096 -ngl 50 -ts 25,25 .* -np 4 -kvu --spec-type draft-mtp -fit off$' -- \
    "$ggfit" -m "$models/qwen3-next-80b-a3b-Q4_K_M.gguf" --gpu rpc:24576MiB,rpc:24576MiB \
    --host-mem 128GiB --for server --spec-type draft-mtp
check server-mtp-json 0 '"mtp": true' -- \
    "$ggfit" -m "$models/glm-4.5-air-Q4_K_M.gguf" --gpu rpc:81920MiB --for server -c 4096 \
    --spec-type draft-mtp --json
check server-mtp-no-nextn 2 'has no NextN blocks' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:16384MiB --for server --spec-type draft-mtp
check server-spec-type-bad 2 'unknown speculative type: mtp' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:16384MiB --for server --spec-type mtp
check server-spec-devd 0 ' -md .*qwen3-0.6b-f16.gguf --spec-type draft-simple -devd RPC1 -fit off$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:16384MiB,rpc:16384MiB --for server \
    -md "$models/qwen3-0.6b-f16.gguf" --spec-type draft-simple -devd RPC1
check server-spec-devd-bad 2 '-devd: invalid device: CUDA3' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:16384MiB --for server \
    -md "$models/qwen3-0.6b-f16.gguf" -devd CUDA3
check server-draft-missing 2 'none.gguf: cannot open' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rpc:16384MiB --for server -md "$tmp/none.gguf"
check paste-note 0 '^note: ignored (no effect on memory): --host --port --jinja' -- \
    "$ggfit" --gpu rtx-3090 -- llama-server -m "$models/qwen3-14b-Q4_K_M.gguf" \
    --host 0.0.0.0 --port 8080 -t 8 --jinja -c 16384 -ngl 99
check paste-not-counted 0 '^note: not counted yet .*: --mmproj -md' -- \
    "$ggfit" --gpu rtx-3090 -m "$models/qwen3-14b-Q4_K_M.gguf" -c 4096 --mmproj mm.gguf -md d.gguf \
    --for fit-params
check server-counts-md 2 'd.gguf: cannot open' -- \
    "$ggfit" --gpu rtx-3090 -m "$models/qwen3-14b-Q4_K_M.gguf" -c 4096 -md d.gguf
# llama-cli (b10309) starts llama_server with its own flags: -np 1, the
# prompt cache, and a draft counted as llama-server counts them
check cli-plan 0 '^-c 8192 -ngl all -fit off$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3090 --host-mem 64GiB -c 8192 --for cli
check cli-prompt-cache 0 "8192 MiB of what it uses are llama-server's prompt cache" -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3090 --host-mem 64GiB -c 8192 --for cli
check cli-draft 0 '^-c 8192 -ngl all -md .*qwen3-0.6b-f16.gguf -fit off$' -- \
    fitted "$ggfit" --gpu rtx-3090 --host-mem 64GiB -- llama-cli -m "$models/qwen3-14b-Q4_K_M.gguf" \
    -c 8192 -md "$models/qwen3-0.6b-f16.gguf"
# a llama-bench line: its tests, each at the context llama-bench creates
check paste-bench 0 '^  pp512  *512 .* yes .*-fa on$' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB -- /usr/local/bin/llama-bench \
    -m "$models/qwen3-0.6b-f16.gguf" -fa on -r 5
check paste-bench-depth 1 '^decided by pp512 @ d4096 (n_ctx 4608)' -- \
    "$ggfit" --gpu rtx-3060-12gb -- llama-bench -m "$models/llama-3.3-70b-Q4_K_M.gguf" \
    -p 512 -n 128 -d 0,4096
check paste-bench-rows 1 '^  tg128 @ d4096  *4224 ' -- \
    "$ggfit" --gpu rtx-3060-12gb -- llama-bench -m "$models/llama-3.3-70b-Q4_K_M.gguf" \
    -p 512 -n 128 -d 0,4096
check paste-bench-json 3 '"exit_status": 3' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 8GiB --json -- llama-bench \
    -m "$models/llama-3.1-8b-Q4_K_M.gguf" -d 0,65536
check paste-bench-unknown 2 "llama-bench has no flag '-c'" -- \
    "$ggfit" --gpu rtx-3090 -- llama-bench -m "$models/qwen3-0.6b-f16.gguf" -c 4096
check bench-paste 1 '^  pp512 @ d4096  *4608 .* no ' -- \
    "$ggfit" bench --gpu rtx-3060-12gb -- llama-bench -m "$models/llama-3.3-70b-Q4_K_M.gguf" \
    -d 0,4096
# speeds: every plan's, the fastest plan that fits, the sweep and its picture
check plan-speed 0 '^predicted speed: pp512 [0-9]* t/s, tg128 [0-9.]* t/s (llama-bench at depth 0' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB
check plan-speed-json 0 '"of": "plan"' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB --json
check objective-speed 0 '^-c 131072 -ngl all -ts 33 -np 4 -kvu -fit off$' -- \
    "$ggfit" -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rtx-3090,rtx-3060-12gb --host-mem 64GiB \
    --objective speed -q
check objective-speed-report 0 '^    -c 131072 -ngl all -ts 33 ' -- \
    "$ggfit" -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rtx-3090,rtx-3060-12gb --host-mem 64GiB \
    --objective speed
check objective-json 0 '"faster": true' -- \
    "$ggfit" -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rtx-3090,rtx-3060-12gb --host-mem 64GiB \
    --objective speed --json
check objective-min-ctx 0 'contexts of at least 8192$' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB \
    --objective speed --min-ctx 8192
check objective-bad 2 'expected speed, pp or context' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --objective fast
check speed-constants-alone 2 'go with --objective speed|pp (the constants also with bench and sweep)' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --host-bw 50
# ggfit bench says what the plan says: its verdict line, its exit status
check bench-no-fit 1 '^verdict: does not fit: CUDA0 needs ' -- \
    "$ggfit" bench -m "$models/llama-3.3-70b-Q4_K_M.gguf" --gpu rtx-3060-12gb -ngl 99 \
    --for fit-params
check bench-no-fit-json 1 '"exit_status": 1' -- \
    "$ggfit" bench -m "$models/llama-3.3-70b-Q4_K_M.gguf" --gpu rtx-3060-12gb -ngl 99 \
    --for fit-params --json
same_verdict() {  # ggfit bench and the plan, same flags (-c: bench's 640)
    "$ggfit" bench "$@" >"$tmp/bench.out" 2>&1
    a=$?
    "$ggfit" -c 640 "$@" >"$tmp/plan.out" 2>&1
    b=$?
    grep '^verdict: ' "$tmp/bench.out" >"$tmp/bench.v"
    grep '^verdict: ' "$tmp/plan.out" | diff - "$tmp/bench.v" >/dev/null && [ "$a" -eq "$b" ] &&
        echo "the same verdict, exit $a"
}
check bench-verdict-is-plans 0 '^the same verdict, exit 1$' -- same_verdict \
    -m "$models/llama-3.3-70b-Q4_K_M.gguf" --gpu rpc:12GiB -ngl 99 --for fit-params
check bench-verdict-host 3 'fits on the GPUs but not in system memory' -- \
    "$ggfit" bench -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090 --host-mem 16GiB -c 4096 \
    --for fit-params
# this machine's memory: its measured bandwidth, kept in the cache folder
host_bw() {  # a measured figure made known (7.8), then a plan that reads system memory
    env -u GGFIT_HOST_BW GGFIT_CACHE_DIR="$tmp/hb" "$ggfit" devices --measure >/dev/null &&
        sed 's/^gbs .*/gbs 7.8/' "$tmp/hb/host-bw" >"$tmp/hb/new" && mv "$tmp/hb/new" "$tmp/hb/host-bw" &&
        env -u GGFIT_HOST_BW GGFIT_CACHE_DIR="$tmp/hb" "$ggfit" bench "$@"
}
check bench-host-measured 0 'host memory 7.8 GB/s (measured on this machine [0-9-]*) at 100%' -- \
    host_bw -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu 4GiB -ngl 15 --for fit-params --wide
check bench-host-default 0 'host memory 89.6 GB/s (a default: dual-channel DDR5-5600) at 65%' -- \
    host_bw -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu 4GiB -ngl 15 --for fit-params \
    --host-bw default --wide
check bench-host-other 0 'host memory 89.6 GB/s (a default' -- \
    host_bw -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu 4GiB -ngl 15 --for fit-params \
    --host-mem 32GiB
# -d takes a list (a row per depth), -np N gives each sequence's and all
# of theirs; a list's bad word is named
check bench-depths 0 '^     32768 .*[0-9] *$' -- \
    "$ggfit" bench -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rtx-4090 -d 0,4096,32768
check bench-depths-json 0 '"depths": \[' -- \
    "$ggfit" bench -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rtx-4090 -d 0,4096 --json
check bench-parallel 0 'generation with 4 sequences decoding at once: .* t/s in all' -- \
    "$ggfit" bench -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rtx-4090 -np 4 --wide
check bench-depths-bad 2 "^ggfit bench: -d: expected a number of tokens, got 'x'$" -- \
    "$ggfit" bench -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rtx-4090 -d 0,x
check bench-depths-empty 2 "expected a number of tokens or a comma list of them, got '0,,1'" -- \
    "$ggfit" bench -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rtx-4090 -d 0,,1
# -t: the CPU's threads, its measured compute shared among them
check bench-threads 0 '"threads": 3,' -- \
    "$ggfit" bench -m "$models/qwen3-0.6b-f16.gguf" --gpu none --host-gflops 100 -t 3 --json
check threads-bad 2 '^ggfit: -t: expected a non-negative integer' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu none -t many
# ggfit batch: a JSON line each, answered in order; a bad line in its place
batch_lines() {
    printf '%s\n' \
        "{\"id\": 1, \"argv\": [\"-m\", \"$models/qwen3-14b-Q4_K_M.gguf\", \"--gpu\", \"rtx-3090\"]}" \
        'not json' '' \
        "{\"id\": \"b\", \"argv\": [\"--gpu\", \"none\", \"--\", \"llama-server\", \"-m\", \"$models/qwen3-0.6b-f16.gguf\", \"--newflag\", \"7\"]}" \
        "{\"id\": 3, \"argv\": [\"-m\", \"$tmp/none.gguf\"]}" \
        '{"id": 4, "argv": ["-m", 5]}' |
        "$ggfit" batch -j 2 | tee "$tmp/json/batch-lines.jsonl" | python3 -c '
import json, sys
out = [json.loads(l) for l in sys.stdin]
ids = [o["id"] for o in out]
assert ids == [1, None, "b", 3, 4], ids
assert out[0]["exit_status"] == 0 and out[0]["plan"]["n_ctx"] > 0
assert "not JSON" in out[1]["error"]
assert "--newflag" in out[2]["warnings"][0] and out[2]["plan"]
assert "cannot open" in out[3]["error"] and "is not a string" in out[4]["error"]
print("batch: 5 answers in order")'
}
check batch-lines 0 '^batch: 5 answers in order$' -- batch_lines
check batch-same 0 '^the same plan$' -- sh -c '
    a=$("$0" -m "$1" --gpu rtx-3090 --host-mem 64GiB --json | python3 -c "import json,sys; d = json.load(sys.stdin); v = d.pop(\"json_version\"), d.pop(\"kind\"); print(json.dumps(d, sort_keys=True))")
    b=$(printf "{\"id\": 0, \"argv\": [\"-m\", \"%s\", \"--gpu\", \"rtx-3090\", \"--host-mem\", \"64GiB\"]}\n" "$1" | "$0" batch |
        python3 -c "import json,sys; print(json.dumps(json.loads(sys.stdin.read())[\"plan\"], sort_keys=True))")
    [ "$a" = "$b" ] && echo "the same plan"' "$ggfit" "$models/gpt-oss-120b-mxfp4.gguf"
batch_threads() {  # four threads on one batch answer as one does, line for line
    for m in qwen3-0.6b-f16 gpt-oss-20b-mxfp4 qwen3-30b-a3b-Q4_K_M llama-3.1-8b-Q4_K_M; do
        for g in rtx-3090 8GiB 24GiB,12GiB none; do
            for c in 4096 32768; do
                printf '{"id": "%s %s %s", "argv": ["-m", "%s/%s.gguf", "--gpu", "%s", "--host-mem", "64GiB", "-c", "%s"]}\n' \
                    "$m" "$g" "$c" "$models" "$m" "$g" "$c"
            done
        done
    done >"$tmp/mix.jsonl"
    "$ggfit" batch -j 1 "$tmp/mix.jsonl" >"$tmp/mix1" && "$ggfit" batch -j 4 "$tmp/mix.jsonl" >"$tmp/mix4" &&
        cp "$tmp/mix1" "$tmp/json/batch-mix.jsonl" && cmp -s "$tmp/mix1" "$tmp/mix4" && [ "$(grep -c '"plan"' "$tmp/mix4")" -eq 32 ] &&
        echo "32 plans, the same on 1 and 4 threads"
}
check batch-threads 0 '^32 plans, the same on 1 and 4 threads$' -- batch_threads
check batch-no-file 2 'none.jsonl: cannot open' -- "$ggfit" batch "$tmp/none.jsonl"
check batch-jobs-bad 2 'expected a number of threads from 1 to 256' -- "$ggfit" batch -j 0
# llama-server's router: each child's fit against what the ones before it
# hold; the order decides (names sorted: the coder fills the GPU first)
check router-order 1 '^   3  embed  .* does not fit$' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB -- llama-server --models-preset tests/router/four.ini -fa on
check router-order-given 0 '^   4  coder  .* fits$' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --order embed,rerank,chat -- llama-server \
    --models-preset tests/router/four.ini -fa on
check router-child-flags 0 '^      its fit: -c 8192 -ngl all -b 8192 -ub 8192 -np 2 -fa on --embedding' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --order embed -- llama-server \
    --models-preset tests/router/four.ini -fa on
# load-on-startup children start together: each fit saw none of the others
check router-startup-over 1 'CUDA0 [0-9]* of 24077 MiB free (OVER)' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --wide -- llama-server --models-preset tests/router/startup.ini
# --order cannot undo it: the router starts them before anything is asked
check router-startup-asked 1 '^      started with the other load-on-startup models' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --order coder,chat --wide -- llama-server \
    --models-preset tests/router/startup.ini
# --models-max: the least recently asked child is stopped before the next
# starts, and its memory goes to that one; a name asked again starts again
check router-max-evicts 0 '^      --models-max 2 reached: the router stopped rerank' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --order embed,rerank,embed,coder -- llama-server \
    --models-preset tests/router/four.ini --models-max 2
check router-max-startup 2 'number of models to load on startup (2) exceeds models_max (1)' -- \
    "$ggfit" --gpu rtx-3090 -- llama-server --models-preset tests/router/startup.ini --models-max 1
# --models-dir: a file a model, a directory a model with its projector and
# draft; a preset's section of the same name merged over it
models_dir() {  # a directory as llama-server lists it, planned
    d=$tmp/md
    rm -rf "$d" && mkdir -p "$d/gemma" "$d/deeper/more"
    ln -s "$PWD/$models/qwen3-0.6b-f16.gguf" "$d/small.gguf"
    ln -s "$PWD/$models/gemma-3-4b-Q4_K_M.gguf" "$d/gemma/gemma-3-4b-Q4_K_M.gguf"
    ln -s "$PWD/data/tiny/mmproj-gemma3-2.gguf" "$d/gemma/mmproj-F16.gguf"
    ln -s "$PWD/data/tiny/mmproj-gemma3-2.gguf" "$d/mmproj-top.gguf"
    ln -s "$PWD/$models/qwen3-0.6b-f16.gguf" "$d/deeper/more/hidden.gguf"
    printf '[gemma]\nctx-size = 8192\n' >"$tmp/md.ini"
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --json -- llama-server --models-dir "$d" \
        --models-preset "$tmp/md.ini" | tee "$tmp/json/router-models-dir.json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for c in d["children"]:
    print(c["name"], c["plan"]["n_ctx"], c["preset_args"].replace(sys.argv[1], "D"))
' "$d"
}
check router-models-dir 0 '^gemma 8192 -m D/gemma/gemma-3-4b-Q4_K_M.gguf -mm D/gemma/mmproj-F16.gguf -c 8192$' -- models_dir
check router-models-dir-names 0 '^small ' -- models_dir
check router-models-dir-none 2 "'.*none' does not exist or is not a directory" -- \
    "$ggfit" --gpu rtx-3090 -- llama-server --models-dir "$tmp/none"
check router-json 1 '"started_together": true' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --json -- llama-server --models-preset tests/router/startup.ini
# --plan-set: every model fitted to its share; the preset it prints fits
# in any order, and the startup models together
plan_set() {  # plan_set PRESET ORDER...: the set written, then planned in each order
    preset=$1
    shift
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --plan-set -- llama-server --models-preset "$preset" \
        -fa on >"$tmp/set.ini" 2>"$tmp/set.txt" || return 1
    for order in "" "$@"; do
        "$ggfit" --gpu rtx-3090 --host-mem 64GiB ${order:+--order "$order"} -- llama-server \
            --models-preset "$tmp/set.ini" -fa on >"$tmp/set.out" || { cat "$tmp/set.out"; return 1; }
        grep -q 'does not fit\|OVER' "$tmp/set.out" && return 1
    done
    grep -c '^fit = off$' "$tmp/set.ini" | sed 's/$/ models fixed, every order fits/'
}
check router-plan-set-json 0 '"max_fits": ' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --plan-set --json -- llama-server \
    --models-preset tests/router/four.ini -fa on
printf '[gone]\nmodel = %s/none.gguf\n[small]\nmodel = %s/qwen3-0.6b-f16.gguf\n' "$tmp" "$models" >"$tmp/gone.ini"
check router-child-error-json 1 '"error": ".*none.gguf: cannot open' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --json -- llama-server --models-preset "$tmp/gone.ini"
check router-plan-set 0 '^4 models fixed, every order fits$' -- \
    plan_set tests/router/four.ini rerank,embed,coder,chat coder,chat embed,coder
check router-plan-set-startup 0 '^2 models fixed, every order fits$' -- \
    plan_set tests/router/startup.ini coder,chat
# any two of the four at once (--models-max 2), and the limit the machine
# allows at their smallest
check router-plan-set-max 0 '^the largest resident ones together: CUDA0 [0-9]* of 24077 MiB free; ' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --plan-set --wide -- llama-server \
    --models-preset tests/router/four.ini --models-max 2
check router-plan-set-suggest 0 '^; any 2 of the 4 at once: run the router with --models-max 2$' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --plan-set -- llama-server \
    --models-preset tests/router/four.ini --models-max 2
# --priority: the chat model's part three times the coder's
check router-plan-set-priority 0 '^c = 40960$' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --plan-set --priority chat=3 -- llama-server \
    --models-preset tests/router/startup.ini
check router-priority-alone 2 'give --plan-set too' -- \
    "$ggfit" --gpu rtx-3090 --priority chat=2 -- llama-server --models-preset tests/router/startup.ini
check router-priority-bad 2 "chat=0: expected a weight above 0" -- \
    "$ggfit" --gpu rtx-3090 --plan-set --priority chat=0 -- llama-server --models-preset tests/router/startup.ini
check router-plan-set-order 2 'goes without it' -- \
    "$ggfit" --gpu rtx-3090 --plan-set --order chat -- llama-server --models-preset tests/router/startup.ini
# llama-swap: its groups decide who is stopped; the preload list first
check swap-order 0 '^      llama-swap stopped chat first' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --order chat,coder -- llama-swap --config tests/swap/four.yaml
check swap-preload 0 '^   2  rerank  .* fits$' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --wide -- llama-swap --config tests/swap/four.yaml
check swap-json 0 '"kind": "llama-swap"' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --json -- llama-swap -config=tests/swap/four.yaml
# --plan-set: a config whose every resident set fits in any order, the
# chat model and the coder never together
swap_set() {  # the config written, then planned in each order
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --plan-set -- llama-swap --config tests/swap/four.yaml \
        >"$tmp/set.yaml" 2>"$tmp/set.txt" || return 1
    for order in "" coder chat,coder,chat rerank,coder,embed; do
        "$ggfit" --gpu rtx-3090 --host-mem 64GiB ${order:+--order "$order"} -- llama-swap \
            --config "$tmp/set.yaml" >"$tmp/set.out" || { cat "$tmp/set.out"; return 1; }
        grep -q 'does not fit\|OVER' "$tmp/set.out" && return 1
    done
    grep -c '^    cmd: ".* -fit off"$' "$tmp/set.yaml" | sed 's/$/ models fixed, every order fits/'
}
check swap-plan-set 0 '^4 models fixed, every order fits$' -- swap_set
check swap-no-config 2 'a llama-swap line is -- llama-swap --config FILE' -- \
    "$ggfit" --gpu rtx-3090 -- llama-swap
check swap-not-server 1 'its cmd runs no llama-server' -- \
    sh -c 'printf "models:\n  a:\n    cmd: python3 -m http.server \${PORT}\n" >"$1" &&
           "$2" --gpu rtx-3090 -- llama-swap --config "$1"' sh "$tmp/bad.yaml" "$ggfit"
check router-no-file 2 'preset file does not exist: .*none.ini' -- \
    "$ggfit" --gpu rtx-3090 -- llama-server --models-preset "$tmp/none.ini"
check router-bad-order 2 "^ggfit: --order: 'chaat' is not a model of the preset$" -- \
    "$ggfit" --gpu rtx-3090 --order chaat -- llama-server --models-preset tests/router/startup.ini
check sweep-table 0 '^    40960   29  yes ' -- \
    "$ggfit" sweep -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB
check sweep-csv 0 '^ctx,n_ctx,n_gpu_layers,fits,pp_tps,tg_tps,tg_tps_full,used_CUDA0' -- \
    "$ggfit" sweep -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB --csv
check sweep-ngl 0 '^        0  yes ' -- \
    "$ggfit" sweep -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB --over ngl
check sweep-dense-ncmoe 2 'the model has no experts' -- \
    "$ggfit" sweep -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --over ncmoe
sweep_svg() {  # the README's picture is what ggfit sweep draws today
    "$ggfit" sweep -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB \
        --svg "$tmp/sweep.svg" >/dev/null 2>&1 &&
        cmp -s "$tmp/sweep.svg" docs/sweep-qwen3-14b-rtx-3060.svg &&
        echo "the README's picture is ggfit sweep's"
}
check sweep-svg 0 "^the README's picture is ggfit sweep's$" -- sweep_svg
check devices-measure 0 'host memory bandwidth, measured .* 1 thread [0-9.]* GB/s' -- \
    "$ggfit" devices --measure
check devices-measure-json 0 '"single_thread_gbs": ' -- "$ggfit" devices --measure --json
check catalog-json 0 '"id": "rtx-3090",' -- "$ggfit" devices --catalog --json
check sweep-json 0 '"kind": "sweep",' -- \
    "$ggfit" sweep -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB --json
check sweep-json-ncmoe 0 '"axis": "ncmoe",' -- \
    "$ggfit" sweep -m "$models/qwen3-30b-a3b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB --over ncmoe --json
check paste-unknown-program 2 "is not llama-server, llama-cli" -- \
    "$ggfit" --gpu rtx-3090 -- llama-quantize -m "$models/qwen3-0.6b-f16.gguf"
check env-ctx 0 '^-c 8192 -ngl all -np 4 -kvu -fit off$' -- \
    fitted env LLAMA_ARG_CTX_SIZE=8192 "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3090
check env-flag-wins 0 '^-c 4096 ' -- \
    fitted env LLAMA_ARG_CTX_SIZE=8192 "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3090 -c 4096
check env-no-mmap 0 ' --no-mmap -fit off$' -- \
    fitted env LLAMA_ARG_NO_MMAP=1 "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu rtx-3090
check env-bad 2 "LLAMA_ARG_CTX_SIZE: -c: expected a non-negative integer, got 'lots'" -- \
    env LLAMA_ARG_CTX_SIZE=lots "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu rtx-3090
check ts-more-than-devices 0 '^note: -ts gives 3 proportions for 2 devices' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu rtx-3090,rtx-3090 -ts 1,2,3 -c 4096
check locked-explained 1 'as given they do not fit, so the load runs out of memory' -- \
    "$ggfit" -m "$models/qwen3-14b-f16.gguf" --gpu rtx-3090 -ngl 99 -c 8192
check fit-locked 1 'n_gpu_layers already set by user to 20' -- \
    "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rpc:24077MiB -c 8192 -ngl 20 --wide
check fit-json 0 '"status": "fits"' -- \
    "$ggfit" -m "$models/qwen3-14b-f16.gguf" --gpu cuda:24576MiB/24077MiB -c 40960 --json
check fit-bad-target 2 'fitt: expected MiB values' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB -fitt lots

# --gpu by catalog id (data/gpus.tsv).
check catalog-fit 0 '^-c 40960 -ngl -1$' -- \
    fitted "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3090 --for fit-params
check catalog-mac 1 'Metal  *13640 ' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu m3-pro-18gb -fitp on
check catalog-kind 0 'Vulkan0  *24576 ' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu vulkan:rtx-3090 -fitp on
check catalog-unknown 2 "unknown device 'rtx-390'; did you mean rtx-3090" -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-390
check catalog-laptop-typo 2 "unknown device 'rtx-4060-laptopp'; did you mean rtx-4060-laptop" -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-4060-laptopp
# devices --catalog [FILTER]: the catalog's rows whose id or name contain FILTER.
check devices-catalog-laptop 0 '^rtx-4060-laptop  *cuda ' -- "$ggfit" devices --catalog laptop
check devices-catalog-none 2 "no device's id or name contains 'zzz'" -- \
    "$ggfit" devices --catalog zzz

# What ggfit sees: this machine (no GPU here), then fake roots.
if [ -r /proc/meminfo ]; then
    mem_total=$(awk '/^MemTotal:/ { printf "%.0f", $2 / 1024 }' /proc/meminfo)
    check devices-host 0 "memory  *$mem_total MiB total, [0-9]* MiB available" -- "$ggfit" devices
fi
check devices-json 0 '"available": [0-9]' -- "$ggfit" devices --json
mkdir -p "$tmp/root/proc" "$tmp/root/sys/class/drm/card0/device"
printf 'MemTotal: 4194304 kB\nMemAvailable: 524288 kB\n' >"$tmp/root/proc/meminfo"
printf 'model name\t: Fake CPU\nflags\t\t: fpu avx2\n' >"$tmp/root/proc/cpuinfo"
printf '0x1002\n' >"$tmp/root/sys/class/drm/card0/device/vendor"
printf '8589934592\n' >"$tmp/root/sys/class/drm/card0/device/mem_info_vram_total"
printf '1073741824\n' >"$tmp/root/sys/class/drm/card0/device/mem_info_vram_used"
check devices-sysroot 0 'ROCm0  *rocm  *8192  *7168  *1024 ' -- \
    env GGFIT_NVML=/none "$ggfit" devices --sysroot "$tmp/root"
check devices-sysroot-host 0 'host: Fake CPU' -- "$ggfit" devices --sysroot "$tmp/root"
check devices-sysroot-json 0 '"held_by_others": 1073741824' -- \
    "$ggfit" devices --json --sysroot "$tmp/root"
check devices-no-root 2 "$tmp/none/proc/meminfo: cannot read" -- \
    "$ggfit" devices --sysroot "$tmp/none"
check devices-unknown-arg 2 "^ggfit devices: unknown option '--frobnicate'$" -- \
    "$ggfit" devices --frobnicate
# Without --gpu the fit plans for the discovered devices and host memory.
check discovered-project 0 'ROCm0  *7168  *1884  *1024  *5284  ok' -- \
    env GGFIT_SYSROOT="$tmp/root" GGFIT_NVML=/none "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" -c 4096 -fitp on \
    --for fit-params
rm -r "$tmp/root/sys"
check discovered-cpu-only 1 'projected to use 1897 MiB of host memory vs. 512 MiB' -- \
    env GGFIT_SYSROOT="$tmp/root" GGFIT_NVML=/none "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" -c 4096 -v \
    --for fit-params

check fit-off-fails 1 'fitting is off (-fit off)' -- \
    "$ggfit" -m "$models/qwen3-30b-a3b-Q4_K_M.gguf" --gpu 8GiB -fit off
# -fit off: no fit runs, so the context stays as given (-c 0), whatever the
# version (b10587's fit would write -c 40960)
check fit-off-fits 0 '^-c 0 -ngl -1$' -- \
    fitted "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB -fit off --for fit-params
check fit-off-server 0 '^-c 0 -ngl all -np 2 -fit off$' -- \
    fitted "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB -fit off -np 2

# CPU only: the host's memory, this machine's or a described one.
check cpu-only-fits 0 '^-c 40960 -ngl -1$' -- \
    fitted "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu none --host-mem 64GiB --for fit-params
check cpu-only-reduces 0 '^-c [0-9]* -ngl -1$' -- \
    fitted "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu none --host-mem 3GiB/3GiB --for fit-params
check cpu-only-fails 1 'unable to fit model into system memory' -- \
    "$ggfit" -m "$models/qwen3-14b-f16.gguf" --gpu none --host-mem 8GiB --wide
check host-mem-bad 2 "host-mem: bad size 'lots'" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu none --host-mem lots

# A described CPU with AMX: llama.cpp's Host row leaves out the weights of
# its AMX buffer type (an AMX machine's llama-fit-params printed Host model
# 311,427,072 B for qwen3-0.6b on the CPU, default flags), shown beside it
# and counted in the verdict's Host pool (5078 + 1137 MiB).
host_json() {  # the projection's Host row, one line
    "$@" --json | tr -d ' \n' | grep -o '"host":{[^}]*}'
}
check cpu-amx-host 0 '^"host":{"model":311427072,' -- \
    host_json "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu none --cpu sapphire-rapids \
    -fitp on --for fit-params --host-mem 64GiB/60GiB
check cpu-amx-row 0 "^  AMX  *1137  *1137  *0  *0$" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu none --cpu amx -fitp on --for fit-params \
    --host-mem 64GiB/60GiB
check cpu-amx-verdict 0 '^  Host  *61440  *6215  *1024  *55225  ok$' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu none --cpu sapphire-rapids -fitp on \
    --for fit-params --host-mem 64GiB/60GiB
check cpu-bad 2 "^ggfit: --cpu: unknown CPU or feature 'sapphire-rapid'; did you mean sapphire-rapids?$" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu none --cpu sapphire-rapid
check cpu-help 0 '^  --cpu CPU ' -- "$ggfit" --help

# The flags ggfit adds to llama.cpp's, parsed by the library: each message
# exactly as the CLI has always printed it.
check project-no-model 2 '^ggfit: -m FILE is needed$' -- "$ggfit" --gpu 8GiB -c 4096
check project-no-value 2 '^ggfit: --gpu needs a value$' -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu
check project-bad-fit 2 "^ggfit: -fit: expected on or off, got 'maybe'$" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB -fit maybe
check project-bad-fitc 2 "^ggfit: -fitc: expected a context size, got '12x'$" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB -fitc 12x
check project-bad-flag 2 "^ggfit: -c: expected a non-negative integer, got 'x'$" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB -c x
check project-unknown-arg 2 "^ggfit: unknown option '--frobnicate'$" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB --frobnicate
# Every command's flags come from the table (data/flags.tsv): its -h lists
# them, an unknown one names the closest the command takes.
check project-did-you-mean 2 "^ggfit: unknown option '--ctx-sise': did you mean --ctx-size?$" -- \
    "$ggfit" -m "$models/qwen3-0.6b-f16.gguf" --gpu 8GiB --ctx-sise 4096
check inspect-did-you-mean 2 "^ggfit inspect: unknown option '--tensor': did you mean --tensors?$" -- \
    "$ggfit" inspect -m "$models/qwen3-0.6b-f16.gguf" --json --tensor
check sweep-did-you-mean 2 "^ggfit sweep: unknown option '--svgg': did you mean --svg?$" -- \
    "$ggfit" sweep -m "$models/qwen3-0.6b-f16.gguf" --svgg x.svg
check bench-help-table 0 '^  -d N\[,N\.\.\.\]  *llama-bench.s depth' -- "$ggfit" bench -h
check sweep-help-table 0 '^  --over ctx|ngl|ncmoe  *sweep the context' -- "$ggfit" sweep --help
check help-llama-flags 0 '^  llama.cpp flags    -c -b -ub ' -- "$ggfit" --help
check bench-no-value 2 '^ggfit bench: -p needs a value$' -- \
    "$ggfit" bench -m "$models/qwen3-0.6b-f16.gguf" -p
public_only() {  # the CLI is a client of the library's public headers alone
    # (and of its table of commands, data/commands.txt made a header)
    if grep -n '^#include "' cli/ggfit.c | grep -v '"\(ggfit\(_app\)\?\|commands_data\)\.h"'; then
        return 1
    fi
    echo "the CLI includes the public headers alone"
}
check cli-public-headers 0 '^the CLI includes the public headers alone$' -- public_only
every_help() {  # every command's -h: exit 0, its synopsis, 80 columns at most
    for c in "" inspect devices archs reorder bench sweep; do
        "$ggfit" $c -h >"$tmp/help" 2>&1 || { echo "ggfit $c -h: exit $?"; return 1; }
        grep -q "^usage: ggfit $c" "$tmp/help" || { echo "ggfit $c -h: no synopsis"; return 1; }
        awk -v c="$c" 'length > 80 { print "ggfit " c " -h: " $0; bad = 1 } END { exit bad }' \
            "$tmp/help" || return 1
    done
    echo "every -h fits 80 columns"
}
check every-help 0 '^every -h fits 80 columns$' -- every_help
# Issue 27: the text of every command fits an 80-column terminal, on every
# shipped layout and a few machines (two CUDA cards, none, a Mac); the plan's
# flags on stdout are a command line and may run longer. Names the command
# and the line that does not fit.
every_width() {
    bad=0
    wide() {  # wide WHAT FILE: the lines of FILE past 80 columns
        # (but a command to paste, which a line break would break)
        awk -v what="$1" 'length($0) > 80 && !/^  llama-(server|cli|fit-params|bench) / {
                              print what ": " length($0) " columns: " $0; n++ }
                          END { exit n > 0 }' "$2" || bad=1
    }
    for m in "$models"/*.gguf; do
        b=$(basename "$m")
        "$ggfit" inspect -m "$m" >"$tmp/w.out" 2>&1
        wide "ggfit inspect -m $b" "$tmp/w.out"
        for g in rtx-3090,rtx-3060-12gb none m4-max-128gb; do
            "$ggfit" -m "$m" --gpu $g --host-mem 64G >/dev/null 2>"$tmp/w.err"
            wide "ggfit -m $b --gpu $g" "$tmp/w.err"
            "$ggfit" -m "$m" --gpu $g --host-mem 64G --objective speed >/dev/null 2>"$tmp/w.err"
            wide "ggfit -m $b --gpu $g --objective speed" "$tmp/w.err"
            for c in bench sweep; do
                "$ggfit" $c -m "$m" --gpu $g --host-mem 64G >"$tmp/w.out" 2>&1
                wide "ggfit $c -m $b --gpu $g" "$tmp/w.out"
            done
        done
    done
    "$ggfit" bench -m "$models/qwen3-30b-a3b-Q4_K_M.gguf" --gpu rtx-3090,rtx-3060-12gb \
        --host-mem 64G -- llama-bench -p 512,4096 -n 128 -ngl 99,20 -r 2 >"$tmp/w.out" 2>&1
    wide "ggfit bench -- llama-bench" "$tmp/w.out"
    "$ggfit" sweep -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090,rtx-3060-12gb \
        --host-mem 64G --over ncmoe >"$tmp/w.out" 2>&1
    wide "ggfit sweep --over ncmoe" "$tmp/w.out"
    "$ggfit" -m "$models"/qwen3-14b-Q4_K_M.gguf -m "$models"/qwen3-next-80b-a3b-Q4_K_M.gguf \
        -m "$models"/gpt-oss-120b-mxfp4.gguf --gpu rtx-3090 --host-mem 64G >"$tmp/w.out" 2>&1
    wide "ggfit -m ... (three models)" "$tmp/w.out"
    for c in "devices" "devices --catalog" "archs"; do
        "$ggfit" $c >"$tmp/w.out" 2>&1
        wide "ggfit $c" "$tmp/w.out"
    done
    # --wide keeps every column, and its lines whole
    "$ggfit" inspect -m "$models/qwen3-next-80b-a3b-Q4_K_M.gguf" --wide >"$tmp/w.out" 2>&1
    grep -q ' nextn  heads/kv' "$tmp/w.out" || { echo "inspect --wide left out a column"; bad=1; }
    [ "$bad" -eq 0 ] && echo "every command's text fits 80 columns"
}
check every-width 0 "^every command's text fits 80 columns$" -- every_width
# the man page (make man): renders without a warning, and names every flag
check man-page 0 '^man: ok, [0-9]* flags$' -- \
    python3 tools/gen_man.py --check "$(dirname "$ggfit")/ggfit.1" data/flags.tsv data/llama_args.tsv

# Issue 27: what each command's -h says before its flags is the man page's
# (data/commands.txt makes both): every form of its synopsis and its words
# are in the rendered page, whitespace aside. The plan's words are the list
# of commands: its own entry (the others' are their commands' summaries,
# which the page gives as each command's -h words).
man_has_help() {
    groff -man -Tascii -P-cbou "$(dirname "$ggfit")/ggfit.1" | tr '\n' ' ' | tr -s ' ' \
        >"$tmp/man.txt" || return 1
    for c in "" inspect devices archs reorder bench sweep; do
        "$ggfit" $c -h >"$tmp/help" 2>&1 || { echo "ggfit $c -h: exit $?"; return 1; }
        # one line each: the synopsis's forms, then the words
        awk -v plan="$([ -z "$c" ] && echo 1)" '
            function flat(s) { gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
            NR == 1 { sub(/^usage: /, "") }
            part == 0 && $0 == "" { print flat(form); part = 1; next }
            part == 0 { if ($1 == "ggfit" && form != "") { print flat(form); form = "" }
                        form = form " " $0; next }
            part == 1 && $0 == "" { exit }
            part == 1 && plan && /^  [^ ]/ { own = $1 == "(none)"; if (own) sub(/^  \(none\)/, "") }
            part == 1 && (!plan || own) { words = words " " $0 }
            END { if (words == "") print "(no words)"; else print flat(words) }' \
            "$tmp/help" >"$tmp/parts"
        while IFS= read -r part; do
            grep -qF -- "$part" "$tmp/man.txt" ||
                { echo "ggfit $c -h: not in the man page: $part"; return 1; }
        done <"$tmp/parts"
    done
    echo "the man page says what every -h says"
}
check man-has-help 0 '^the man page says what every -h says$' -- man_has_help

# docs/library.md's C program: quoted there exactly, and built next to the CLI
# (make's $(B)/plan), it prints what the CLI prints, with the same status.
readme_example() {  # the first C block after docs/library.md names examples/plan.c
    awk '/examples\/plan\.c/ { seen = 1 } seen && /^```c$/ { on = 1; next }
         on && /^```$/ { exit } on' docs/library.md | diff - examples/plan.c &&
        echo "docs/library.md quotes examples/plan.c"
}
check readme-example 0 '^docs/library.md quotes examples/plan.c$' -- readme_example

readme_archs() {  # docs/architectures.md's table is ggfit archs --markdown
    sed -n '/^<!-- ggfit archs --markdown -->$/,/^<!-- end of ggfit archs -->$/p' docs/architectures.md |
        sed '1d;$d' | diff - "$tmp/archs.md" && echo "docs/architectures.md lists every architecture"
}
"$ggfit" archs --markdown >"$tmp/archs.md"
check readme-archs 0 '^docs/architectures.md lists every architecture$' -- readme_archs
# The examples of README.md and docs/*.md are real output (they run
# ./build/ggfit: the plain build), and their relative links resolve.
case "$ggfit" in
build/ggfit|./build/ggfit|"$PWD/build/ggfit")
    check readme-examples 0 '^README examples are real output, and every link resolves$' -- \
        python3 tools/readme_examples.py --check ;;
*)
    check readme-links 0 '^every link resolves$' -- python3 tools/readme_examples.py --links ;;
esac
check archs-text 0 '^gpt-oss  *exact  *b10309 b10587 KV cache, sliding window$' -- "$ggfit" archs
check archs-json-versions 0 '"exact_for": \[' -- "$ggfit" archs --json
# The llama.cpp a plan answers for (issue 28): named in every plan, given
# as a build, a commit or latest, compared with --vs-version.
l8b="$models/llama-3.1-8b-Q4_K_M.gguf"
check version-default 0 '^for llama.cpp b10587 (3f545becc, 2026-08-22)$' -- \
    "$ggfit" -m "$l8b" --gpu rtx-4090 -c 8192
check version-b10309 0 '"build": 10309' -- "$ggfit" -m "$l8b" --gpu rtx-4090 --llama-version b10309 --json
check version-commit 0 '"commit": "3f545beccee69d9975f466ec7e45fd9aacd8ba90"' -- \
    "$ggfit" -m "$l8b" --gpu rtx-4090 --llama-version 3f545be --json
check version-between 0 'between the versions ggfit is' -- \
    "$ggfit" -m "$l8b" --gpu rtx-4090 --llama-version b10450
check version-newer 0 'newer than b10587, the newest ggfit knows' -- \
    "$ggfit" -m "$l8b" --gpu rtx-4090 --llama-version b11000
check version-bad 2 'cannot read a llama.cpp version from "b10x": give b<build>' -- \
    "$ggfit" -m "$l8b" --gpu rtx-4090 --llama-version b10x
check version-unknown-commit 2 'llama.cpp commit deadbeef is not one ggfit knows' -- \
    "$ggfit" -m "$l8b" --gpu rtx-4090 --llama-version deadbeef
check vs-version 0 '^  against b10309 (82bb48500, 2026-08-07)$' -- \
    "$ggfit" -m "$l8b" --gpu rtx-4090 --vs-version b10309
check vs-version-json 0 '"changes": \[' -- "$ggfit" -m "$l8b" --gpu rtx-4090 --vs-version b10309 --json
check archs-json 0 '"name": "qwen3next"' -- "$ggfit" archs --json
check archs-bad 2 "^ggfit archs: unknown option '--frobnicate'$" -- "$ggfit" archs --frobnicate
# Errors you can read (issue 27): what is wrong and the fix, then where the
# help is; exit status 2.
q06="$models/qwen3-0.6b-f16.gguf"
check err-hostmem-typo 2 "^ggfit: unknown option '--hostmem': did you mean --host-mem?$" -- \
    "$ggfit" -m "$q06" --hostmem 32GiB
check err-help-hint 2 '^ggfit -h for help$' -- "$ggfit" -m "$q06" --hostmem 32GiB
check err-sub-help-hint 2 '^ggfit inspect -h for help$' -- "$ggfit" inspect --frobnicate
check err-command-typo 2 "^ggfit: 'inspct' is not a command: did you mean inspect?$" -- \
    "$ggfit" inspct -m "$q06"
check err-bare-path 2 "^ggfit: data/models/x.gguf: give the model with -m: ggfit -m data/models/x.gguf$" -- \
    "$ggfit" data/models/x.gguf
check err-bare-path-inspect 2 "^ggfit inspect: $q06: give the model with -m: -m $q06$" -- \
    "$ggfit" inspect "$q06"
check err-host-mem-bare 2 '^ggfit: --host-mem 32: give a unit: 32GiB$' -- \
    "$ggfit" -m "$q06" --gpu 8GiB --host-mem 32
check err-host-mem-free-bare 2 '^ggfit: --host-mem 64GiB/50: give a unit: 64GiB/50GiB$' -- \
    "$ggfit" -m "$q06" --gpu 8GiB --host-mem 64GiB/50
check err-fitt-mib 0 '^-c ' -- "$ggfit" -m "$q06" --gpu 8GiB --host-mem 32GiB -fitt 1024 -q
check note-gpu-gb 0 '^ggfit: note: --gpu 24GB is 22888 MiB, 7% less than 24GiB: give 24GiB if that is the size meant$' -- \
    "$ggfit" -m "$q06" --gpu 24GB --host-mem 64GiB -q
check note-host-mem-gb 0 '^ggfit: note: --host-mem 64GB is 61035 MiB' -- \
    "$ggfit" -m "$q06" --gpu 24GiB --host-mem 64GB -q
no_note() {  # binary units: no note
    "$ggfit" -m "$q06" --gpu 24GiB --host-mem 64GiB/60GiB -q 2>&1 >/dev/null | grep note ||
        echo "no note"
}
check note-none 0 '^no note$' -- no_note
check err-ctx-too-large 2 '^ggfit: -c: 99999999999 is too large (at most 4294967040)$' -- \
    "$ggfit" -m "$q06" --gpu 8GiB -c 99999999999
check err-ubatch-too-large 2 '^ggfit: -ub: 99999999999999999999999 is too large (at most 4294967295)$' -- \
    "$ggfit" -m "$q06" --gpu 8GiB -ub 99999999999999999999999
check err-fitc-too-large 2 '^ggfit: -fitc: 4294967296 is too large (at most 4294967295)$' -- \
    "$ggfit" -m "$q06" --gpu 8GiB -fitc 4294967296
check err-min-ctx-too-large 2 '^ggfit: --min-ctx: 99999999999 is too large (at most 100000000)$' -- \
    "$ggfit" -m "$q06" --gpu 8GiB --objective speed --min-ctx 99999999999
check err-bench-p-too-large 2 '^ggfit bench: -p: 99999999999999999999 is too large (at most 10000000)$' -- \
    "$ggfit" bench -m "$q06" --gpu 8GiB -p 99999999999999999999
check err-speed-const-bad 2 "^ggfit bench: --host-bw: expected a number >= 0, got 'fast'$" -- \
    "$ggfit" bench -m "$q06" --gpu 8GiB --host-bw fast
check err-speed-const-inf 2 '^ggfit bench: --tflops: 1e999 is too large (at most 1000000000)$' -- \
    "$ggfit" bench -m "$q06" --gpu 8GiB --tflops 1e999
long_ts=$(awk 'BEGIN { for (i = 0; i < 5000; i++) printf "1,"; printf "x" }')
check err-long-value 2 "^ggfit: -ts: expected proportions like 3,1 (finite, not negative), got '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,...'$" -- \
    "$ggfit" -m "$q06" --gpu 8GiB -ts "$long_ts"
check err-long-flag 2 "^ggfit: unknown option '--xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'$" -- \
    "$ggfit" -m "$q06" "--$(awk 'BEGIN { for (i = 0; i < 9000; i++) printf "x" }')"
check err-empty-model 2 '^ggfit: -m: empty file name$' -- "$ggfit" -m '' --gpu 8GiB
check err-ftp-model 2 '^ggfit: -m ftp://example.com/m.gguf: only http and https URLs (or a local file)$' -- \
    "$ggfit" -m ftp://example.com/m.gguf --gpu 8GiB
check err-ftp-inspect 2 '^ggfit: -m ftp://example.com/m.gguf: only http and https URLs' -- \
    "$ggfit" inspect -m ftp://example.com/m.gguf
# a pasted llama.cpp line: a flag ggfit does not know is planned with a
# warning (its value, the word after it, taken with it); on ggfit's own
# command line it is refused
check pasted-unknown-flag 0 '^ggfit: warning: --new-cache-mode: unknown to ggfit (fast taken as its value); if it changes memory, the plan may be off$' -- \
    "$ggfit" --gpu 24GiB --host-mem 64GiB -q -- llama-server -m "$q06" --new-cache-mode fast -c 8192
check pasted-unknown-planned 0 '^-c 8192 ' -- \
    "$ggfit" --gpu 24GiB --host-mem 64GiB -q -- llama-server -m "$q06" --new-cache-mode fast -c 8192
check pasted-unknown-switch 0 '^ggfit: warning: --new-switch: unknown to ggfit; if it changes memory' -- \
    "$ggfit" --gpu 24GiB --host-mem 64GiB -q -- llama-server -m "$q06" --new-switch -c 8192
check pasted-unknown-negative 0 ': unknown to ggfit (-1 taken as its value' -- \
    "$ggfit" --gpu 24GiB --host-mem 64GiB -q -- llama-server -m "$q06" --new-count -1 -c 8192
check pasted-typo 0 '^ggfit: warning: --ctx-sise: unknown to ggfit (4096 taken as its value; did you mean --ctx-size?)' -- \
    "$ggfit" --gpu 24GiB --host-mem 64GiB -q -- llama-server -m "$q06" --ctx-sise 4096
check own-line-refuses 2 "^ggfit: unknown option '--new-cache-mode'$" -- \
    "$ggfit" --gpu 24GiB --host-mem 64GiB -q -m "$q06" --new-cache-mode fast
# every error: at most 3 lines on stderr, none a usage block, exit status 2
short_errors() {
    n=0
    while IFS= read -r line; do
        [ -z "$line" ] && continue
        n=$((n + 1))
        eval "set -- $line"
        "$ggfit" "$@" >/dev/null 2>"$tmp/err.txt"
        rc=$?
        lines=$(wc -l <"$tmp/err.txt")
        if [ "$rc" -ne 2 ] || [ "$lines" -gt 3 ] || [ "$lines" -lt 1 ] ||
            grep -q '^usage:' "$tmp/err.txt"; then
            echo "ggfit $line: exit $rc, $lines lines:"
            cat "$tmp/err.txt"
            return 1
        fi
    done <<EOF
--hostmem 32GiB
inspct
foo bar
data/models/x.gguf
-m "$q06" --gpu 24
-m "$q06" --gpu 4090
-m "$q06" --gpu 24GiB/20
-m "$q06" --gpu ''
-m "$q06" --gpu 24GiB, --host-mem 64GiB
-m "$q06" --host-mem 32
-m "$q06" --host-mem abc
-m "$q06" -c
-m "$q06" -c x
-m "$q06" -c 99999999999
-m "$q06" -np 0
-m "$q06" -fa maybe
-m "$q06" -ctk q3_k
-m "$q06" -ot nothing
-m "$q06" -ts "$long_ts"
-m "$q06" -fit maybe
-m "$q06" -fitt lots
-m "$q06" -fitc 12x
-m "$q06" --for nothing
-m "$q06" --objective fastest
-m "$q06" --min-ctx 0
-m "$q06" --min-ctx 4096
-m ''
-m ftp://example.com/m.gguf
-m "$tmp/none.gguf" --gpu 8GiB
-- llama-nothing -m x
--
inspect
inspect --frobnicate
inspect -m "$q06" --tensor
devices --frobnicate
archs --markdown --frobnicate
reorder a
reorder a b c
bench -m "$q06" -p x
bench -- llama-server -m x
sweep -m "$q06" --over x
sweep -m "$q06" --svgg x.svg
sweep -m "$q06" --as-type q9
EOF
    echo "$n errors, each at most 3 lines"
}
check short-errors 0 '^4[0-9] errors, each at most 3 lines$' -- short_errors
plan=$(dirname "$ggfit")/plan
same_as_cli() {  # stdout and exit status of the CLI and of examples/plan.c
    # (a fixed host, so that this machine's memory cannot move between them;
    # a --host-mem given later wins)
    "$ggfit" --host-mem 64GiB/60GiB "$@" >"$tmp/cli.out" 2>/dev/null
    a=$?
    "$plan" --host-mem 64GiB/60GiB "$@" >"$tmp/plan.out" 2>/dev/null
    b=$?
    cat "$tmp/plan.out"
    [ "$a" -eq "$b" ] && cmp -s "$tmp/cli.out" "$tmp/plan.out" && echo "same as the CLI (exit $a)"
}
check example-fit 0 '^-c 8192 -ngl 33 -np 4 -kvu -fit off$' -- \
    "$plan" -m "$models/qwen3-14b-f16.gguf" --gpu cuda:24576MiB/24077MiB -c 8192
check example-same-8k 0 '^same as the CLI (exit 0)$' -- \
    same_as_cli -m "$models/qwen3-14b-f16.gguf" --gpu cuda:24576MiB/24077MiB -c 8192
check example-same-40k 0 '^same as the CLI (exit 0)$' -- \
    same_as_cli -m "$models/qwen3-14b-f16.gguf" --gpu cuda:24576MiB/24077MiB -c 40960
check example-same-ot 0 '^same as the CLI (exit 0)$' -- \
    same_as_cli -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu cuda:24576MiB/24077MiB -c 32768 --host-mem 64GiB
check example-same-print 0 '^same as the CLI (exit 0)$' -- \
    same_as_cli -m "$models/llama-3.1-8b-Q4_K_M.gguf" --gpu rpc:81920MiB,rpc:81920MiB \
    -c 8192 -ts 3,1 -fitp on
check example-same-cpu-only 0 '^same as the CLI (exit 1)$' -- \
    same_as_cli -m "$models/qwen3-14b-f16.gguf" --gpu none --host-mem 8GiB
check example-same-bad-gpu 0 '^same as the CLI (exit 2)$' -- \
    same_as_cli -m "$models/qwen3-0.6b-f16.gguf" --gpu tpu:8GiB

# --fit-around: the set flags kept, the rest fitted around them; the
# printed flags, run again (they end in -fit off), fit as they are.
around_again() {  # around_again MODEL GPU FLAGS...: the plan's flags, planned again
    m=$1 g=$2
    shift 2
    line=$("$ggfit" -m "$m" --gpu "$g" --host-mem 64GiB "$@" --fit-around 2>/dev/null) || return 1
    set -f
    # shellcheck disable=SC2086
    "$ggfit" -m "$m" --gpu "$g" --host-mem 64GiB $line --json | grep '"status": "unchanged"'
    rc=$?
    set +f
    return $rc
}
check fit-around-ngl 0 '^-c 65536 -ngl 99 -ts 13,24 -ot blk\[.\]12\[.\]ffn_down=CUDA1,' -- \
    fitted "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090,rtx-3090 --host-mem 64GiB \
    -ngl 99 -c 65536 --fit-around
# set flags that load with less than the margin free: said so, not 'runs out of memory'
check inside-margin-set 1 '^as given they load, with less than the margin free (CUDA0 749 MiB inside' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu rtx-3060-12gb --host-mem 64GiB -ngl 99 -c 20480
# the words come from the placement the flags make: blk.12.ffn_down=CUDA1
check placement-words 0 '^  layer 12: CUDA0, part of the experts on CUDA1$' -- \
    "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090,rtx-3090 --host-mem 64GiB -c 65536
placement_again() {  # the placement text of a plan, and of its printed flags planned again
    line=$("$ggfit" "$@" 2>/dev/null) || return 1
    "$ggfit" "$@" --wide 2>&1 >/dev/null | sed -n '/^placement:/,/^predicted/p' | grep -v '^  context' >"$tmp/p1"
    # shellcheck disable=SC2086
    "$ggfit" "$@" $line --wide 2>&1 >/dev/null | sed -n '/^placement:/,/^predicted/p' | grep -v '^  context' >"$tmp/p2"
    cmp -s "$tmp/p1" "$tmp/p2" && grep -q 'layer' "$tmp/p1" && echo "the flags place as the words say"
}
for gpus in rtx-3090,rtx-3090 rtx-3090,rtx-3060-12gb rtx-4090,rtx-3090,rtx-3060-12gb; do
    check "placement-flags-$gpus" 0 '^the flags place as the words say$' -- \
        placement_again -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu "$gpus" --host-mem 64GiB -c 65536
    check "placement-flags-next-$gpus" 0 '^the flags place as the words say$' -- \
        placement_again -m "$models/qwen3-next-80b-a3b-Q4_K_M.gguf" --gpu "$gpus" --host-mem 128GiB
done
check fit-around-report 0 '^--fit-around: kept as given: -c 65536 -ngl 99; fitted around them: -ts 13,24, -ot with 13 tensor overrides' -- \
    "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090,rtx-3090 --host-mem 64GiB \
    -ngl 99 -c 65536 --fit-around --wide
check fit-around-json 0 '"args": "-c 65536 -ngl 99"' -- \
    "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090,rtx-3090 --host-mem 64GiB \
    -ngl 99 -c 65536 --fit-around --json
check fit-around-json-key 0 '"fit_around": {' -- \
    "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090,rtx-3090 --host-mem 64GiB \
    -ngl 99 -c 65536 --fit-around --json
check fit-around-off 1 'drop the flag named above' -- \
    "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090,rtx-3090 --host-mem 64GiB \
    -ngl 99 -c 65536 --wide
check fit-around-again-ngl 0 '"status": "unchanged"' -- \
    around_again "$models/gpt-oss-120b-mxfp4.gguf" rtx-3090 -ngl 99 -c 65536
check fit-around-again-ts 0 '"status": "unchanged"' -- \
    around_again "$models/gpt-oss-120b-mxfp4.gguf" rtx-3090,rtx-3090 -ts 3,1
check fit-around-ts 0 ' -ts 3,1 ' -- \
    fitted "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090,rtx-3090 --host-mem 64GiB \
    -ts 3,1 --fit-around
check fit-around-again-ot 0 '"status": "unchanged"' -- \
    around_again "$models/qwen3-30b-a3b-Q4_K_M.gguf" rtx-4060 -ot ffn_up_exps=CPU -c 32768
check fit-around-again-ncmoe 0 '"status": "unchanged"' -- \
    around_again "$models/qwen3-30b-a3b-Q4_K_M.gguf" rtx-4060 -ncmoe 10
check fit-around-again-dense 0 '"status": "unchanged"' -- \
    around_again "$models/qwen3-14b-Q4_K_M.gguf" rtx-4060,rtx-4060 -ngl 99
check fit-around-dense-ts 1 'nothing fits around them: -ngl 99 and -ts 1,1 fix where every layer of this dense model goes' -- \
    "$ggfit" -m "$models/llama-3.3-70b-Q4_K_M.gguf" --gpu rtx-3090,rtx-3090 --host-mem 64GiB \
    -ngl 99 -ts 1,1 -c 32768 --fit-around --wide
check fit-around-fit-off 1 '^--fit-around: -fit off checks the flags as given' -- \
    "$ggfit" -m "$models/gpt-oss-120b-mxfp4.gguf" --gpu rtx-3090 --host-mem 64GiB -ngl 99 \
    -fit off --fit-around
check fit-around-ngl0 1 '-ngl 0 keeps every layer in system memory' -- \
    "$ggfit" -m "$models/qwen3-14b-Q4_K_M.gguf" --gpu 1GiB --host-mem 64GiB -ngl 0 --fit-around --wide

# Remote models: the header over HTTP from nginx on 127.0.0.1
# (tests/http_server.sh, as test_remote.c), and Hugging Face's -hf against
# a hub laid out as files (HF_ENDPOINT).
srv=$tmp/http
mkdir -p "$srv"
port=$(sh tests/http_server.sh start "$srv" "$models" 2>"$tmp/http.err")
http_rc=$?
if [ "$http_rc" -eq 0 ]; then
    url=http://127.0.0.1:$port
    GGFIT_CACHE_DIR=$tmp/cache
    export GGFIT_CACHE_DIR
    same_remote() {  # same_remote URL FILE FLAGS...: stdout and exit of both
        u=$1 f=$2
        shift 2
        "$ggfit" -m "$f" "$@" >"$tmp/local.out" 2>/dev/null
        a=$?
        env HF_ENDPOINT="$url" "$ggfit" $u "$@" >"$tmp/remote.out" 2>/dev/null
        b=$?
        cat "$tmp/remote.out"
        [ "$a" -eq "$b" ] && cmp -s "$tmp/local.out" "$tmp/remote.out" && echo "same as the file (exit $a)"
    }
    check remote-plan 0 '^same as the file (exit 0)$' -- \
        same_remote "-m $url/files/gpt-oss-120b-mxfp4.gguf" "$models/gpt-oss-120b-mxfp4.gguf" \
        --gpu cuda:24576MiB/24077MiB -c 32768 --host-mem 64GiB
    check remote-plan-mu 0 '^same as the file (exit 0)$' -- \
        same_remote "-mu $url/redirect/qwen3-14b-f16.gguf" "$models/qwen3-14b-f16.gguf" \
        --gpu cuda:24576MiB/24077MiB -c 8192 --for fit-params
    check remote-inspect 0 '687, 63,374,323,968 B of data' -- \
        "$ggfit" inspect -m "$url/norange/big.gguf"
    check remote-404 2 "$url/files/none.gguf: HTTP 404: no such file" -- \
        "$ggfit" -m "$url/files/none.gguf" --gpu 8GiB
    check remote-gated 2 'HTTP 401 .*set HF_TOKEN' -- \
        env HF_ENDPOINT="$url" "$ggfit" inspect -m "$url/gated/model.gguf"
    # the same refusal from a server that is not the hub: no HF_TOKEN said
    check remote-denied-not-hub 2 'HTTP 401 .*: access denied by the server (not Hugging Face: no token is sent to it)$' -- \
        env HF_ENDPOINT=https://hub.example "$ggfit" inspect -m "$url/gated/model.gguf"
    check remote-stalled 2 'the transfer stalled' -- \
        env GGFIT_HTTP_STALL_TIMEOUT_MS=1000 "$ggfit" inspect -m "$url/slow/qwen3-0.6b-f16.gguf"
    check hf-default 0 '^same as the file (exit 0)$' -- \
        same_remote "-hf ggfit/Qwen3-GGUF" "$models/qwen3-14b-Q4_K_M.gguf" --gpu cuda:8GiB -c 8192 \
        --for fit-params
    check hf-quant 0 '/resolve/0123456789abcdef0123456789abcdef01234567/Qwen3-0.6B-Q8_0.gguf$' -- \
        env HF_ENDPOINT="$url" "$ggfit" inspect -hf ggfit/Qwen3-GGUF:q8_0
    check hf-file 0 '"name": "Qwen3-30B-A3B"' -- \
        env MODEL_ENDPOINT="$url" HF_ENDPOINT=http://127.0.0.1:1 "$ggfit" inspect --json \
        -hf ggfit/Qwen3-GGUF -hff Qwen3-30B-A3B-Q4_K_M.gguf
    check hf-no-quant 2 "ggfit/Qwen3-GGUF: no GGUF file for the quant 'IQ1_S'; its GGUF files: Qwen3-0.6B-F16.gguf" -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/Qwen3-GGUF:IQ1_S --gpu 8GiB
    check hf-gated 2 'gated-GGUF/refs: HTTP 401 .*set HF_TOKEN' -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/gated-GGUF --gpu 8GiB
    # llama-cli runs llama-server's code (b10309): the projector counts too
    check hf-mmproj-cli 0 "^multimodal projector mmproj-Qwen3-F16.gguf (-hf's, loaded with the model)" -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/Qwen3-GGUF --gpu cuda:8GiB -c 8192 --for cli
    # llama-server's plan (the default) counts the repo's projector: read
    # over HTTP and measured; --no-mmproj leaves it out, and the line says so
    check hf-mmproj-server 0 '"projector": "qwen2.5vl_merger"' -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/Qwen3-GGUF --gpu cuda:8GiB -c 8192 --json
    check hf-mmproj-counted 0 "^multimodal projector mmproj-Qwen3-F16.gguf (-hf's, loaded with the model)" -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/Qwen3-GGUF --gpu cuda:8GiB -c 8192
    check hf-no-mmproj 0 '^-c 8192 -ngl 27 -np 4 -kvu --no-mmproj -fit off$' -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/Qwen3-GGUF --gpu cuda:8GiB -c 8192 --no-mmproj
    check hf-no-mmproj-planned 0 '^0$' -- \
        sh -c '"$@" 2>&1 | grep -c "^note: ignored.*--no-mmproj"; exit 0' - \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/Qwen3-GGUF --gpu cuda:8GiB -c 8192 --no-mmproj
    check hf-bad-repo 2 'invalid Hugging Face repository' -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf qwen3 --gpu 8GiB
    # which quant?: -hf USER/MODEL --list, best first
    check quants-hf 0 '^best: Qwen3-30B-A3B-Q4_K_M.gguf' -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/Qwen3-GGUF --list --gpu cuda:24GiB \
        --host-mem 64GiB
    check quants-hf-json 0 '"status": "fits_part_in_ram"' -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/Qwen3-GGUF:Q4_K_M --list --gpu cuda:24GiB \
        --host-mem 64GiB --json
    # the headers read above are in the cache: --offline needs no server
    sh tests/http_server.sh stop "$srv"
    check remote-offline 0 '^same as the file (exit 0)$' -- \
        same_remote "-m $url/files/gpt-oss-120b-mxfp4.gguf --offline" \
        "$models/gpt-oss-120b-mxfp4.gguf" --gpu cuda:24576MiB/24077MiB -c 32768 --host-mem 64GiB
    check hf-offline 0 '^same as the file (exit 0)$' -- \
        same_remote "-hf ggfit/Qwen3-GGUF --offline" "$models/qwen3-14b-Q4_K_M.gguf" \
        --gpu cuda:8GiB -c 8192 --for fit-params
    check remote-offline-miss 2 'not in the cache' -- \
        "$ggfit" inspect -m "$url/files/llama-3.1-8b-Q4_K_M.gguf" --offline
    # the listing again, every header and API reply from the cache
    check quants-hf-offline 0 '^  [0-9]  Qwen3-Split-Q6_K-00001-of-00002.gguf (2 files)' -- \
        env HF_ENDPOINT="$url" "$ggfit" -hf ggfit/Qwen3-GGUF --list --gpu cuda:24GiB \
        --host-mem 64GiB --offline
    unset GGFIT_CACHE_DIR
elif [ "$http_rc" -eq 77 ]; then
    echo "cli: nginx is not installed: the remote checks are skipped (scripts/deps.sh test installs it)"
else
    failn=$((failn + 1))
    echo "FAIL http-server: tests/http_server.sh could not start nginx:"
    sed 's/^/    /' "$tmp/http.err" | head -20
fi

# A line you can paste (issue 27): every plan above, printed as the whole
# command (--print-command: the tests are not on a terminal), is one bash
# and sh both take (bash -n), and run with stand-ins for llama.cpp's
# programs on PATH it passes the program exactly the words of the bare
# line (--print-flags, as a pipe gets it) and of --json's argv, after its
# model's words as given.
mkdir "$tmp/bin"
for p in llama-server llama-cli llama-bench llama-fit-params; do
    printf '#!/bin/sh\nprintf "%%s\\0" "${0##*/}" "$@"\n' >"$tmp/bin/$p"
    chmod +x "$tmp/bin/$p"
done
paste_commands() {
    python3 - "$ggfit" "$tmp/plans" "$tmp/bin" <<'PY'
import glob, json, os, shlex, subprocess, sys
ggfit, plans, stand_ins = sys.argv[1:4]
env = dict(os.environ, PATH=stand_ins + os.pathsep + os.environ["PATH"])
subcommands = {"inspect", "devices", "archs", "reorder", "bench", "sweep"}
no_line = {"-h", "--help", "--version", "--list", "-fitp", "--print-memory",
           "--vs-version"}  # stdout no line
drop = {"--json", "-q", "--quiet", "-v", "--verbose", "--print-command", "--print-flags"}   # a plan all the same
def program(args):   # the plan's: --for's, a pasted line's, else llama-server
    prog = "llama-server"
    for i, a in enumerate(args[:-1]):
        if a == "--for":
            prog = "llama-" + args[i + 1]
        elif a == "--":
            prog = os.path.basename(args[i + 1])
    return prog
def run(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    return p.returncode, p.stdout.decode()
n, bad, seen = 0, 0, set()
for f in sorted(glob.glob(plans + "/*"), key=lambda f: int(os.path.basename(f))):
    args = [a for a in open(f, "rb").read().decode().split("\0")[1:-1] if a not in drop]
    if (not args or args[0] in subcommands or no_line & set(args)
            or any(a.endswith("llama-bench") for a in args) or "--models-preset" in args
            or "--models-dir" in args or "llama-swap" in args
            or args.count("-m") > 1 or tuple(args) in seen):   # several -m: --list's table
        continue
    seen.add(tuple(args))
    rc, flags = run([ggfit, "--print-flags"] + args)
    if rc == 2 or not flags.strip():
        continue
    _, command = run([ggfit, "--print-command"] + args)
    _, js = run([ggfit, "--json"] + args)
    try:
        words = shlex.split(flags.strip())
    except ValueError:
        words = ["(not shell words: %s)" % flags.strip()]
    try:
        argv = json.loads(js).get("argv", words)
    except ValueError:
        argv = words
    cmd = command.strip()
    why = None
    if len(command.splitlines()) != 1:
        why = "not one line"
    elif subprocess.run(["bash", "-n", "-c", cmd], stderr=subprocess.DEVNULL).returncode:
        why = "bash -n refuses it"
    else:
        for shell in ("bash", "sh"):
            p = subprocess.run([shell, "-c", cmd], stdout=subprocess.PIPE, env=env)
            got = p.stdout.decode().split("\0")[:-1]
            model = got[1:3]
            if got[1:2] == ["-hf"] and got[3:4] == ["-hff"]:
                model = got[1:5]
            if p.returncode or not got or got[0] != program(args):
                why = shell + ": not %s: %r" % (program(args), got[:1])
            elif len(model) < 2 or model[0] not in ("-m", "-hf", "-mu") or model[1] not in args:
                why = shell + ": the model's words are not as given: %r" % model
            # then the user's flags the plan leaves out (--port 8080), as given
            extra = got[1 + len(model):len(got) - len(words)]
            if not why and any(a not in args for a in extra):
                why = shell + ": words not given nor planned: %r" % extra
            if not why and got[len(got) - len(words):] != words:
                why = shell + ": the words differ from the bare line's: %r" % got
            if not why and got[len(got) - len(argv):] != argv:
                why = shell + ": the words differ from --json's argv: %r" % got
            if why:
                break
    n += 1
    if why:
        bad += 1
        print("FAIL %s: %s\n    %s" % (" ".join(args), why, cmd))
print("paste: %d plans, %s" % (n, "every one the same words" if not bad else "%d differ" % bad))
PY
}
# a pasted line's flags that the plan leaves out are the command's too
check paste-user-flags 0 "^llama-server -m $models/qwen3-14b-f16.gguf --host 0.0.0.0 --port 8080 --jinja --lora 'my lora.gguf' -c 32768 -ngl 28 -t 8 -np 4 -kvu -fit off\$" -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --print-command -- llama-server \
    -m "$models/qwen3-14b-f16.gguf" --host 0.0.0.0 --port 8080 -t 8 --jinja -c 32768 --lora 'my lora.gguf'
# and those ggfit does not know (a newer llama.cpp's), with their values
check paste-unknown-flags 0 "^llama-server -m $models/qwen3-14b-f16.gguf --port 8080 --new-thing 'fast mode' --newswitch -c 32768 -ngl 28 -np 4 -kvu -fit off\$" -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB --print-command -- llama-server \
    -m "$models/qwen3-14b-f16.gguf" --new-thing 'fast mode' --port 8080 --newswitch -c 32768
check paste-flags-bare 0 '^-c 32768 -ngl 28 -t 8 -np 4 -kvu -fit off$' -- \
    "$ggfit" --gpu rtx-3090 --host-mem 64GiB -- llama-server \
    -m "$models/qwen3-14b-f16.gguf" --host 0.0.0.0 --port 8080 -t 8 --jinja -c 32768 --lora 'my lora.gguf'
check paste-commands 0 '^paste: [1-9][0-9][0-9]* plans, every one the same words$' -- \
    paste_commands

# The JSON is an interface (docs/json.md): every --json command above run
# again, its output, the batch lines and the router's JSON the checks kept in
# $tmp/json valid against docs/schema/ (the schema its "kind" names).
json_schemas() {
    python3 tools/jsonschema_check.py --ggfit "$ggfit" --commands "$tmp/plans" \
        ${GGFIT_JSON_DUMP:+--dump "$GGFIT_JSON_DUMP"} "$tmp"/json/*
}
check json-schemas 0 '^json: [1-9][0-9]* documents, every one valid$' -- json_schemas
check json-doc 0 "^docs/json.md: the field tables are docs/schema/'s$" -- python3 tools/json_doc.py --check

echo "cli: $pass passed, $failn failed"
[ "$failn" -eq 0 ]
