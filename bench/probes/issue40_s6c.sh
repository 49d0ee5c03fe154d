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
IDS=bloom.1080p.k256.fp32,bloom.2160p.k512.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.gray.fp32
for r in $(seq "${ROUNDS:-3}"); do
	for v in new nobranch; do
		b=$BIN; [ $v = nobranch ] && b=$P/baseline
		timeout 90 "$b/fftbloom" bench --suite bloom --only $IDS --variant default --runs 30 \
			--warmup 5 --warm-seconds 1 --machine "$M" 2>"$R/ab.err" |
			sed "s/\"variant\":\"default\"/\"variant\":\"default-$v\"/" >>"$R/ab.jsonl"
		grep "GPU" "$R/ab.err" | sed "s/^/round $r $v: /" >>"$R/ab.txt"
	done
done
grep GPU "$R/ab.txt"
here=$(cd "$(dirname "$0")" && pwd)
( export OUT=$R/conv; mkdir -p "$OUT"; REPEAT=10 timeout 240 bash "$here/issue40_conv.sh" table >"$R/conv.txt" 2>&1 )
tail -15 "$R/conv.txt"
( export OUT=$R/comp; mkdir -p "$OUT"; MODES=parallel ROUNDS=3 NO_PROBE=1 timeout 200 bash "$here/issue40_compile.sh" >"$R/comp.txt" 2>&1 )
grep "^figure" "$R/comp.txt"
