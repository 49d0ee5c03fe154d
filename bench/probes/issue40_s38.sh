#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): the blooms beside their peers after colour kernels' multiply
# moved into registers (9e4b7d8): bench/run.sh bloom,peers --peers torch,vkfft --only bloom, two
# rounds, a process a workload (peers.jsonl, peers.txt).
# usage (repository root, a pack in .carry made with VKFFT_DIR): bash bench/probes/issue40_s38.sh
. "$(dirname "$0")/blooms_start.sh" s38
timeout 500 sh "$P/bench/run.sh" bloom,peers --peers torch,vkfft --only bloom --repeat 2 --variant default \
	--runs 30 --budget-minutes 7 --machine "$M" --bin "$P/bin" --vkfft-dir "$P/vkfft" >"$R/peers.jsonl" 2>"$R/peers.txt"
echo "rc $?" >>"$R/peers.txt"
grep -E "^(bloom|mem)\.|rc " "$R/peers.txt" | sed 's/ (rows [^)]*)//' | tail -40
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s38 && rm -rf "$R"
