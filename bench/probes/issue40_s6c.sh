#!/bin/bash
# Issue 40, a session's third device call (2026-11-28, late):
#  1. The bloom workloads, this build (new) against baseline/ (a build whose row ends load and
#     store without a branch around the image's load), each a process, alternated ROUNDS (3)
#     times (ab.txt).
#  2. The conv rows beside cuDNN fp32 (bash bench/probes/issue40_conv.sh table, REPEAT=10) (conv/).
#  3. The compile rows: a fresh start's first 1080p request and requests during idle compiles,
#     --compile-mode parallel, three idle rounds (MODES=parallel ROUNDS=3 NO_PROBE=1
#     bash bench/probes/issue40_compile.sh) (comp/).
# usage (repository root, a pack in .carry made with BASELINE set): bash bench/probes/issue40_s6c.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
BIN=$P/bin M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; cat "$P/baseline/COMMIT"; } >"$R/card.txt" 2>&1
bash "$(dirname "$0")/bloom_ab.sh" "$P" "$R" nobranch
grep GPU "$R/ab.txt"
here=$(cd "$(dirname "$0")" && pwd)
( export OUT=$R/conv; mkdir -p "$OUT"; REPEAT=10 timeout 240 bash "$here/issue40_conv.sh" table >"$R/conv.txt" 2>&1 )
tail -15 "$R/conv.txt"
( export OUT=$R/comp; mkdir -p "$OUT"; MODES=parallel ROUNDS=3 NO_PROBE=1 timeout 200 bash "$here/issue40_compile.sh" >"$R/comp.txt" 2>&1 )
grep "^figure" "$R/comp.txt"
