#!/bin/bash
# Issue 40, the FFT tuner's candidates with counts of whole butterflies (2026-11-29, ea8b0f0,
# reverted in afa27a9: the tuner kept none of them): besides 32 to 512 invocations a signal,
# m / r and m / (r r') for the radices of its passes (the H200's shipped 156 for 1716-long rows
# and 243 for 2187 were found by hand). PACK/noship holds the pack's fftbloom and fftbloom-bench
# built with no shipped wisdom, so that every shape is measured.
#  A. noship on an empty wisdom file: the fft suite once, each shape measured before its first
#     use (w.txt, tune.log: every candidate's time);
#  B. two rounds alternated, a process each: the product (the shipped H200 wisdom, nothing
#     measured) against noship on w.txt (nothing left to measure) (ffts.txt, ffts.jsonl).
# usage (repository root, a pack in .carry with noship/): bash bench/probes/issue40_s19.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/s19; mkdir -p "$R"
M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
B="--suite fft --variant default --machine $M --program-cache none"
# shellcheck disable=SC2086
TIMEOUT=400 bash "$(dirname "$0")/measure_empty.sh" "$R" "$P/noship/fftbloom" "FFT wisdom: n=" -- $B
# shellcheck disable=SC2086
TIMEOUT=120 bash "$(dirname "$0")/alternate.sh" "$R" ffts "product=$P/bin/fftbloom@none" \
	"noship=$P/noship/fftbloom@$R/w.txt" -- $B --runs 30
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s19 && rm -rf "$R"
