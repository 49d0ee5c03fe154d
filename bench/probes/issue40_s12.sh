#!/bin/bash
# Issue 40, the row spectra in tiles (2026-11-29): the io rows and fused columns of a bloom in
# place addressing tiles of N columns (--spectrum-tiles N, bloom_ctx_opts.spectrum_tiles; the
# rule BLOOM_TILE_COLUMNS), after issue40_s11.sh's shader-folder variant of 8 columns measured
# the 2160p bloom 0.963 -> 0.885 ms. Rounds alternated, a process each:
#  A. the bloom suite (2160p k512, 1080p k256, fp32 and gray; the full-frame bloom): 1 (rows a
#     pitch apart), 4, 8, 16;
#  B. the jpeg suite's GPU side (1080p and 2160p, k49, 4:4:4 scans): 1, 8, 16;
#  C. the answers: this build's CLI blooms (the rule's tiles) against PACK/baseline's (rows a
#     pitch apart) on 3840x2160, 1920x1080 and 1001x701 frames, a 512x512 colour kernel and a
#     gray one, float32 and float16 (max and rel_l2 differences, answers.txt);
#  D. test_fft and test_bloom on the GPU (tests.txt).
# usage (repository root, a pack with a baseline in .carry): bash bench/probes/issue40_s12.sh
O=${OUT:-/tmp}
OUT=$O/a VARS="tiles1 tiles4 tiles8 tiles16" ROUNDS=2 \
	IDS=bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.full.fp32 \
	bash "$(dirname "$0")/issue40_io.sh"
OUT=$O/b VARS="tiles1 tiles8 tiles16" ROUNDS=2 SUITE=jpeg VARIANT=scan NO_PLAIN=1 \
	IDS=jpeg.1080p.k49.444,jpeg.2160p.k49.444 bash "$(dirname "$0")/issue40_io.sh"
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=$O/c; mkdir -p "$R"
bash "$(dirname "$0")/answers_vs_baseline.sh" "$P" "$R"
grep -o 'padded [0-9x]*, [a-z]* kernel' "$R/cli.err" | sort | uniq -c
SECONDS_EACH=300 bash "$(dirname "$0")/gpu_tests.sh" "$P" "$R" test_fft test_bloom
cd "$O" && mkdir -p s12 && for x in a b; do tar xzf "$x/r.tgz" -C "$x" && mv "$x/r" "s12/$x"; done && mv c s12/c && tar czf r.tgz s12 && rm -rf a b s12
