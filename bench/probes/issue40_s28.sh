#!/bin/bash
# Issue 40, the session's last commit on the H200 (2026-11-29): the bloom suite's blooms and the
# JPEG suite's 1080p and 2160p frames on the shipped wisdom alone (the weighted cost's lines
# shipped since T1054 and T1120), two rounds, a process each (blooms.txt, .jsonl); then
# test_bloom, test_fft_plan, test_fft, test_tune_rounds and test_api on the GPU (tests.txt).
# usage (repository root, a pack in .carry with tests/lib/test_api and
# tests/gles/test_tune_rounds): bash bench/probes/issue40_s28.sh
. "$(dirname "$0")/blooms_start.sh" s28
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" blooms "shipped=$P/bin/fftbloom@none" -- $B --runs 30
J="--suite jpeg --only jpeg.1080p.k49.444,jpeg.1080p.k49.420,jpeg.2160p.k49.444 --machine $M --program-cache none"
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" jpeg "shipped=$P/bin/fftbloom@none" -- $J --runs 30
SECONDS_EACH=300 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom test_fft_plan test_fft \
	test_tune_rounds
timeout 120 "$P/tests/lib/test_api" >"$R/test_api.txt" 2>&1
echo "test_api rc $?" | tee -a "$R/test_api.txt"
grep -E "PASSED|FAILED" "$R/test_api.txt"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s28 && rm -rf "$R"
