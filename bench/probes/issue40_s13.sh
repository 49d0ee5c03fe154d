#!/bin/bash
# Issue 40, the row spectra in tiles of 16 columns as the rule (2026-11-29):
#  A. float16 storage's fused columns in place (tiles make a column's reads share lines with its
#     neighbours') against the transposed copy the rule keeps for it: 2160p k512 and 1080p k256
#     fp16 blooms, rounds alternated (issue40_io.sh's rule and inplace variants);
#  B. test_bloom on the GPU (tests.txt);
#  C. the blooms beside VkFFT, two rounds (bloom.jsonl, bloom.txt).
# usage (repository root, a pack in .carry made with VKFFT_DIR set): bash bench/probes/issue40_s13.sh
O=${OUT:-/tmp}
OUT=$O/a VARS="rule inplace" ROUNDS=3 NO_PLAIN=1 IDS=bloom.2160p.k512.fp16,bloom.1080p.k256.fp16 \
	bash "$(dirname "$0")/issue40_io.sh"
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=$O/b; mkdir -p "$R"
M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
SECONDS_EACH=300 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom
timeout 300 sh "$P/bench/run.sh" bloom,peers --peers vkfft --only bloom --repeat 2 --variant default --runs 30 \
	--budget-minutes 5 --machine "$M" --bin "$P/bin" --vkfft-dir "$P/vkfft" >"$R/bloom.jsonl" 2>"$R/bloom.txt"
echo "rc $?" >>"$R/bloom.txt"
grep -E "^bloom\.|channels|done" "$R/bloom.txt" | tail -30
cd "$O" && mkdir -p s13 && tar xzf a/r.tgz -C a && mv a/r s13/a && mv b s13/b && tar czf r.tgz s13 && rm -rf a s13
