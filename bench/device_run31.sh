#!/bin/sh
# H200 run 31: fewer passes for the rows. Every FFT size and the main bloom workloads under three
# factorizations, each with wisdom measured afresh in processes of its own and every workload in
# a process of its own: plain (radix 8 at most, odd primes one pass each), --fft-composite (odd
# factors grouped into 9, 25, 27), --fft-max-radix 16. Also test_fft and test_bloom (the
# composite cases), the cuFFT peers, and one GPU's end-to-end load with the GPU thread's time
# split (Server-Timing gpu_copy, gpu_wait). Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
export CMOCKA_MESSAGE_OUTPUT=stdout
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
for t in test_fft test_bloom; do
	timeout 150 .carry/tests/gles/$t >"$O/$t.log" 2>&1
	el "$t: $(grep -E '^\[  (PASSED|FAILED)' "$O/$t.log" | tr '\n' ' ')"
done
grep -E 'composite|FAIL|ERROR' "$O/test_fft.log" "$O/test_bloom.log" | cut -c1-160 | head -20

SIZES="1024x1024 1080x1920 2048x2048 4096x4096 1350x2187"
BLOOMS="1080p k256|1080p full-frame|2160p k512|2160p k512 fp16"
: >"$O/bench.jsonl"
: >"$O/bench.txt"
for v in plain composite r16; do
	case $v in
	plain) V="" ;;
	composite) V="--fft-composite" ;;
	r16) V="--fft-max-radix 16" ;;
	esac
	W=/tmp/w-$v.txt
	rm -f $W
	timeout 200 fftbloom bench --only "auto computed" --runs 3 --warmup 1 --warm-seconds 0 \
		--fft-wisdom $W $V >/dev/null 2>"$O/tune-$v.txt"
	echo "$BLOOMS" | tr '|' '\n' | while IFS= read -r l; do
		timeout 100 fftbloom bench --only "=$l" --runs 3 --warmup 1 --warm-seconds 0 \
			--fft-wisdom $W $V >/dev/null 2>>"$O/tune-$v.txt"
	done
	cp $W "$O/wisdom-$v.txt"
	el "$v: wisdom of $(wc -l <$W) shapes"
	{
		for s in $SIZES; do echo "fft $s auto computed"; done
		echo "$BLOOMS" | tr '|' '\n'
	} >/tmp/labels
	while IFS= read -r l; do
		timeout 60 fftbloom bench --only "=$l" --runs ${RUNS:-20} --warm-seconds ${WARM:-1} \
			--fft-wisdom $W $V >>"$O/bench.jsonl" 2>>"$O/bench.txt"
	done </tmp/labels
	echo "== $v"
	grep -E '^(fft|bloom)' "$O/bench.txt" | tail -n 9 | cut -c1-200
done
el "bench done"

timeout 150 python3 bench/peer_torch.py --from "$O/bench.jsonl" >"$O/torch.jsonl"
cut -c1-160 "$O/torch.jsonl"
el "cuFFT done"

if [ "${E2E:-1}" = 1 ]; then
	BUILD=.carry/bin E2E_OUT="$O/e2e.jsonl" E2E_SECONDS=${E2E_SECONDS:-10} E2E_COLD=0 \
		E2E_PLANES=true E2E_CLIENTS="8 32" sh bench/e2e.sh --fft-wisdom /tmp/w-plain.txt 2>&1 |
		grep -E 'loadgen|latency|Server-Timing|ceiling' | cut -c1-200
	el "e2e done"
fi
