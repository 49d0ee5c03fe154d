#!/bin/sh
# The answer formats' encode costs on the GPU machine's host cores (bench/encode_formats: each
# workload on one thread, the 1920x1080 photographs of make bench-frames): JPEG, PNG, WebP and
# AVIF at several speeds, qualities and depths. No GPU used. Needs the folder bench/pack.sh makes
# (.carry, with bench/frames). Results on stdout and under $OUT.
set -u
PACK=${PACK:-.carry}
. "$PACK/bench/remote_env.sh" "$PACK" >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
echo "$(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
timeout 500 "$PACK/bin/bench/encode_formats" --runs 12 --max-seconds 40 --label 1920x1080 \
	"$PACK"/bench/frames/1920x1080/*.jpg >"$O/formats.jsonl" 2>"$O/formats.txt"
cat "$O/formats.txt"
cat "$O/formats.jsonl"
