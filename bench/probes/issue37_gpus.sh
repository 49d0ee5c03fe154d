#!/bin/bash
# Issue 37's several-GPU figures in one device call on a 4-GPU host (bench/gpus.sh): one GPU, one
# service over all four and a daemon per GPU at 32, 64 and 128 clients (1080p 4:2:0 q90); the
# same over GPUs 0 and 1; the service with the entropy decoding on the GPU; the service with
# 4:2:0 q85 frames and with 2160p frames. Results in one tarball under $OUT.
# usage (from the repository root, a pack in .carry): bash bench/probes/issue37_gpus.sh
P=$PWD/.carry
set -- "$P"
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/g; mkdir -p "$R"
export BUILD=$P/bin GPUS_SECONDS=8
{ nvidia-smi -L; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
F=$P/bench/frames
GPUS_FRAMES=$F timeout 200 sh bench/gpus.sh "$R/all4" >"$R/all4.txt" 2>&1
GPUS_FRAMES=$F GPUS_LIST=0,1 GPUS_LAYOUTS="service per-gpu" GPUS_CLIENTS="64 128" timeout 90 sh bench/gpus.sh "$R/two" >"$R/two.txt" 2>&1
FFTBLOOM_JPEG_GPU_ENTROPY_DECODE=true GPUS_FRAMES=$F GPUS_LAYOUTS="service" GPUS_CLIENTS="64 128" timeout 60 sh bench/gpus.sh "$R/entropy" >"$R/entropy.txt" 2>&1
GPUS_FRAMES=$F/q85-420 GPUS_LAYOUTS="service" GPUS_CLIENTS="64 128" timeout 60 sh bench/gpus.sh "$R/q85" >"$R/q85.txt" 2>&1
GPUS_FRAMES=$F GPUS_SIZE=3840x2160 GPUS_LAYOUTS="one-gpu service" GPUS_CLIENTS="64" timeout 70 sh bench/gpus.sh "$R/2160" >"$R/2160.txt" 2>&1
find "$R" -name '*.log' -size +2M -delete
tar czf "${OUT:-/tmp}/g.tgz" -C "$(dirname "$R")" g && rm -rf "$R"
