#!/bin/bash
# Issue 40, Deliver 1 and 2, in one device call (bench/README.md, "On another host"): the fft and
# bloom suites beside their peers in the same run, two rounds interleaved: cuFFT (PyTorch), VkFFT's
# CUDA backend (built there with nvcc) and VkFFT's Vulkan backend (bin/bench/peer_vkfft_vk, built
# here: make VKFFT_DIR=DIR build/bench/peer_vkfft_vk), at the harness's seven FFT sizes (1144x1716:
# radices 11 and 13; 1009x1009: Bluestein) and its blooms. Results under $OUT.
# usage (from the repository root, a pack made with VKFFT_DIR set):  bash bench/probes/issue40_fft.sh
P=$PWD/.carry
set -- "$P"
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT";
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; ldconfig -p | grep -c libvulkan; } >"$R/card.txt" 2>&1
timeout 540 sh "$P/bench/run.sh" fft,bloom,peers --peers torch,vkfft --repeat 2 --variant default --runs 30 --budget-minutes 8.5 \
	--machine "${MACHINE:-h100}" --bin "$P/bin" --vkfft-dir "$P/vkfft" >"$R/fft.jsonl" 2>"$R/fft.txt"
echo "rc $?" >>"$R/fft.txt"
