#!/bin/bash
# Issue 40, deliver 2 (2026-11-29): as issue40_s36.sh, with the last forward pass the radix that leaves
# an invocation the fewest values to multiply (last_radix_balanced), colour and gray kernels
# against the multiply in shared memory (--conv-mult-shared), frame by frame in one process
# (--ab), two rounds, then the other order, one round (colour.txt); test_bloom on the GPU.
# Measured at 0433ada (reverted since: last_radix_balanced is gone).
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s37.sh
. "$(dirname "$0")/blooms_start.sh" s37
C="--suite bloom --only bloom.1080p.k256.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.fp32,bloom.2160p.k512.fp16,bloom.1080p.k256.gray.fp32,bloom.2160p.k512.gray.fp32 --variant default --machine $M --program-cache none --runs 30"
# shellcheck disable=SC2086
bash "$(dirname "$0")/ab_orders.sh" "$R" colour "$P/bin/fftbloom" --conv-mult-shared -- $C
TEST_ENGINE=gpu SECONDS_EACH=240 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_bloom
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s37 && rm -rf "$R"
