#!/bin/sh
# The whole GPU-machine benchmark in one command (run from the repository root there, after
# `sh bench/device_pack.sh` here): fftbloom info, fftbloom bench, the PyTorch/cuFFT peers at the
# same sizes, every result as JSON lines in $OUT (or ./bench-out).
set -u
. bench/device_env.sh >/dev/null 2>&1
O=${OUT:-bench-out}
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$O/gpu.txt"
fftbloom info > "$O/info.json"
fftbloom bench "$@" > "$O/fftbloom.jsonl" 2> "$O/fftbloom.txt"
cat "$O/fftbloom.txt"
pads=$(python3 -c "
import json
for l in open('$O/fftbloom.jsonl'):
    d=json.loads(l)
    if d.get('workload')=='bloom':
        w,h=d['padded'].split('x'); print(f'{h}x{w}')" | sort -u)
python3 bench/peer_torch.py $pads > "$O/torch.jsonl"
cat "$O/torch.jsonl"
