#!/bin/bash
# Issue 40, deliver 3: which gemm tile serves winograd's GEMMs best, and how winograd's time
# splits between its transforms and its GEMMs. bench/conv_tiles, a process a line (a later
# spatial context's winograd in one process measured up to 4x slower, bench/RESULTS.md), at
# precision 3, --runs ${RUNS:-10}: the B16 128->128 3x3 128² conv by F(4x4, 3x3) on the rule's
# tile and on tiles 1-11 (--wtiles), the rule's again last; then conv.wgemm_b16_g36_c128_32, the
# same GEMMs alone as a grouped 1x1 convolution, on the rule's tile and tiles 1-11.
# usage (repository root, the pack in .carry): bash bench/probes/issue40_wino_tiles.sh
# Results: $OUT/wino_tiles.jsonl and the table on stdout.
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P" 2>/dev/null
CT=$P/bin/bench/conv_tiles
J=${OUT:-/tmp}/wino_tiles.jsonl
: >"$J"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$P/COMMIT"; } | tr '\n' ' '; echo
for t in 0 1 2 3 4 5 6 7 8 9 10 11 0; do
	timeout 60 "$CT" --only conv.conv2d_b16_c128_k3_128 --precision 3 --tiles 99 --wtiles $t \
		--runs "${RUNS:-10}" 2>&1 >>"$J" | grep -- "-m4-"
done
for t in 0 1 2 3 4 5 6 7 8 9 10 11; do
	timeout 60 "$CT" --only conv.wgemm_b16_g36_c128_32 --precision 3 --tiles $t --wtiles 99 \
		--runs "${RUNS:-10}" 2>&1 >>"$J"
done
