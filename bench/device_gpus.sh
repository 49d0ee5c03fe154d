#!/bin/sh
# On a machine with several GPUs: the end-to-end benchmark (JPEG planes, the default) with one
# GPU thread and with every GPU, each with the planes' buffers mapped once (the default) and
# mapped per frame (--persistent-map=false); same frames and clients. Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
nvidia-smi --query-gpu=index,name,driver_version --format=csv
cp bench/data/h200-wisdom.txt /tmp/wisdom.txt
run() { # NAME [daemon options]
	n=$1
	shift
	echo "=== $n: $*"
	BUILD=.carry/bin E2E_OUT="$O/e2e-$n.jsonl" E2E_SECONDS=${E2E_SECONDS:-12} E2E_COLD=0 \
		E2E_PLANES=${E2E_PLANES:-true} E2E_CLIENTS="${E2E_CLIENTS:-32}" \
		sh bench/e2e.sh --fft-wisdom /tmp/wisdom.txt "$@" 2>&1 | sed -n '/^clients/,/^codec ceiling/p;/^planes codec/p'
}
run gpus-0 --gpus 0
run gpus-all --gpus all
run gpus-0-mapped-per-frame --gpus 0 --persistent-map=false
run gpus-all-mapped-per-frame --gpus all --persistent-map=false
run gpus-all-t2 --gpus all --gpu-threads 2
