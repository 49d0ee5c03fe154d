#!/bin/bash
# Issue 37's one-GPU measurements in one device call (bench/README.md, "On another host"): the GPU
# JPEG entropy decoder (bench workloads jpeg.huffdec.* and the corpus test), the host's EXR codec
# ceiling, EXR in and out through the daemon (half and float ZIP in; zip, none and JPEG answers),
# JPEG frames with the entropy decoding on the CPU and on the GPU (1080p 4:4:4 q90, 4:2:0 q85,
# 2160p), and the Python module's per-call overhead. Results in one tarball under $OUT.
# usage (from the repository root, a pack in .carry with cjpeg and test_huffdec added):
#   bash bench/probes/issue37_one_gpu.sh
P=$PWD/.carry
set -- "$P"
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
B=$P/bin
export PATH=$B:$PATH
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
W=jpeg.huffdec.1080p.q90.444,jpeg.huffdec.1080p.q85.420,jpeg.huffdec.2160p.q90.444
for i in 1 2 3; do
	timeout 60 fftbloom-bench --suite jpeg --runs 30 --warmup 5 --warm-seconds 1 --machine h100 \
		--only $W >>"$R/huffdec.jsonl" 2>>"$R/huffdec.err"
done
timeout 60 "$P/tests/gles/test_huffdec" >"$R/test_huffdec.txt" 2>&1; echo "rc $?" >>"$R/test_huffdec.txt"
timeout 100 "$B/bench/codec_ceiling" --exr --machine h100 $P/bench/frames/1920x1080/*.jpg >"$R/exr_ceiling_1080.jsonl" 2>"$R/exr_ceiling_1080.err"
timeout 60 "$B/bench/codec_ceiling" --exr --machine h100 $P/bench/frames/3840x2160/*.jpg >"$R/exr_ceiling_2160.jsonl" 2>"$R/exr_ceiling_2160.err"
# EXR frames: half and float ZIP from the 1080p photographs
mkdir -p /tmp/exr/half /tmp/exr/float
for f in $P/bench/frames/1920x1080/*.jpg; do
	b=$(basename "$f" .jpg)
	fftbloom convert "$f" -o /tmp/exr/half/$b.exr --quiet
	fftbloom convert "$f" -o /tmp/exr/float/$b.exr --bits 32 --quiet
done
ls -la /tmp/exr/half /tmp/exr/float >"$R/exr_frames.txt"
exr_load() { # NAME DIR QUERY CLIENTS
	fftbloomd --port 8090 --queue-size 256 --max-per-ip 0 >"$R/d-$1.log" 2>&1 & pid=$!
	for i in $(seq 100); do curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8090/readyz | grep -q 200 && break; sleep 0.2; done
	timeout 40 "$B/bench/loadgen" -c "$4" -d 10 --any-body --json --label "$1" --server-pid $pid \
		--metrics-url http://127.0.0.1:8090/metrics -u "http://127.0.0.1:8090/v1/bloom?kernel_preset=gaussian:sigma=8&$3" \
		$(for f in "$2"/*.exr; do printf -- '-f %s ' "$f"; done) >>"$R/exr_e2e.jsonl" 2>>"$R/exr_e2e.txt"
	kill $pid; wait $pid 2>/dev/null
}
exr_load half-zip-c32 /tmp/exr/half 'format=exr&exr_compression=zip' 32
exr_load half-none-c32 /tmp/exr/half 'format=exr&exr_compression=none' 32
exr_load half-jpeg-c32 /tmp/exr/half 'format=jpeg' 32
exr_load float-zip-c32 /tmp/exr/float 'format=exr&exr_compression=zip' 32
exr_load half-zip-c8 /tmp/exr/half 'format=exr&exr_compression=zip' 8
# JPEG frames, entropy decoding on the CPU (default) and on the GPU
export BUILD=$B E2E_COLD=0 E2E_CLIENTS=32 E2E_SECONDS=8
for set in q90-444 q85-420; do
	E2E_FRAMES=$P/bench/frames/$set E2E_VARIANT=$set-cpu E2E_OUT=$R/jpeg_e2e.jsonl timeout 60 sh bench/e2e.sh >/dev/null 2>>"$R/jpeg_e2e.txt"
	E2E_FRAMES=$P/bench/frames/$set E2E_VARIANT=$set-gpu E2E_OUT=$R/jpeg_e2e.jsonl timeout 60 sh bench/e2e.sh --jpeg-gpu-entropy-decode >/dev/null 2>>"$R/jpeg_e2e.txt"
done
E2E_SIZE=3840x2160 E2E_FRAMES=$P/bench/frames E2E_VARIANT=2160p-cpu E2E_OUT=$R/jpeg_e2e.jsonl timeout 60 sh bench/e2e.sh >/dev/null 2>>"$R/jpeg_e2e.txt"
E2E_SIZE=3840x2160 E2E_FRAMES=$P/bench/frames E2E_VARIANT=2160p-gpu E2E_OUT=$R/jpeg_e2e.jsonl timeout 60 sh bench/e2e.sh --jpeg-gpu-entropy-decode >/dev/null 2>>"$R/jpeg_e2e.txt"
timeout 90 python3 bench/python_overhead.py --build "$B" >"$R/python_overhead.jsonl" 2>"$R/python_overhead.err"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r && rm -rf "$R"
