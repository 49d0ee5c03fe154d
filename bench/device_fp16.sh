#!/bin/sh
# H200: the bloom workloads (host-clock breakdown included), then the end-to-end benchmark with
# precision=fp16 (frames cross as float16). Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
cp bench/data/h200-wisdom.txt /tmp/w.txt
fftbloom bench --only bloom --runs 20 --warm-seconds 5 --fft-wisdom /tmp/w.txt > "$O/bench.jsonl" 2> "$O/bench.txt"
grep -v ' warn ' "$O/bench.txt" | grep -A1 -E '1080p k256 |fp16|2160p k512  '
BUILD=.carry/bin E2E_OUT="$O/e2e.jsonl" E2E_SECONDS=12 E2E_COLD=0 \
	E2E_QUERY='kernel_preset=gaussian:sigma=8&format=jpeg&precision=fp16' \
	sh bench/e2e.sh --fft-wisdom /tmp/w.txt 2>&1 | tail -5
