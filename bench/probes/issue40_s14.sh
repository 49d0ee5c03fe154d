#!/bin/bash
# Issue 40, the row spectra in tiles of 16 columns and float16's fused columns in place over them
# (2026-11-29), the build as it is committed:
#  A. the answers: this build's CLI blooms against PACK/baseline's (rows a pitch apart, float16
#     through the transposed copy) on 3840x2160, 1920x1080 and 1001x701 frames, a 512x512 colour
#     kernel and a gray one, float32 and float16 (max and rel_l2 differences, answers.txt);
#  B. test_fft and test_bloom on the GPU (tests.txt);
#  C. the blooms beside VkFFT, two rounds (bloom.jsonl, bloom.txt).
# usage (repository root, a pack with a baseline in .carry, made with VKFFT_DIR set):
#   bash bench/probes/issue40_s14.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/s14; mkdir -p "$R"
M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
bash "$(dirname "$0")/answers_vs_baseline.sh" "$P" "$R"
grep -o 'padded [0-9x]*, [a-z]* kernel, GPU [0-9.]* ms (timer queries: [a-z_ 0-9.,]*' "$R/cli.err" | sed 's/download.*//' | sort | uniq -c | head -30
SECONDS_EACH=300 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_fft test_bloom
timeout 300 sh "$P/bench/run.sh" bloom,peers --peers vkfft --only bloom --repeat 2 --variant default --runs 30 \
	--budget-minutes 5 --machine "$M" --bin "$P/bin" --vkfft-dir "$P/vkfft" >"$R/bloom.jsonl" 2>"$R/bloom.txt"
echo "rc $?" >>"$R/bloom.txt"
grep -E "^bloom\.|channels|done" "$R/bloom.txt" | tail -30
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s14 && rm -rf "$R"
