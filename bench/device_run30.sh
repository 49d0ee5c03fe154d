#!/bin/sh
# H200 run 30: columns exchanged through shared memory in rounds (fft_opts.rounds: one sweep for
# 2048- and 4096-long columns). In one command: test_fft (its rounds cases at the device's
# 48 KiB), fresh FFT wisdom measured in processes of their own with every candidate's time
# logged, every FFT workload and the main bloom workloads each in a process of its own, the
# cuFFT peers, and one GPU's end-to-end load with the GPU thread's time split (Server-Timing
# gpu_copy, gpu_wait). Results under $OUT: test_fft.log, tune.txt (the candidates), wisdom.txt,
# bench.jsonl/.txt, torch.jsonl, e2e.jsonl.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
export CMOCKA_MESSAGE_OUTPUT=stdout
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
timeout 200 .carry/tests/gles/test_fft >"$O/test_fft.log" 2>&1
el "test_fft: $(grep -E '^\[  (PASSED|FAILED)' "$O/test_fft.log" | tr '\n' ' ')"
grep -E 'in up to|ran one sweep|FAIL|ERROR' "$O/test_fft.log" | cut -c1-150 | head -12

SIZES="1024x1024 1080x1920 2048x2048 4096x4096 1350x2187"
BLOOMS="1080p k256|1080p k256 fp16|1080p full-frame|2160p k512|2160p k512 fp16"
W=/tmp/w.txt
rm -f $W
# the wisdom: the FFT shapes in one process, each bloom's in one of its own
timeout 240 fftbloom bench --only fft --runs 3 --warmup 1 --warm-seconds 0 --fft-wisdom $W \
	--verbose >"$O/tune.jsonl" 2>"$O/tune.txt"
echo "$BLOOMS" | tr '|' '\n' | while IFS= read -r l; do
	timeout 120 fftbloom bench --only "=$l" --runs 3 --warmup 1 --warm-seconds 0 --fft-wisdom $W \
		--verbose >>"$O/tune.jsonl" 2>>"$O/tune.txt"
done
cp $W "$O/wisdom.txt"
el "wisdom: $(wc -l <$W) shapes"
grep -E 'cols blocked' "$O/tune.txt" | sed 's/^[^ ]* debug //' | cut -c1-140

: >"$O/bench.jsonl"
: >"$O/bench.txt"
for s in $SIZES; do
	for t in "auto computed" "auto table" "global computed" "blocked computed" \
		"blocked computed 32B r8" "blocked computed 64B r8"; do
		echo "fft $s $t"
	done
done >/tmp/labels
echo "$BLOOMS" | tr '|' '\n' >>/tmp/labels
while IFS= read -r l; do
	timeout 60 fftbloom bench --only "=$l" --runs ${RUNS:-20} --warm-seconds ${WARM:-1} \
		--fft-wisdom $W >>"$O/bench.jsonl" 2>>"$O/bench.txt"
done </tmp/labels
grep -E '^(fft|bloom)' "$O/bench.txt" | cut -c1-200
el "bench done"

timeout 150 python3 bench/peer_torch.py --from "$O/bench.jsonl" >"$O/torch.jsonl"
cut -c1-160 "$O/torch.jsonl"
el "cuFFT done"

if [ "${E2E:-1}" = 1 ]; then
	BUILD=.carry/bin E2E_OUT="$O/e2e.jsonl" E2E_SECONDS=${E2E_SECONDS:-10} E2E_COLD=0 \
		E2E_PLANES=true E2E_CLIENTS="8 32" sh bench/e2e.sh --fft-wisdom $W 2>&1 |
		grep -E 'loadgen|latency|Server-Timing|ceiling' | cut -c1-200
	el "e2e done"
fi
