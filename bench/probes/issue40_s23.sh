#!/bin/bash
# Issue 40, whole frames padded to their span (fft_conv_span) instead of image + kernel - 1
# (2026-11-29): 1080p k256 2048x1225 (was 2240x1344), 2160p k512 4096x2560 (4375x2744), the
# full-frame kernel 3136x1715 (4096x2240). PACK/baseline holds the build before (72cbfeb).
#  A. the new build on an empty wisdom file: the bloom suite once, each plan's rows with their
#     ends measured at its first frame (w.txt, tune.log);
#  B. two rounds alternated, a process each: baseline (shipped wisdom) against the new build
#     on w.txt (blooms.txt, blooms.jsonl);
#  C. the blooms beside VkFFT (CUDA) and cuFFT at the new padded sizes (the peers take them
#     from fftbloom bench --list), the new build on w.txt (peers.jsonl, peers.txt);
#  D. test_bloom on the GPU (tests.txt).
# usage (repository root, a pack in .carry made with BASELINE and VKFFT_DIR):
#   bash bench/probes/issue40_s23.sh
. "$(dirname "$0")/blooms_start.sh" s23
# shellcheck disable=SC2086
TIMEOUT=120 bash "$(dirname "$0")/measure_empty.sh" "$R" "$P/bin/fftbloom" "FFT wisdom: the bloom" -- $B
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" blooms "baseline=$P/baseline/fftbloom@none" \
	"span=$P/bin/fftbloom@$R/w.txt" -- $B --runs 30
FFTBLOOM_FFT_WISDOM=$R/w.txt timeout 240 sh "$P/bench/run.sh" bloom,peers --peers torch,vkfft \
	--only bloom --repeat 2 --variant default --runs 30 --machine "$M" --bin "$P/bin" \
	--vkfft-dir "$P/vkfft" >"$R/peers.jsonl" 2>"$R/peers.txt"
echo "peers rc $?" >>"$R/peers.txt"
grep -E "^bloom\.|run.sh|rc " "$R/peers.txt" | tail -40
[ -n "$NO_TESTS" ] || SECONDS_EACH=150 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s23 && rm -rf "$R"
