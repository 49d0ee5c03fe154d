#!/bin/bash
# Issue 40 (after 3828d53): the bloom rows' image reads. The composite's read of the image costs
# 0.08 ms at 2160p (bench/RESULTS.md, "The blooms' row ends taken apart") though the inverse rows
# move their other bytes at 78% of the copy rate. Without `restrict`, GLSL lets the output and the
# image alias, so each image read after an output store must wait for it: an invocation's last
# stores would read, wait, composite and store one sample after another. The variants
# (bench/probes/issue40_s44_variants.py: base, restrict, presplit, loadsplit, rpre, all), each a
# shader folder (--shader-dir), run the blooms IDS a process each, alternated ROUNDS (2) times;
# stage lines in s44.txt, JSON lines in s44.jsonl.
# usage (repository root, a pack in .carry): bash bench/probes/issue40_s44.sh
. "$(dirname "$0")/blooms_start.sh" s44
IDS=${IDS:-bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.2160p.k512.fp16,bloom.1080p.k256.fp32,bloom.1080p.full.fp32}
VARS=${VARS:-base restrict presplit loadsplit rpre all}
V=$R/variants
# shellcheck disable=SC2086
python3 bench/probes/issue40_s44_variants.py gles/shaders "$V" $VARS || exit 1
for r in $(seq "${ROUNDS:-2}"); do
	for v in $VARS; do
		timeout 150 "$P/bin/fftbloom" bench --suite bloom --only "$IDS" --variant default --machine "$M" \
			--program-cache none --runs 30 --warmup 5 --warm-seconds 1 --shader-dir "$V/$v" 2>"$R/err.txt" |
			sed "s/\"variant\":\"default\"/\"variant\":\"$v\"/" >>"$R/s44.jsonl"
		grep "GPU" "$R/err.txt" | sed "s/^/round $r $v: /" >>"$R/s44.txt"
		grep -i "error\|fail" "$R/err.txt" | head -3 | sed "s/^/round $r $v: /" >>"$R/s44.txt"
	done
done
sed 's/default           //' "$R/s44.txt"
rm -rf "$V" "$R/err.txt"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s44 && rm -rf "$R"
