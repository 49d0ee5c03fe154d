#!/bin/bash
# Issue 40, deliver 3: winograd inside the daemon, where other work allocates and frees GPU
# buffers between its calls (a later spatial context's winograd measured up to 4x slower in
# one process, bench/RESULTS.md). One fftbloomd (GPU engine), POST /v1/conv2d of the B16
# 128->128 3x3 128² tensors (random, numpy): algorithm=winograd 6 times; then a 1080p PFM bloom
# and algorithm=gemm twice (other buffers made and freed); winograd 6 times again; a B32 input
# (winograd's buffers grow) 3 times; B16 3 times; auto 4 times. Each line: the request's time
# and its Server-Timing gpu less gpu_copy (the GPU thread's compute and waits, ms).
# DAEMON names the fftbloomd to run (default the pack's); SHORT=1 stops after the first six.
# usage (repository root, the pack in .carry): bash bench/probes/issue40_wino_daemon.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P" 2>/dev/null
T=/tmp/w40; rm -rf "$T/h"; mkdir -p "$T"
[ -r "$T/w.npy" ] || python3 - "$T" <<'PY'
import sys, numpy as np
d = sys.argv[1]; r = np.random.default_rng(1)
np.save(d + "/x16.npy", r.standard_normal((16, 128, 128, 128), dtype=np.float32))
np.save(d + "/x32.npy", r.standard_normal((32, 128, 128, 128), dtype=np.float32))
np.save(d + "/w.npy", (0.05 * r.standard_normal((128, 128, 3, 3))).astype(np.float32))
img = r.random((1080, 1920, 3), dtype=np.float32)
open(d + "/f.pfm", "wb").write(b"PF\n1920 1080\n-1.0\n" + img[::-1].tobytes())
PY
PORT=8099
rm -rf "$T/home"; mkdir -p "$T/home"
HOME=$T/home "${DAEMON:-$P/bin/fftbloomd}" --listen 127.0.0.1 --port $PORT --max-body 1G --log-level info >"$T/d.log" 2>&1 &
pid=$!
for i in $(seq 3000); do curl -sf -o /dev/null http://127.0.0.1:$PORT/readyz && break; sleep 0.01; done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$P/COMMIT"; } | tr '\n' ' '; echo
conv() { # LABEL X ALG
	curl -s -o "$T/y.npy" -D "$T/h" -w '%{http_code} %{time_total}' -F input=@"$T/$2" -F weight=@"$T/w.npy" \
		-F padding=1 -F algorithm="$3" http://127.0.0.1:$PORT/v1/conv2d >"$T/c"
	st=$(grep -i '^server-timing' "$T/h" | tr -d '\r')
	g=$(echo "$st" | grep -o 'gpu;dur=[0-9.]*' | cut -d= -f2); c=$(echo "$st" | grep -o 'gpu_copy;dur=[0-9.]*' | cut -d= -f2)
	echo "$1 $3 $2: $(cat "$T/c") gpu-copy $(awk -v g="$g" -v c="$c" 'BEGIN {printf "%.3f", g - c}') ms ($st)"
}
for i in 1 2 3 4 5 6; do conv first x16.npy winograd; done
if [ -z "${SHORT:-}" ]; then
curl -s -o /dev/null -w 'bloom %{http_code} %{time_total}\n' --data-binary @"$T/f.pfm" "http://127.0.0.1:$PORT/v1/bloom?format=pfm"
for i in 1 2; do conv between x16.npy gemm; done
for i in 1 2 3 4 5 6; do conv again x16.npy winograd; done
for i in 1 2 3; do conv grown x32.npy winograd; done
for i in 1 2 3; do conv after-grow x16.npy winograd; done
for i in 1 2 3 4; do conv auto x16.npy auto; done
fi
kill $pid; wait $pid 2>/dev/null
grep -i "error\|warn" "$T/d.log" | head -5
