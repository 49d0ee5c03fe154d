#!/bin/sh
# H200 runs 22-23: the GPU tests, a fresh FFT wisdom (the blocked column technique is a new
# candidate: measured in a first process), then fftbloom bench reading it in a new process
# (every FFT size with each technique; bloom folded/unfolded, fused/separate, blocked), and the
# cuFFT peers at the same padded sizes. Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
export CMOCKA_MESSAGE_OUTPUT=stdout
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
for t in ${TESTS-gles/test_fft gles/test_bloom}; do
	.carry/tests/$t > "$O/$(basename $t).log" 2>&1
	echo "$t: $(tail -1 "$O/$(basename $t).log")"
done
rm -f /tmp/w.txt
t0=$(date +%s)
fftbloom bench --runs 3 --warmup 1 --warm-seconds 0 --fft-wisdom /tmp/w.txt > "$O/tune.jsonl" 2> "$O/tune.txt"
echo "tuning run: $(( $(date +%s) - t0 )) s"
cp /tmp/w.txt "$O/wisdom.txt"
fftbloom bench --runs ${RUNS:-20} --warm-seconds ${WARM:-3} --repeat ${REPEAT:-2} --fft-wisdom /tmp/w.txt > "$O/bench.jsonl" 2> "$O/bench.txt"
grep -v ' warn ' "$O/bench.txt"
echo "bench: $(( $(date +%s) - t0 )) s"
timeout 150 python3 bench/peer_torch.py --from "$O/bench.jsonl" > "$O/torch.jsonl"
cat "$O/torch.jsonl" | cut -c1-300
