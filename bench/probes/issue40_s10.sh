#!/bin/bash
# Issue 40, the blooms' fused column pass on other invocations (2026-11-29): the 2160p bloom's
# fused columns (2744 long, 512 invocations a column by fft_conv.c's rule) take 0.53 ms of its
# 0.95; the rows' 875 finding (issue40_s8.sh) came from an invocation count the rule never
# tries. Through --conv-threads (issue40_io.sh's convN variants), rounds alternated:
#  A. 2160p k512 (fp32, gray, fp16), columns 2744 = 8 7 7 7: 196, 256, 343, 392, 448, 512;
#  B. 1080p k256 (fp32, gray, fp16), columns 1344 = 64 3 7: 168, 192, 224, 256, 336, 448;
#  C. the full-frame bloom, columns 2240 = 64 5 7: 280, 320, 448, 512.
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s10.sh
O=${OUT:-/tmp}
OUT=$O/a VARS="conv512 conv196 conv256 conv343 conv392 conv448" \
	IDS=bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.2160p.k512.fp16 ROUNDS=2 \
	bash "$(dirname "$0")/issue40_io.sh"
OUT=$O/b VARS="conv256 conv168 conv192 conv224 conv336 conv448" \
	IDS=bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.k256.fp16 ROUNDS=2 \
	bash "$(dirname "$0")/issue40_io.sh"
OUT=$O/c VARS="conv512 conv280 conv320 conv448" IDS=bloom.1080p.full.fp32 ROUNDS=2 \
	bash "$(dirname "$0")/issue40_io.sh"
cd "$O" && mkdir -p s10 && for x in a b c; do tar xzf "$x/r.tgz" -C "$x" && mv "$x/r" "s10/$x"; done && tar czf r.tgz s10 && rm -rf a b c s10
