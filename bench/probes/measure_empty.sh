#!/bin/bash
# fftbloom bench (BINARY) on an empty wisdom file, R/w.txt, once (--runs 5, --verbose): every
# shape it lacks is measured before its first use. Its JSON lines to R/tune.jsonl, its log to
# R/tune.log (cut at TIMEOUT, default 300 s); the log's lines matching GREP and the lines written
# to w.txt are printed. (issue40_s16.sh, s17.sh, s19.sh)
# usage: bash bench/probes/measure_empty.sh R BINARY GREP -- BENCH_ARGS...
R=$1 BIN=$2 G=$3
shift 4
: >"$R/w.txt"
timeout "${TIMEOUT:-300}" "$BIN" bench "$@" --runs 5 --verbose --fft-wisdom "$R/w.txt" \
	>"$R/tune.jsonl" 2>"$R/tune.log"
echo "tune rc $?" >>"$R/tune.log"
grep -E "$G|tune rc" "$R/tune.log" | head -60
cat "$R/w.txt"
