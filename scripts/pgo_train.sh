#!/bin/sh
# pgo_train.sh GGFIT MODELS OUTDIR - the runs the profile-guided build
# learns from (Makefile, PGO): the CLI built with -fprofile-generate
# describes and fits every layout shipped in MODELS on one, two and three
# devices, with and without its log, JSON and an override; what they
# execute is what a real run executes. The shipped layouts have no
# tokenizer, which real headers all have: where python3 is installed,
# tools/mkvocab.py gives gpt-oss-20b one of real size (201,088 tokens) in
# OUTDIR, read and fitted too. Output is thrown away; a failed run is not an
# error (the profile counts whatever ran).
g=$1
dir=$2
out=$3
# the speed model's default for this machine's memory: a build measures
# nothing and writes nothing to the cache folder
GGFIT_HOST_BW=default
export GGFIT_HOST_BW
if command -v python3 >/dev/null 2>&1 &&
   python3 tools/mkvocab.py "$dir/gpt-oss-20b-mxfp4.gguf" "$out/vocab-train.gguf" >/dev/null 2>&1; then
    "$g" inspect -m "$out/vocab-train.gguf" >/dev/null 2>&1
    "$g" -m "$out/vocab-train.gguf" -c 32768 --gpu 8GiB --host-mem 64GiB >/dev/null 2>&1
    rm -f "$out/vocab-train.gguf"
fi
for m in "$dir"/*.gguf; do
    "$g" inspect -m "$m" >/dev/null 2>&1
    "$g" -m "$m" --gpu 24077MiB --host-mem 64GiB >/dev/null 2>&1
    "$g" -m "$m" --gpu rpc:24077MiB,rpc:24077MiB,rpc:8192MiB --host-mem 256GiB >/dev/null 2>&1
    "$g" -m "$m" --gpu cuda:8GiB,cuda:12GiB -c 16384 -v >/dev/null 2>&1
    "$g" -m "$m" --gpu cuda:12GiB -cmoe -fitp on --json >/dev/null 2>&1
    "$g" -m "$m" --gpu vulkan:16GiB,metal:16GiB -fa off >/dev/null 2>&1
done
exit 0
