#!/bin/bash
# Issue 40, padded sizes by a weighted cost (fft_point_cost, fft_conv_size; 2026-11-29): 1080p
# k256 2048x1280 (was 2048x1225), the full-frame kernel 2880x1792 (3136x1715), 2160p k512 as it
# was (4096x2560), as issue40_s25.sh measured fastest. PACK/baseline holds the build before
# (5240e88). The steps: blooms_vs_baseline.sh (the new build's label: weighted), with
# test_fft_plan beside test_bloom.
# usage (repository root, a pack in .carry made with BASELINE and VKFFT_DIR):
#   bash bench/probes/issue40_s26.sh
TESTS=test_fft_plan exec bash "$(dirname "$0")/blooms_vs_baseline.sh" s26 weighted
