#!/bin/bash
# Issue 40, the FFT and bloom rows beside their peers at the session's last commit (2026-11-29):
# bench/run.sh fft,bloom,peers --peers torch,vkfft (cuFFT, VkFFT's CUDA and Vulkan backends), two
# rounds, a process a workload (fft.jsonl, fft.txt).
# usage (repository root, a pack in .carry made with VKFFT_DIR set): bash bench/probes/issue40_s21.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/s21; mkdir -p "$R"
M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
timeout 420 sh "$P/bench/run.sh" fft,bloom,peers --peers torch,vkfft --repeat 2 --variant default --runs 30 \
	--budget-minutes 6 --machine "$M" --bin "$P/bin" --vkfft-dir "$P/vkfft" >"$R/fft.jsonl" 2>"$R/fft.txt"
echo "rc $?" >>"$R/fft.txt"
grep -E "^(fft|bloom)\.|run.sh|rc " "$R/fft.txt" | sed 's/ (rows [^)]*)//' | tail -70
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s21 && rm -rf "$R"
