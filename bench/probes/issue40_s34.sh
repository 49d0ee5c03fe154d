#!/bin/bash
# Issue 40, deliver 1 and 2 (2026-11-29): a real kernel's spectrum multiplied in registers (the
# inverse's radices reversed, no exchange for the multiply) against the multiply in shared
# memory (--conv-mult-shared), frame by frame in one process (--ab), both orders, two rounds
# each: the gray blooms (gray.txt); the JPEG suite's frames (gray kernels), a process each,
# alternated (jpeg.txt); the FFT suite's Bluestein transform (1009², one dispatch an axis)
# against the baseline build, a process each (fft.txt); test_fft and test_bloom on the GPU
# (tests.txt).
# usage (repository root, a pack in .carry with a baseline): bash bench/probes/issue40_s34.sh
. "$(dirname "$0")/blooms_start.sh" s34
G="--suite bloom --only bloom.1080p.k256.gray.fp32,bloom.2160p.k512.gray.fp32 --variant default --machine $M --program-cache none --runs 30"
{
	# shellcheck disable=SC2086
	bash "$(dirname "$0")/alternate.sh" "$R" gray "new=$P/bin/fftbloom@none" -- $G \
		--ab "--conv-mult-shared"
	# shellcheck disable=SC2086
	bash "$(dirname "$0")/alternate.sh" "$R" grayrev "new=$P/bin/fftbloom@none" -- $G \
		--conv-mult-shared --ab "--conv-mult-shared=false"
} | tee "$R/gray.txt"
J="--suite jpeg --only jpeg.1080p.k49.444,jpeg.2160p.k49.444 --machine $M --program-cache none --runs 30 --fft-wisdom none"
for round in 1 2 3; do
	for ms in false true; do
		# shellcheck disable=SC2086
		timeout 150 "$P/bin/fftbloom" bench $J --conv-mult-shared=$ms >>"$R/jpeg.jsonl" \
			2>"$R/jpeg-$ms-$round.txt"
		echo "== mult shared $ms round $round rc $?"
		grep -E "^jpeg\." "$R/jpeg-$ms-$round.txt"
	done
done | tee "$R/jpeg.txt"
F="--suite fft --only fft.2d.1009x1009.fwd,fft.2d.1024x1024.fwd --variant default --machine $M --program-cache none --runs 30"
# shellcheck disable=SC2086
ROUNDS=3 bash "$(dirname "$0")/alternate.sh" "$R" fft "new=$P/bin/fftbloom@none" \
	"old=$P/baseline/fftbloom@none" -- $F | tee "$R/fft.txt"
SECONDS_EACH=300 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_fft test_bloom
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s34 && rm -rf "$R"
