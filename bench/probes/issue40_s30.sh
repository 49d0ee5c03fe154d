#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): the blooms' fused column pass and row transforms taken
# apart, each part left out in turn against the product frame by frame in one process (--ab):
# --conv-probe 1-5 and --rows-probe 1-5 (1 only the loads and stores, 2 no butterflies, 3
# twiddles without sin and cos, 4 no barriers, 5 twiddles as powers of one sin and cos; wrong
# results) on the 1080p k256, full-frame and 2160p k512 fp32 blooms (probes.txt); then the fused
# pass's exchanges padded at every length (--conv-pad) on the seven blooms, two rounds (pad.txt).
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s30.sh
. "$(dirname "$0")/blooms_start.sh" s30
B3="--suite bloom --only bloom.1080p.k256.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.fp32 --variant default --machine $M --program-cache none --runs 30 --fft-wisdom none"
for what in conv rows; do
	for n in 1 2 3 4 5; do
		# shellcheck disable=SC2086
		timeout 150 "$P/bin/fftbloom" bench $B3 --ab "--$what-probe $n" >>"$R/probes.jsonl" \
			2>"$R/probe-$what$n.txt"
		echo "== $what probe $n rc $?"
		grep -E "^bloom\." "$R/probe-$what$n.txt"
	done
done | tee "$R/probes.txt"
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" pad "shipped=$P/bin/fftbloom@none" -- $B --runs 30 \
	--ab "--conv-pad"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s30 && rm -rf "$R"
