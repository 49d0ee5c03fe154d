#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): the row spectra in wider tiles. The forward rows' loads and
# stores alone ran at 38% of the copy rate at 2160p, the inverse rows' at 77% (T1340,
# issue40_s30.sh): the forward rows write each row in 256-byte runs, one a tile. Here
# --spectrum-tiles 32 and 64 (512- and 1024-byte runs) against the rule's 16, frame by frame in
# one process (--ab), two rounds, the seven blooms (tiles.txt); the JPEG suite's frames, a
# process each (jpeg.txt); the forward rows' loads and stores alone (--rows-probe 1) with a
# gray kernel and with the colour kernel's row spectra in the natural order
# (--column-pairs=false), against the same without the probe (rows.txt); test_bloom's
# test_ends_and_layouts on the GPU (tests.txt).
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s31.sh
. "$(dirname "$0")/blooms_start.sh" s31
for t in 32 64; do
	# shellcheck disable=SC2086
	bash "$(dirname "$0")/alternate.sh" "$R" "tiles$t" "shipped=$P/bin/fftbloom@none" -- $B \
		--runs 30 --ab "--spectrum-tiles $t"
done | tee "$R/tiles.txt"
J="--suite jpeg --only jpeg.1080p.k49.444,jpeg.2160p.k49.444 --machine $M --program-cache none --runs 30 --fft-wisdom none"
for round in 1 2; do
	for t in 0 32 64; do
		# shellcheck disable=SC2086
		timeout 150 "$P/bin/fftbloom" bench $J --spectrum-tiles $t >>"$R/jpeg.jsonl" \
			2>"$R/jpeg-$t-$round.txt"
		echo "== tiles $t round $round rc $?"
		grep -E "^jpeg\." "$R/jpeg-$t-$round.txt"
	done
done | tee "$R/jpeg.txt"
B2="--suite bloom --only bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.1080p.k256.fp32 --variant default --machine $M --program-cache none --runs 30 --fft-wisdom none"
for pairs in true false; do
	# shellcheck disable=SC2086
	timeout 150 "$P/bin/fftbloom" bench $B2 --column-pairs=$pairs \
		--ab "--column-pairs=$pairs --rows-probe 1" >>"$R/rows.jsonl" 2>"$R/rows-$pairs.txt"
	echo "== column pairs $pairs rc $?"
	grep -E "^bloom\." "$R/rows-$pairs.txt"
done | tee "$R/rows.txt"
export TEST_FILTER=test_ends_and_layouts TEST_ENGINE=gpu
SECONDS_EACH=200 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s31 && rm -rf "$R"
