#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): a colour kernel's multiply in registers (the inverse's
# radices reversed; the Hermitian partners through shared memory once, no exchange back)
# against the multiply in shared memory (--conv-mult-shared), frame by frame in one process
# (--ab), two rounds, then the other order, one round (colour.txt); test_bloom's
# test_ends_and_layouts and test_padded_columns on the GPU (tests.txt).
# Measured at 74327bf (the colour form reverted since; --conv-mult-shared now times a gray
# kernel's forms alone).
# usage (repository root, a pack in .carry built at that commit): bash bench/probes/issue40_s35.sh
. "$(dirname "$0")/blooms_start.sh" s35
C="--suite bloom --only bloom.1080p.k256.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.fp32,bloom.2160p.k512.fp16 --variant default --machine $M --program-cache none --runs 30"
# shellcheck disable=SC2086
bash "$(dirname "$0")/ab_orders.sh" "$R" colour "$P/bin/fftbloom" --conv-mult-shared -- $C
export TEST_ENGINE=gpu
for f in test_ends_and_layouts test_padded_columns; do
	TEST_FILTER=$f SECONDS_EACH=150 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom
done
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s35 && rm -rf "$R"
