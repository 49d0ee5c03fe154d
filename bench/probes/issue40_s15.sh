#!/bin/bash
# Issue 40, the 2160p bloom's 4375-long rows on other invocations now that their data side is in
# tiles of 16 columns (2026-11-29): the shipped H200 wisdom's 875 was measured with rows a pitch
# apart (issue40_s8.sh); with the tiles the rows took 0.239 -> 0.257 ms and the inverse rows
# 0.193 -> 0.196. Through one-line wisdom files (issue40_io.sh's threadsN), the 2160p k512
# blooms (fp32, gray, fp16) on 875, 512, 625 and 1024 invocations a row, rounds alternated.
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s15.sh
D="NVIDIA H200/PCIe/SSE2 / OpenGL ES 3.2 NVIDIA 580.159.04"
O=${OUT:-/tmp}
OUT=$O WISDOM_ROWS="$D|4375|4|0|0|0|11|1|875|1.65651|0
$D|4375|4|0|1|0|11|1|875|1.47830|0" VARS="threads875 threads512 threads625 threads1024" \
	IDS=bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.2160p.k512.fp16 ROUNDS=2 NO_PLAIN=1 \
	bash "$(dirname "$0")/issue40_io.sh"
