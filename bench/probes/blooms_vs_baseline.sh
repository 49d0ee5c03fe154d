#!/bin/bash
# The bloom suite's seven blooms, a new build against the pack's baseline (issue40_s23.sh, s26.sh):
#  A. the new build on an empty wisdom file: the bloom suite once, each plan's shapes measured at
#     its first frame (w.txt, tune.log);
#  B. two rounds alternated, a process each: baseline (shipped wisdom) against the new build
#     on w.txt (blooms.txt, blooms.jsonl);
#  C. the blooms beside VkFFT (CUDA) and cuFFT at the new build's padded sizes (the peers take
#     them from fftbloom bench --list), the new build on w.txt (peers.jsonl, peers.txt);
#  D. test_bloom and TESTS (more of the pack's GPU tests) on the GPU (tests.txt) unless NO_TESTS.
# usage (repository root, a pack in .carry made with BASELINE and VKFFT_DIR):
#   bash bench/probes/blooms_vs_baseline.sh NAME LABEL
. "$(dirname "$0")/blooms_start.sh" "$1"
# shellcheck disable=SC2086
TIMEOUT=120 bash "$(dirname "$0")/measure_empty.sh" "$R" "$P/bin/fftbloom" "FFT wisdom: the bloom" -- $B
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" blooms "baseline=$P/baseline/fftbloom@none" \
	"$2=$P/bin/fftbloom@$R/w.txt" -- $B --runs 30
FFTBLOOM_FFT_WISDOM=$R/w.txt timeout 240 sh "$P/bench/run.sh" bloom,peers --peers torch,vkfft \
	--only bloom --repeat 2 --variant default --runs 30 --machine "$M" --bin "$P/bin" \
	--vkfft-dir "$P/vkfft" >"$R/peers.jsonl" 2>"$R/peers.txt"
echo "peers rc $?" >>"$R/peers.txt"
grep -E "^bloom\.|run.sh|rc " "$R/peers.txt" | tail -40
# shellcheck disable=SC2086
[ -n "$NO_TESTS" ] || SECONDS_EACH=150 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom $TESTS
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" "$1" && rm -rf "$R"
