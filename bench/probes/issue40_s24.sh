#!/bin/bash
# Issue 40, the session's last commit on the H200 (2026-11-29): the bloom suite's blooms on the
# shipped wisdom alone (the span's padded sizes' lines shipped since T0902), two rounds, a process
# each (blooms.txt, .jsonl); then test_bloom, test_fft_plan and test_api on the GPU (tests.txt).
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s24.sh
. "$(dirname "$0")/blooms_start.sh" s24
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" blooms "shipped=$P/bin/fftbloom@none" -- $B --runs 30
SECONDS_EACH=300 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom test_fft_plan
timeout 120 "$P/tests/lib/test_api" >"$R/test_api.txt" 2>&1
echo "test_api rc $?" | tee -a "$R/test_api.txt"
grep -E "PASSED|FAILED" "$R/test_api.txt"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s24 && rm -rf "$R"
