#!/bin/sh
# The whole GPU-machine run in one command, from the repository root there, after
# `sh bench/device_pack.sh` here (binaries and libraries in .carry/, glvnd in .gl/, frames in
# bench/frames/): the context's facts, the GPU accuracy tests, local-memory use, fftbloom bench
# with the FFT wisdom, the PyTorch/cuFFT peers at the same sizes, fftbloom fft against numpy, and
# (unless E2E=0) the end-to-end HTTP benchmark. Results go to $OUT (or ./bench-out).
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
export CMOCKA_MESSAGE_OUTPUT=stdout
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$O/gpu.txt"
fftbloom info > "$O/info.json" && grep -E '"(renderer|version|platform)"' "$O/info.json"
for t in gles/test_gpu_basic gles/test_fft gles/test_bloom; do
	.carry/tests/$t > "$O/$(basename $t).log" 2>&1
	echo "$t: $(tail -1 "$O/$(basename $t).log")"
done
sh bench/device_lmem.sh bloom | tail -3
cp bench/data/h200-wisdom.txt /tmp/wisdom.txt 2>/dev/null
fftbloom bench --fft-wisdom /tmp/wisdom.txt "$@" > "$O/fftbloom.jsonl" 2> "$O/fftbloom.txt"
grep -v ' warn ' "$O/fftbloom.txt"
cp /tmp/wisdom.txt "$O/wisdom.txt"
python3 bench/peer_torch.py --from "$O/fftbloom.jsonl" > "$O/torch.jsonl"
cat "$O/torch.jsonl"
python3 - <<'PY'
import numpy as np, subprocess, sys
rng = np.random.default_rng()
for shape in [(1080, 1920), (4096, 4096), (1350, 2187), (97, 4099), (1, 1), (3, 5)]:
    a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    np.save('/tmp/in.npy', a)
    for inv in (0, 1):
        cmd = ['fftbloom', 'fft', '/tmp/in.npy', '-o', '/tmp/out.npy', '--fft-wisdom', '/tmp/wisdom.txt'] + (['--inverse'] if inv else [])
        subprocess.run(cmd, check=True)
        o = np.load('/tmp/out.npy')
        r = (np.fft.ifft2 if inv else np.fft.fft2)(a.astype(np.complex128))
        print('fftbloom fft %s %s vs numpy: rel L2 %.2e' % ('x'.join(map(str, shape)), 'inverse' if inv else 'forward', np.linalg.norm(o - r) / np.linalg.norm(r)))
PY
if [ "${E2E:-1}" = 1 ] && [ -x .carry/bin/bench/loadgen ]; then
	BUILD=.carry/bin E2E_OUT="$O/e2e.jsonl" E2E_SECONDS=${E2E_SECONDS:-15} sh bench/e2e.sh --fft-wisdom /tmp/wisdom.txt 2>&1 | tail -20
fi
