#!/bin/bash
# Issue 40 (2026-11-29): the weighted cost's sizes where issue40_s26.sh did not look. The JPEG
# suite's 1080p frames with the 49-pixel kernel pad to 1120x2048 (was 1120x1960, rows 7 7 5 8;
# 2160p's stay 2240x4096), the big suite's 7680x4320 tiles to 4480x8000 (was 4480x7840).
# PACK/baseline holds the build before (5240e88).
#  A. the new build on an empty wisdom file, the workloads once, each new shape measured at its
#     first frame (w.txt, tune.log);
#  B. two rounds alternated, a process each: baseline (shipped wisdom) against the new build on
#     w.txt (jpeg.txt, jpeg.jsonl).
# usage (repository root, a pack in .carry made with BASELINE): bash bench/probes/issue40_s27.sh
. "$(dirname "$0")/blooms_start.sh" s27
B="--suite jpeg,big --only jpeg.1080p.k49.444,jpeg.1080p.k49.420,jpeg.2160p.k49.444,big.4320p.k129.fp32 --machine $M --program-cache none"
# shellcheck disable=SC2086
TIMEOUT=200 bash "$(dirname "$0")/measure_empty.sh" "$R" "$P/bin/fftbloom" "FFT wisdom: |tune rc" -- $B
# shellcheck disable=SC2086
TIMEOUT=200 bash "$(dirname "$0")/alternate.sh" "$R" jpeg "baseline=$P/baseline/fftbloom@none" \
	"weighted=$P/bin/fftbloom@$R/w.txt" -- $B --runs 30
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s27 && rm -rf "$R"
