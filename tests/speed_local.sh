#!/bin/sh
# speed_local.sh [GGFIT] - ggfit's CPU speed predictions against llama-bench
# as measured on one machine (data/speed/local.csv, re-measured by
# make speedcheck-local): every row within 25%. Needs no llama-bench.
# Prints the table, then "speed_local: ok" or "speed_local: FAILED";
# exit status 1 on a failure.
case $1 in '' | /*) ggfit=$1 ;; *) ggfit=$PWD/$1 ;; esac   # before the cd
cd "$(dirname "$0")/.." || exit 1
ggfit=${ggfit:-build/ggfit}
if python3 tools/speedcheck_local.py --ggfit "$ggfit"; then
    echo "speed_local: ok"
else
    echo "speed_local: FAILED"
    exit 1
fi
