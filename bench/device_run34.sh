#!/bin/sh
# Run 34 (one H200): two of the bloom's design choices measured on its own row transforms
# (fftbloom bench's "rows" workloads): only the image's rows transformed, not the all-padding
# ones, and the two packed complex planes a vec4 element, not two vec2 passes. Each label in a
# process of its own, with the run-30 wisdom. Results on stdout and under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
W=/tmp/wisdom.txt
cat bench/data/h200-run30-wisdom.txt bench/data/h200-wisdom.txt >$W
for l in "rows 1080p k256" "rows 2160p k512"; do
	timeout 120 fftbloom bench --only "=$l" --runs 30 --warm-seconds 1 --fft-wisdom $W \
		>>"$O/rows.jsonl" 2>>"$O/rows.txt"
done
grep '^rows' "$O/rows.txt"
cat "$O/rows.jsonl"
