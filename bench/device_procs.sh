#!/bin/sh
# On a 2-GPU machine: is the 2-GPU shortfall inside one process? The end-to-end load (JPEG
# planes, 1080p frames, 32 and 64 clients) against one daemon on GPU 0, one daemon with both
# GPUs, and two daemons, one per GPU, sharing one port (SO_REUSEPORT, which fftbloomd sets), each
# with half the cores as codec threads. Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
nvidia-smi --query-gpu=index,name,driver_version --format=csv
cp bench/data/h200-wisdom.txt /tmp/wisdom.txt
S=${E2E_SECONDS:-12}
run() { # NAME [daemon options]
	n=$1
	shift
	echo "=== $n: $*"
	BUILD=.carry/bin E2E_OUT="$O/e2e-$n.jsonl" E2E_SECONDS=$S E2E_COLD=0 E2E_PLANES=true \
		E2E_CLIENTS="32 64" sh bench/e2e.sh --fft-wisdom /tmp/wisdom.txt "$@" 2>&1 |
		sed -n '/^clients/,/^codec ceiling/p;/^planes codec/p'
}
run gpus-0 --gpus 0
run gpus-all --gpus all

echo "=== two processes, one per GPU, one port"
cores=$(nproc)
half=$((cores / 2))
P=18080
frames=$(ls bench/frames/1920x1080/*.jpg)
fargs=""
for f in $frames; do fargs="$fargs -f $f"; done
url="http://127.0.0.1:$P/v1/bloom?kernel_preset=gaussian:sigma=8&format=jpeg"
pids=""
for g in 0 1; do
	.carry/bin/fftbloomd --gpus $g --codec-threads $half --queue-size 256 --fft-wisdom /tmp/wisdom.txt \
		--listen 127.0.0.1 --port $P >"$O/proc-$g.log" 2>&1 &
	pids="$pids $!"
	i=0
	until grep -q 'listening on' "$O/proc-$g.log"; do
		sleep 0.1
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "daemon $g did not start"; cat "$O/proc-$g.log"; break; }
	done
done
.carry/bin/bench/loadgen -c 4 -d 60 -n 48 -t 120 -u "$url" $fargs >/dev/null 2>&1
for c in 32 64; do
	.carry/bin/bench/loadgen -c $c -d $S -t 120 -u "$url" $fargs --json --label "two-procs-c$c" \
		2>"$O/lg-$c.err" | tee -a "$O/e2e-two-procs.jsonl"
	tail -n 3 "$O/lg-$c.err"
done
for p in $pids; do kill -TERM $p; done
wait
for g in 0 1; do tail -n 3 "$O/proc-$g.log"; done
