#!/bin/bash
# Issue 40, a session's first device call (2026-11-28, late): the GPU tests of the Bluestein
# review's leftovers, where the blooms' row passes spend their time, and the whole FFT and bloom
# rows beside their peers at this commit.
#  1. test_fft_plan, test_fft and test_bloom on the GPU (outputs in tests.txt).
#  2. The blooms' ends (prefilter and composite in the row transforms) taken apart, 1080p k256
#     and 2160p k512 colour: the product's rule; the row spectra in the natural order
#     (--column-pairs=false); the ends as passes of their own (--ends-in-rows off); the rows in
#     two vec2 rounds (--rows-split 1); and the plain row transforms (bloom.rows.*), each a
#     process, variants alternated ROUNDS (2) times. Stage lines in ends.txt.
#  3. bench/run.sh fft,bloom,peers --peers torch,vkfft (cuFFT, VkFFT CUDA and Vulkan), two
#     rounds (fft.jsonl, fft.txt).
# usage (repository root, a pack in .carry made with VKFFT_DIR set): bash bench/probes/issue40_s6.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
BIN=$P/bin M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
if [ -z "${NO_TESTS:-}" ]; then
	bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_fft_plan test_fft test_bloom
fi
IDS=bloom.1080p.k256.fp32,bloom.2160p.k512.fp32
for r in $(seq "${ROUNDS:-2}"); do
	for v in rule natural separate vec2rows; do
		case $v in
		rule) o="" ;; natural) o="--column-pairs=false" ;; separate) o="--ends-in-rows off" ;;
		vec2rows) o="--rows-split 1" ;;
		esac
		# shellcheck disable=SC2086
		timeout 60 "$BIN/fftbloom" bench --suite bloom --only $IDS --variant default $o --runs 30 \
			--warmup 5 --warm-seconds 1 --machine "$M" >>"$R/ends.jsonl" 2>"$R/ends.err"
		grep "GPU" "$R/ends.err" | sed "s/^/round $r $v: /" >>"$R/ends.txt"
	done
	timeout 60 "$BIN/fftbloom" bench --suite bloom --only bloom.rows.1080p.k256,bloom.rows.2160p.k512 \
		--variant default --runs 30 --warmup 5 --warm-seconds 1 --machine "$M" >>"$R/ends.jsonl" 2>"$R/ends.err"
	grep "rows forward" "$R/ends.err" | sed "s/^/round $r: /" >>"$R/ends.txt"
done
cat "$R/ends.txt"
if [ -z "${NO_FFT:-}" ]; then
	timeout 300 sh "$P/bench/run.sh" fft,bloom,peers --peers torch,vkfft --repeat 2 --variant default --runs 30 \
		--budget-minutes 5 --machine "$M" --bin "$BIN" --vkfft-dir "$P/vkfft" >"$R/fft.jsonl" 2>"$R/fft.txt"
	echo "rc $?" >>"$R/fft.txt"
	grep -E "^(fft|bloom)\.|fftbloom|vkfft|cufft" "$R/fft.txt" | tail -40
fi
