#!/bin/sh
# On a machine with several GPUs: the end-to-end benchmark with one GPU thread, then with every
# GPU (--gpus all), same frames and clients. Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
nvidia-smi --query-gpu=index,name,driver_version --format=csv
cp bench/data/h200-wisdom.txt /tmp/wisdom.txt
for g in 0 all; do
	echo "=== --gpus $g"
	BUILD=.carry/bin E2E_OUT="$O/e2e-gpus-$g.jsonl" E2E_SECONDS=${E2E_SECONDS:-15} E2E_COLD=${E2E_COLD:-0} \
		sh bench/e2e.sh --gpus $g --fft-wisdom /tmp/wisdom.txt 2>&1 | tail -9
done
