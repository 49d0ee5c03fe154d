#!/bin/bash
# Issue 40, a session's second device call (2026-11-28, late): the blooms after vec4 rows past
# 4096 went to vec2 rounds, beside VkFFT, and an A/B of the row ends' buffers declared restrict.
#  1. test_fft_plan and test_fft on the GPU (tests.txt).
#  2. The bloom workloads, this build (new) against baseline/ (a build whose bloom_io.comp
#     declares Image and Out restrict), each a process, alternated ROUNDS (3) times (ab.txt).
#  3. bench/run.sh bloom,peers --peers vkfft --only bloom, two rounds (bloom.jsonl, bloom.txt).
# usage (repository root, a pack in .carry made with VKFFT_DIR and BASELINE set):
#   bash bench/probes/issue40_s6b.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
BIN=$P/bin M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; cat "$P/baseline/COMMIT"; } >"$R/card.txt" 2>&1
bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_fft_plan test_fft
bash "$(dirname "$0")/bloom_ab.sh" "$P" "$R" restrict
cat "$R/ab.txt"
timeout 240 sh "$P/bench/run.sh" bloom,peers --peers vkfft --only bloom --repeat 2 --variant default --runs 30 \
	--budget-minutes 4 --machine "$M" --bin "$BIN" --vkfft-dir "$P/vkfft" >"$R/bloom.jsonl" 2>"$R/bloom.txt"
echo "rc $?" >>"$R/bloom.txt"
grep -E "^bloom\.|GPU|channels|done" "$R/bloom.txt" | tail -30
