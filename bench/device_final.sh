#!/bin/sh
# Final H200 run: bloom and FFT stage times with the wisdom file (new process), then the
# end-to-end benchmark on one GPU. Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
cp bench/data/h200-wisdom.txt /tmp/w.txt
fftbloom bench --runs 30 --fft-wisdom /tmp/w.txt > "$O/bench.jsonl" 2> "$O/bench.txt"
grep -v ' warn ' "$O/bench.txt"
BUILD=.carry/bin E2E_OUT="$O/e2e.jsonl" E2E_SECONDS=${E2E_SECONDS:-15} E2E_COLD=${E2E_COLD:-0} \
	sh bench/e2e.sh --fft-wisdom /tmp/w.txt 2>&1 | tail -6
