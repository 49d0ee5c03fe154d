#!/bin/sh
# The conv suite's runner (bench/run.sh conv calls it): fftbloom's spatial and transposed
# convolution (issues 15 and 16) on fixed shapes, one result line (bench/README.md) per workload
# and variant on stdout. usage: sh bench/conv_bench.sh BIN_DIR [OUT_DIR]
# BIN_DIR holds the fftbloom binary (build, or a packed folder's bin). The inputs (written here
# with numpy, seeded) and fftbloom's outputs stay in OUT_DIR (default /tmp/conv_bench), where the
# peer (bench/conv_peer_torch.py, run by the peers suite) times cuDNN on the same inputs and
# checks fftbloom's outputs against PyTorch in float64. Workloads (IDs from their shapes):
#   conv.conv2d_b16_c128_k3_128   B=16, 128 -> 128 planes, 3x3, 128x128, padding 1: every
#                                 algorithm at precision 3 (variants auto, batch4, interp,
#                                 planes4, shared, gemm, winograd), auto at precisions 2, 1, 0
#                                 (precision2..0) and gemm at precision 2 (gemm-precision2:
#                                 float16 values, float32 arithmetic; bench/conv_tiles has
#                                 the packed float16 kernel) and winograd at precision 2
#                                 (winograd-precision2)
#   conv.image_k5_1080p           a 1920x1080 RGBA image with a gray 5x5 kernel, as conv2d of a
#   conv.image_k15_1080p          (4, 1, 1080, 1920) batch (the RGBA channels are the four lanes
#                                 of a texel); 15x15 likewise; variants auto, the five
#                                 algorithms and gemm-precision2
#   conv.deconv_c64to32_k4s2_256  B=1, 64 -> 32 planes, k4, stride 2, padding 1: 256 -> 512
#   conv.deconv_c64to32_k3s2_512  k3, stride 2, padding 1, output padding 1: 512 -> 1024; each
#                                 method (variants auto, zero-insert, overlap-add, subkernel)
#                                 and subkernel on gemm (subkernel-gemm)
# Each line: the CLI's --repeat figures (median GPU ms of REPEAT runs after one warm-up: the
# GPU's work without the transfers) as metrics, its JSON line as detail. QUICK=1 shrinks the
# shapes (IDs follow: conv.conv2d_b4_c8_k3_16, ...) for llvmpipe; REPEAT (default 20);
# INPUTS_ONLY=1 writes the inputs and stops (the peers suite, when no conv run made them).
# BENCH_MACHINE names the machine (default: from the renderer).
set -eu
BIN=${1:?usage: sh bench/conv_bench.sh BIN_DIR [OUT_DIR]}
OUT=${2:-/tmp/conv_bench}
FB="$BIN/fftbloom"
REPEAT=${REPEAT:-20}
QUICK=${QUICK:-0}
PY=${PYTHON:-python3}
HERE=$(dirname "$0")
mkdir -p "$OUT"

# inputs: the same files for fftbloom and the peer; their IDs in $OUT/ids
QUICK=$QUICK "$PY" - "$OUT" <<'PY'
import os, sys
import numpy as np
out, quick = sys.argv[1], os.environ.get('QUICK') == '1'
rng = np.random.default_rng(1)
def save(name, shape, scale=1.0):
    np.save(os.path.join(out, name), (rng.uniform(-1, 1, shape) * scale).astype(np.float32))
b, c, s = (4, 8, 16) if quick else (16, 128, 128)
save('conv_x.npy', (b, c, s, s))
save('conv_w.npy', (c, c, 3, 3), 1 / np.sqrt(9 * c))
h, w = (54, 96) if quick else (1080, 1920)
np.save(os.path.join(out, 'image_x.npy'), rng.uniform(0, 1, (4, 1, h, w)).astype(np.float32))
for k in (5, 15):
    np.save(os.path.join(out, 'image_w%d.npy' % k), np.full((1, 1, k, k), 1 / k / k, np.float32))
ci, co = (8, 4) if quick else (64, 32)
for k, s in ((4, 256), (3, 512)):
    s = s // 16 if quick else s
    save('deconv_x_k%d.npy' % k, (1, ci, s, s))
    save('deconv_w_k%d.npy' % k, (ci, co, k, k), 1 / np.sqrt(ci * k * k))
PY
ID_CONV=$("$PY" "$HERE/conv_peer_torch.py" --ids "$OUT" conv)
ID_IMG5=$("$PY" "$HERE/conv_peer_torch.py" --ids "$OUT" image5)
ID_IMG15=$("$PY" "$HERE/conv_peer_torch.py" --ids "$OUT" image15)
ID_DK4=$("$PY" "$HERE/conv_peer_torch.py" --ids "$OUT" deconv4)
ID_DK3=$("$PY" "$HERE/conv_peer_torch.py" --ids "$OUT" deconv3)
[ "${INPUTS_ONLY:-0}" = 1 ] && exit 0
FFTBLOOM_COMMIT=$("$FB" --version | sed -n 's/^fftbloom .*(commit \(.*\))$/\1/p')
INFO=$("$FB" info)
export FFTBLOOM_COMMIT INFO

# run WORKLOAD VARIANT SUBCOMMAND ARGS...: one result line
run() {
	id=$1 variant=$2
	shift 2
	line=$("$FB" "$@" --repeat "$REPEAT" 2>&1 >/dev/null | tail -1)
	WL=$id VAR=$variant CMD="fftbloom $*" "$PY" -c '
import json, os, shlex, sys
sys.path.insert(0, sys.argv[2])
from benchline import Lines
info = json.loads(os.environ["INFO"])
out = Lines("conv", info.get("renderer", ""), info.get("version", ""))
out.command = os.environ["CMD"]
try:
    d = json.loads(sys.argv[1])
    metrics = {"ms": d.get("gpu_ms"), "wall_ms": d.get("wall_ms")}
    if "conv_ms" in d:
        metrics["conv_ms"] = d["conv_ms"]
except ValueError:
    d, metrics = {"error": sys.argv[1]}, {"ms": None}
out.emit(os.environ["WL"], "fftbloom", os.environ["VAR"], metrics, d)' "$line" "$HERE"
}

X="$OUT/conv_x.npy" W="$OUT/conv_w.npy"
run "$ID_CONV" auto conv2d --input "$X" --weight "$W" --padding 1 -o "$OUT/out_$ID_CONV.npy"
for a in batch4 interp planes4 shared gemm winograd; do
	run "$ID_CONV" "$a" conv2d --input "$X" --weight "$W" --padding 1 --algorithm $a -o "$OUT/y.npy"
done
for p in 2 1 0; do
	run "$ID_CONV" "precision$p" conv2d --input "$X" --weight "$W" --padding 1 --precision $p \
		-o "$OUT/y.npy"
done
run "$ID_CONV" gemm-precision2 conv2d --input "$X" --weight "$W" --padding 1 --precision 2 \
	--algorithm gemm -o "$OUT/y.npy"
run "$ID_CONV" winograd-precision2 conv2d --input "$X" --weight "$W" --padding 1 --precision 2 \
	--algorithm winograd -o "$OUT/y.npy"
for k in 5 15; do
	if [ $k = 5 ]; then ID=$ID_IMG5; else ID=$ID_IMG15; fi
	run "$ID" auto conv2d --input "$OUT/image_x.npy" --weight "$OUT/image_w$k.npy" \
		--padding $((k / 2)) -o "$OUT/out_$ID.npy"
	for a in batch4 interp planes4 shared gemm; do
		run "$ID" "$a" conv2d --input "$OUT/image_x.npy" --weight "$OUT/image_w$k.npy" \
			--padding $((k / 2)) --algorithm $a -o "$OUT/y.npy"
	done
	run "$ID" gemm-precision2 conv2d --input "$OUT/image_x.npy" --weight "$OUT/image_w$k.npy" \
		--padding $((k / 2)) --precision 2 --algorithm gemm -o "$OUT/y.npy"
done
for k in 4 3; do
	if [ $k = 4 ]; then ID=$ID_DK4 OP=0; else ID=$ID_DK3 OP=1; fi
	run "$ID" auto conv2d-transpose --input "$OUT/deconv_x_k$k.npy" --weight "$OUT/deconv_w_k$k.npy" \
		--stride 2 --padding 1 --output-padding $OP -o "$OUT/out_$ID.npy"
	for m in zero-insert overlap-add subkernel; do
		run "$ID" "$m" conv2d-transpose --input "$OUT/deconv_x_k$k.npy" \
			--weight "$OUT/deconv_w_k$k.npy" --stride 2 --padding 1 --output-padding $OP \
			--method $m -o "$OUT/y.npy"
	done
	run "$ID" subkernel-gemm conv2d-transpose --input "$OUT/deconv_x_k$k.npy" \
		--weight "$OUT/deconv_w_k$k.npy" --stride 2 --padding 1 --output-padding $OP \
		--method subkernel --conv-algorithm gemm -o "$OUT/y.npy"
done
