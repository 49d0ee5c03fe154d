#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): (1) --ab's own bias: both sides the same options
# (--spectrum-tiles 16, the rule), the seven blooms, two rounds (same.txt); (2) the plain row
# transforms at the blooms' shapes (bloom.rows.*, data buffer in and out, forward and inverse)
# with their loads and stores alone (--rows-probe 1) and whole, a process each, two rounds
# (rows.txt): what the blooms' rows' ends cost against a plain row pass; (3) the fused columns on
# as many invocations as their radix-8 passes have butterflies (1280: 160, 1792: 224, 2560: 320)
# against the rule's, a process each, two rounds (threads.txt).
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s33.sh
. "$(dirname "$0")/blooms_start.sh" s33
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" same "shipped=$P/bin/fftbloom@none" -- $B --runs 30 \
	--ab "--spectrum-tiles 16" | tee "$R/same.txt"
RW="--suite bloom --only bloom.rows.1080p.k256,bloom.rows.2160p.k512 --variant default --machine $M --program-cache none --runs 30 --fft-wisdom none"
for round in 1 2; do
	for p in 0 1; do
		# shellcheck disable=SC2086
		timeout 150 "$P/bin/fftbloom" bench $RW --rows-probe $p >>"$R/rows.jsonl" \
			2>"$R/rows-$p-$round.txt"
		echo "== rows probe $p round $round rc $?"
		grep -E "^bloom\.rows|rows forward" "$R/rows-$p-$round.txt"
	done
done | tee "$R/rows.txt"
T="--suite bloom --variant default --machine $M --program-cache none --runs 30 --fft-wisdom none"
for round in 1 2; do
	for spec in "bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32 160" \
		"bloom.1080p.full.fp32 224" "bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32 320"; do
		ids=${spec% *} n=${spec#* }
		for ct in 0 "$n"; do
			# shellcheck disable=SC2086
			timeout 150 "$P/bin/fftbloom" bench $T --only "$ids" --conv-threads "$ct" \
				>>"$R/threads.jsonl" 2>"$R/threads-$n-$ct-$round.txt"
			echo "== $ids conv threads $ct round $round rc $?"
			grep -E "^bloom\." "$R/threads-$n-$ct-$round.txt"
		done
	done
done | tee "$R/threads.txt"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s33 && rm -rf "$R"
