#!/bin/sh
# Run 32: lent planes (--lend-planes) and polled fences (--fence-wait poll) end to end against
# copies, with one GPU thread and with two in one process (--gpu-threads 2, or --gpus all on a
# machine of two GPUs), and two daemons on one port (one per GPU; both on GPU 0 where there is
# one); 1080p JPEG frames through /v1/bloom at 32 and 64 clients, E2E_SECONDS each, medians of
# the GPU thread's time split (Server-Timing gpu, gpu_copy, gpu_wait). First, on GPU 0, the FFT
# workloads timed whole (the bench fix after runs 30-31) beside cuFFT. Results under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
ngpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
W=/tmp/wisdom.txt
cat bench/data/h200-run30-wisdom.txt bench/data/h200-wisdom.txt >$W

# FFT only, whole transforms, each size in a process of its own; cuFFT
: >"$O/fft.jsonl"
for s in 1024x1024 1080x1920 2048x2048 4096x4096 1350x2187; do
	timeout 60 fftbloom bench --only "=fft $s auto computed" --runs 30 --warm-seconds 1 \
		--fft-wisdom $W >>"$O/fft.jsonl" 2>>"$O/fft.txt"
done
grep '^fft' "$O/fft.txt" | cut -c1-190
CUDA_VISIBLE_DEVICES=0 timeout 100 python3 bench/peer_torch.py >"$O/torch.jsonl"
grep '"fft"\|copy' "$O/torch.jsonl" | cut -c1-120
el "FFT done"

. bench/device_e2e_lib.sh
: >"$O/e2e.jsonl"
two="--gpus all"
[ "$ngpus" = 1 ] && two="--gpus 0 --gpu-threads 2"
run gpu0-copy 1 --gpus 0 --lend-planes=false
run gpu0-lend 1 --gpus 0
run gpu0-lend-poll 1 --gpus 0 --fence-wait poll
run two-copy 1 $two --lend-planes=false
run two-lend 1 $two
run two-lend-poll 1 $two --fence-wait poll
run two-procs-lend 2
run gpu0-copy-again 1 --gpus 0 --lend-planes=false
el "e2e done"
