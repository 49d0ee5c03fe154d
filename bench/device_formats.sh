#!/bin/sh
# The answer formats' encode costs on the GPU machine's host cores (bench/encode_formats: each
# workload on one thread, 1920x1080 photographs from bench/make_frames.sh): JPEG, PNG, WebP and
# AVIF at several speeds, qualities and depths. No GPU used. Needs .carry (sh bench/device_pack.sh)
# and bench/frames. Results on stdout and under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
echo "$(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
timeout 500 .carry/bin/bench/encode_formats --runs 12 --max-seconds 40 --label 1920x1080 \
	bench/frames/1920x1080/*.jpg >"$O/formats.jsonl" 2>"$O/formats.txt"
cat "$O/formats.txt"
cat "$O/formats.jsonl"
