#!/bin/sh
# The spatial and transposed convolution benchmark (issues 15 and 16), fftbloom beside PyTorch
# in one run on the same inputs. usage: sh bench/conv_bench.sh BUILD_DIR [OUT_DIR]
# BUILD_DIR holds the fftbloom binary (the GPU machine: .carry/bin). Workloads (stable IDs):
#   conv2d_b16_c128_k3_128   B=16, 128 -> 128 planes, 3x3, 128x128, padding 1: every algorithm
#                            at precision 3, and auto at precisions 2, 1 and 0
#   image_k5_1080p           a 1920x1080 RGBA image with a gray 5x5 kernel, as conv2d of a
#   image_k15_1080p          (4, 1, 1080, 1920) batch (the image path's direct work: the RGBA
#                            channels are the four lanes of a texel); 15x15 likewise. The FFT
#                            side of the spatial-vs-FFT crossover is `fftbloom convolve`'s.
#   deconv_c64to32_k4s2_256  B=1, 64 -> 32 planes, k4, stride 2, padding 1: 256x256 -> 512x512
#   deconv_c64to32_k3s2_512  k3, stride 2, padding 1, output-padding 1: 512x512 -> 1024x1024
#                            each method (auto, zero-insert, overlap-add, subkernel)
# fftbloom lines: the CLI's --repeat line (median GPU ms of REPEAT runs after one warm-up) with
# workload, variant, machine, commit, date and command added; then bench/conv_peer_torch.py's
# lines (cuDNN conv2d with TF32 off and on, conv_transpose2d; CUDA events), which also compare
# fftbloom's float32 outputs with PyTorch's float64. All on stdout as JSON lines; inputs and
# outputs in OUT_DIR (default /tmp/conv_bench). QUICK=1 shrinks the shapes (tries the script on
# llvmpipe); REPEAT (default 20).
set -eu
BIN=${1:?usage: sh bench/conv_bench.sh BUILD_DIR [OUT_DIR]}
OUT=${2:-/tmp/conv_bench}
FB="$BIN/fftbloom"
REPEAT=${REPEAT:-20}
QUICK=${QUICK:-0}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
MACHINE=$(hostname 2>/dev/null || cat /etc/hostname 2>/dev/null || echo unknown)
HERE=$(dirname "$0")

# inputs: the same files for fftbloom and the peer
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

# run WORKLOAD VARIANT SUBCOMMAND ARGS...: one fftbloom line
run() {
	id=$1 variant=$2
	shift 2
	line=$("$FB" "$@" --repeat "$REPEAT" 2>&1 >/dev/null | tail -1)
	WL=$id VAR=$variant CMD="fftbloom $*" MACHINE=$MACHINE COMMIT=$COMMIT DATE=$DATE \
		"$PY" -c '
import json, os, sys
line = sys.argv[1]
try:
    d = json.loads(line)
except ValueError:
    d = {"error": line}
d = dict(workload=os.environ["WL"], variant=os.environ["VAR"], peer="fftbloom",
         machine=os.environ["MACHINE"], commit=os.environ["COMMIT"], date=os.environ["DATE"],
         command=os.environ["CMD"], **d)
print(json.dumps(d))' "$line"
}

X="$OUT/conv_x.npy" W="$OUT/conv_w.npy"
ID=conv2d_b16_c128_k3_128
run $ID auto conv2d --input "$X" --weight "$W" --padding 1 -o "$OUT/out_$ID.npy"
for a in batch4 interp planes4 shared; do
	run $ID "$a" conv2d --input "$X" --weight "$W" --padding 1 --algorithm $a -o "$OUT/y.npy"
done
for p in 2 1 0; do
	run $ID "auto-precision$p" conv2d --input "$X" --weight "$W" --padding 1 --precision $p \
		-o "$OUT/y.npy"
done
for k in 5 15; do
	ID=image_k${k}_1080p
	run $ID auto conv2d --input "$OUT/image_x.npy" --weight "$OUT/image_w$k.npy" \
		--padding $((k / 2)) -o "$OUT/out_$ID.npy"
	for a in batch4 interp planes4 shared; do
		run $ID "$a" conv2d --input "$OUT/image_x.npy" --weight "$OUT/image_w$k.npy" \
			--padding $((k / 2)) --algorithm $a -o "$OUT/y.npy"
	done
done
for k in 4 3; do
	if [ $k = 4 ]; then ID=deconv_c64to32_k4s2_256 OP=0; else ID=deconv_c64to32_k3s2_512 OP=1; fi
	run $ID auto conv2d-transpose --input "$OUT/deconv_x_k$k.npy" --weight "$OUT/deconv_w_k$k.npy" \
		--stride 2 --padding 1 --output-padding $OP -o "$OUT/out_$ID.npy"
	for m in zero-insert overlap-add subkernel; do
		run $ID "$m" conv2d-transpose --input "$OUT/deconv_x_k$k.npy" \
			--weight "$OUT/deconv_w_k$k.npy" --stride 2 --padding 1 --output-padding $OP \
			--method $m -o "$OUT/y.npy"
	done
done
if "$PY" -c 'import torch' 2>/dev/null; then
	"$PY" "$HERE/conv_peer_torch.py" "$OUT"
else
	echo '{"peer": "torch", "error": "no torch here"}'
fi
