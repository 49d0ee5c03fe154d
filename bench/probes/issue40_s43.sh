#!/bin/bash
# Issue 40 (for the next H200 call after d509f67): the blooms beside their peers at the final
# form of colour kernels' multiply in registers (bench/run.sh bloom,peers --peers torch,vkfft
# --only bloom, two rounds: peers.jsonl, peers.txt; each fftbloom line's detail.column_multiply
# should say shuffles for colour kernels, else egl_info.subgroup_pairs found no pairs), then
# test_bloom (test_partners_shared runs the shared-memory partners there) and test_fft on the GPU.
# usage (repository root, a pack in .carry made with VKFFT_DIR): bash bench/probes/issue40_s43.sh
. "$(dirname "$0")/blooms_start.sh" s43
timeout 420 sh "$P/bench/run.sh" bloom,peers --peers torch,vkfft --only bloom --repeat 2 --variant default \
	--runs 30 --budget-minutes 6 --machine "$M" --bin "$P/bin" --vkfft-dir "$P/vkfft" >"$R/peers.jsonl" 2>"$R/peers.txt"
echo "rc $?" >>"$R/peers.txt"
grep -E "^(bloom|mem)\.|rc |subgroup" "$R/peers.txt" | sed 's/ (rows [^)]*)//' | tail -40
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("impl") == "fftbloom" and "column_multiply" in d.get("detail", {}):
        print(d["id"], d["detail"]["column_multiply"])' "$R/peers.jsonl" | sort | uniq -c
TEST_ENGINE=gpu SECONDS_EACH=240 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom test_fft
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s43 && rm -rf "$R"
