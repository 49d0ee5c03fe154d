#!/bin/bash
# Issue 40, the bloom's rows measured with their ends (2026-11-29): a plan whose rows carry the
# prefilter and composite and whose wisdom has no line of those ends (fft_wisdom_key.io) times
# their invocation counts (fft_io_tune_candidates) on its own buffers and keeps the fastest; the
# CLI with a named wisdom file does it at a plan's first frame (FFT_WISDOM_MEASURE_NOW).
# PACK/noio/fftbloom (with its fftbloom-bench) is the pack's build with the shipped io lines
# left out (the H200's 875 for the 4375-long rows), so that the rows are measured as on a GPU no
# wisdom was shipped for:
#  1. noio on an empty wisdom file: the bloom suite's blooms once (--runs 5), each plan's rows
#     measured at its first frame: the lines in w.txt, the candidates' times in tune.log;
#  2. two rounds alternated, a process each: the product with the shipped wisdom
#     (--fft-wisdom none: shipped lines and rules, nothing measured) against noio on w.txt
#     (nothing left to measure) (blooms.jsonl, blooms.txt);
#  3. test_bloom's test_rows_tune and test_fft's test_wisdom on the GPU (tests.txt).
# usage (repository root, a pack in .carry with noio/fftbloom and noio/fftbloom-bench):
#   bash bench/probes/issue40_s16.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/s16; mkdir -p "$R"
M=${MACHINE:-h200}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
IDS=bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.k256.fp16,bloom.1080p.full.fp32,bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.2160p.k512.fp16
B="--suite bloom --only $IDS --variant default --machine $M --program-cache none"
# shellcheck disable=SC2086
TIMEOUT=240 bash "$(dirname "$0")/measure_empty.sh" "$R" "$P/noio/fftbloom" \
	"rows of [0-9]+ .*invocations|FFT wisdom: the bloom" -- $B
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" blooms "product=$P/bin/fftbloom@none" \
	"noio=$P/noio/fftbloom@$R/w.txt" -- $B --runs 30
cp "$R/w.txt" "$R/w-after.txt"
TEST_FILTER=test_rows_tune SECONDS_EACH=200 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom >/dev/null
TEST_FILTER=test_wisdom SECONDS_EACH=200 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_fft >/dev/null
grep -E "^=== |rows of|measured:|candidates|OK \] test_(rows_tune|wisdom)|FAILED" "$R/tests.txt" | head -30
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s16 && rm -rf "$R"
