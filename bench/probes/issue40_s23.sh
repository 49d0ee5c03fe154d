#!/bin/bash
# Issue 40, whole frames padded to their span (fft_conv_span) instead of image + kernel - 1
# (2026-11-29): 1080p k256 2048x1225 (was 2240x1344), 2160p k512 4096x2560 (4375x2744), the
# full-frame kernel 3136x1715 (4096x2240). PACK/baseline holds the build before (72cbfeb).
# The steps: blooms_vs_baseline.sh (the new build's label: span).
# usage (repository root, a pack in .carry made with BASELINE and VKFFT_DIR):
#   bash bench/probes/issue40_s23.sh
exec bash "$(dirname "$0")/blooms_vs_baseline.sh" s23 span
