#!/bin/sh
# H200 end to end with JPEG planes: the codec ceilings (float and planes paths), then the load
# with --jpeg-planes on and off (one GPU thread), then planes with 2 and 4 GPU threads on the one
# GPU, and planes with 4:2:0 answers. Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
cp bench/data/h200-wisdom.txt /tmp/w.txt
S=${E2E_SECONDS:-12}
run() { # NAME PLANES CLIENTS [daemon options]
	n=$1 p=$2 c=$3
	shift 3
	echo "=== $n"
	BUILD=.carry/bin E2E_OUT="$O/e2e-$n.jsonl" E2E_SECONDS=$S E2E_COLD=0 E2E_PLANES="$p" \
		E2E_CLIENTS="$c" sh bench/e2e.sh --fft-wisdom /tmp/w.txt "$@" 2>&1 | sed -n '/^fftbloomd end/,$p'
}
run t1 "true false" "8 32"
run t2 true 32 --gpu-threads 2
run t4 true 32 --gpu-threads 4
run t2-420 true 32 --gpu-threads 2 --jpeg-subsampling 420
