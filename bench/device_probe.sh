#!/bin/sh
# Diagnostics on the GPU machine: program binaries (NVIDIA's embed the assembly, so local
# memory and instruction counts can be read), time to a first bloom cold and with persisted
# binaries. Writes under $OUT.
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-probe-out}
mkdir -p "$O" /tmp/pcache /tmp/pc4096
/usr/bin/python3 -c 1 2>/dev/null
python3 -c "
import numpy as np
a=np.random.rand(1080,1920,3).astype('<f4')
with open('/tmp/frame.pfm','wb') as f:
    f.write(b'PF\n1920 1080\n-1.0\n'); f.write(a[::-1].tobytes())
"
for i in 1 2 3; do
	s=$(date +%s.%N)
	fftbloom bloom /tmp/frame.pfm -o /tmp/out.exr --kernel-preset gaussian:sigma=20,size=255 --program-cache /tmp/pcache
	e=$(date +%s.%N)
	echo "first bloom run $i (program cache $( [ $i = 1 ] && echo cold || echo warm)): $(echo "$e - $s" | bc) s"
done
s=$(date +%s.%N); fftbloom bloom /tmp/frame.pfm -o /tmp/out.exr --kernel-preset gaussian:sigma=20,size=255 >/dev/null 2>&1; e=$(date +%s.%N)
echo "bloom without program cache: $(echo "$e - $s" | bc) s"
fftbloom bench --only fft --runs 5 --warmup 1 --program-cache /tmp/pc4096 >/dev/null 2>&1
ls -la /tmp/pc4096 | head -40
for f in /tmp/pc4096/*.bin; do
	n=$(strings "$f" | grep -c -i -E 'lmem|local')
	echo "$(basename $f) $(stat -c %s $f) bytes, lmem/local mentions: $n"
done
tar czf "$O/binaries.tgz" -C /tmp pc4096 pcache
