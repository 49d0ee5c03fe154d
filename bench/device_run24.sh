#!/bin/sh
# H200 run 24: every workload of fftbloom bench in a process of its own (the GL driver's clocks
# follow the load of the last seconds, so one workload must not inherit another's), after one
# process has measured the FFT wisdom; bloom stages timed back to back (bloom_rerun_stages);
# then the cuFFT peers at the same sizes. Extra options for every bench process: $BENCH_OPTS.
# Results under $OUT: bench.jsonl (one line per workload), bench.txt, torch.jsonl, wisdom.txt.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
W=/tmp/w.txt
rm -f $W
t0=$(date +%s)
fftbloom bench --runs 3 --warmup 1 --warm-seconds 0 --fft-wisdom $W ${BENCH_OPTS:-} > "$O/tune.jsonl" 2> "$O/tune.txt"
echo "tuning process: $(( $(date +%s) - t0 )) s"
cp $W "$O/wisdom.txt"
: > "$O/bench.jsonl"
: > "$O/bench.txt"
for s in 1024x1024 1080x1920 2048x2048 4096x4096 1350x2187; do
	for t in "auto computed" "auto table" "global computed" "blocked computed"; do
		echo "fft $s $t"
	done
done > /tmp/labels
for l in "1080p k256" "1080p k256 gray" "1080p k256 pow2" "1080p k256 global" "1080p k256 fp16" \
	"1080p k256 separate" "1080p k256 folded" "1080p full-frame" "2160p k512" "2160p k512 gray" \
	"2160p k512 pow2" "2160p k512 fp16" "2160p k512 separate" "2160p k512 folded" \
	"2160p k512 blocked separate"; do
	echo "$l"
done >> /tmp/labels
while IFS= read -r l; do
	fftbloom bench --only "=$l" --runs ${RUNS:-20} --warm-seconds ${WARM:-1} --fft-wisdom $W \
		${BENCH_OPTS:-} >> "$O/bench.jsonl" 2>> "$O/bench.txt"
done < /tmp/labels
grep -E '^(fft|bloom|      whole)' "$O/bench.txt"
echo "bench: $(( $(date +%s) - t0 )) s"
timeout 150 python3 bench/peer_torch.py --from "$O/bench.jsonl" > "$O/torch.jsonl"
cut -c1-200 "$O/torch.jsonl"
