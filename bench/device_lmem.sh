#!/bin/sh
# Which FFT programs use local memory on this driver (NVIDIA's binaries embed the assembly):
# compiles the FFT bench's programs into a fresh binary folder and counts "TEMP lmem" per file.
set -u
. bench/device_env.sh >/dev/null 2>&1
rm -rf /tmp/pcl && mkdir -p /tmp/pcl
fftbloom bench --only "${1:-fft}" --runs 3 --warmup 1 --program-cache /tmp/pcl >/dev/null 2>&1
total=0; lmem=0
for f in /tmp/pcl/*.bin; do
	total=$((total + 1))
	if strings "$f" | grep -q 'TEMP lmem'; then lmem=$((lmem + 1)); echo "lmem: $(basename $f) $(strings $f | grep -E 'GROUP_SIZE' )"; fi
done
echo "programs using local memory: $lmem of $total"
