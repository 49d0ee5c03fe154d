#!/bin/sh
# H200 run 25: the shared FFT's switches. The GPU tests that run the real subgroup shuffles
# (llvmpipe has none), then each workload in its own process with the switches off, with
# --fft-bank-pad and with --fft-subgroup, reading run 24's wisdom. Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
export CMOCKA_MESSAGE_OUTPUT=stdout
for t in gles/test_fft gles/test_bloom; do
	.carry/tests/$t > "$O/$(basename $t).log" 2>&1
	echo "$t: $(grep -E 'PASSED|FAILED|SKIPPED' "$O/$(basename $t).log" | tr '\n' ' ')"
	grep -E "^ERROR|FAIL" "$O/$(basename $t).log" | head -5
done
fftbloom info | grep -o '"subgroup[^,]*,[^,]*,[^,]*'
cp bench/data/h200-wisdom.txt /tmp/w.txt
: > "$O/switches.jsonl"
for l in "fft 1024x1024 auto computed" "fft 1080x1920 auto computed" "fft 2048x2048 auto computed" \
	"fft 4096x4096 auto computed" "fft 1350x2187 auto computed" "1080p k256" "1080p full-frame" \
	"2160p k512" "1080p k256 pow2"; do
	for sw in "" --fft-bank-pad --fft-subgroup; do
		fftbloom bench --only "=$l" --runs 20 --warm-seconds 1 --fft-wisdom /tmp/w.txt $sw \
			>> "$O/switches.jsonl" 2> /tmp/err.txt
		printf '%-30s %-15s %s\n' "$l" "${sw:-off}" "$(grep -E '^(fft|bloom)' /tmp/err.txt | sed 's/.*forward/forward/; s/.*GPU/GPU/' | cut -c1-150)"
	done
done
