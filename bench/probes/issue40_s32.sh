#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): the rule's tiles as 256 bytes of a row (32 float16 columns,
# 16 float32 ones) against 16 float16 columns, frame by frame in one process (--ab), three
# rounds, the float16 blooms (fp16.txt); the forward rows' loads and stores alone
# (--rows-probe 1) in tiles of 16 columns and in rows a pitch apart (--spectrum-tiles 1), against
# the same without the probe (rows.txt); test_bloom on the GPU (tests.txt).
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s32.sh
. "$(dirname "$0")/blooms_start.sh" s32
F="--suite bloom --only bloom.1080p.k256.fp16,bloom.2160p.k512.fp16 --variant default --machine $M --program-cache none --runs 30"
# shellcheck disable=SC2086
ROUNDS=3 bash "$(dirname "$0")/alternate.sh" "$R" fp16 "shipped=$P/bin/fftbloom@none" -- $F \
	--ab "--spectrum-tiles 16"
B2="--suite bloom --only bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.1080p.k256.gray.fp32 --variant default --machine $M --program-cache none --runs 30 --fft-wisdom none"
for t in 0 1; do
	# shellcheck disable=SC2086
	timeout 150 "$P/bin/fftbloom" bench $B2 --spectrum-tiles $t \
		--ab "--spectrum-tiles $t --rows-probe 1" >>"$R/rows.jsonl" 2>"$R/rows-$t.txt"
	echo "== spectrum tiles $t rc $?"
	grep -E "^bloom\." "$R/rows-$t.txt"
done | tee "$R/rows.txt"
SECONDS_EACH=400 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s32 && rm -rf "$R"
