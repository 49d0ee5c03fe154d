#!/bin/sh
# Run 33 (one H200): the end-to-end figures with the current defaults (planes lent to the codec
# threads) through bench/e2e.sh: 8 and 32 clients, the GPU thread's busy fraction, the codec
# ceilings, the time to a first result cold, with persisted program binaries and at a new size;
# then lent planes against copies, interleaved (lend, copy, lend, copy at 32 clients) so that
# clock drift falls on both. Everything in one archive, $OUT/run33.tar.gz (the device tool
# returns 8 files at most); the tables on stdout.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=/tmp/run33
mkdir -p "$O"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
ngpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
W=/tmp/wisdom.txt
cat bench/data/h200-run30-wisdom.txt bench/data/h200-wisdom.txt >$W
BUILD=.carry/bin E2E_OUT="$O/e2e-defaults.jsonl" E2E_SECONDS=${E2E_SECONDS:-12} E2E_PLANES=true \
	E2E_CLIENTS="8 32" sh bench/e2e.sh --fft-wisdom $W >"$O/e2e-defaults.txt" 2>&1
sed -n '/^fftbloomd end to end/,$p' "$O/e2e-defaults.txt"
el "e2e.sh done"
. bench/device_e2e_lib.sh
: >"$O/e2e.jsonl"
E2E_CLIENTS=32
for round in 1 2; do
	run lend-$round 1 --gpus 0
	run copy-$round 1 --gpus 0 --lend-planes=false
done
el "interleaved done"
tar czf "${OUT:-/tmp}/run33.tar.gz" -C /tmp run33
