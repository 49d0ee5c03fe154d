#!/bin/bash
# Issue 40 (Deliver 3), conv2d in cuDNN's fp32 class, in one device call (bench/README.md, "On
# another host"): for each of the conv suite's shapes (bench/conv_bench.sh) the old algorithms'
# best, gemm at float32, gemm at precision 2 (float16 values, float32 arithmetic), auto at
# precisions 3 and 2, and cuDNN fp32
# (bench/conv_peer_torch.py, TF32 off) on the same inputs; gemm's outputs checked against PyTorch
# in float64 (rel_l2, max_abs); gemm's GPU tests (test_spatial and test_deconv, filtered: on
# NVIDIA the f16vec2 kernel runs there); and the tile sweep (bench/conv_tiles: every tile of
# spatial_plan_gemm_tiles and the rule's, precision 3 and 2). Summary on stdout, everything in
# $OUT/r.tgz.
# usage (from the repository root, a pack in .carry: make all tests $(BENCH_BINS); sh bench/pack.sh):
#   bash bench/probes/issue40_conv.sh [table|sweep|all]   (default all: under 4 minutes; table and
#                                                          sweep alone about 2 and 1.5)
# REPEAT (default 10): the CLI's --repeat; RUNS (default 5): conv_tiles' timed runs; QUICK=1: the
# suite's quick shapes (a dry run on llvmpipe). The old
# algorithms' best: conv2d's batch4, interp, planes4, shared; for the transposed shapes the
# methods, each on auto's conv algorithm (gemm among its candidates: the conv_algorithm shown).
P=$PWD/.carry
MODE=${1:-all}
set -- "$P"
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
B=$P/bin
W=/tmp/issue40_conv
export PATH=$B:$PATH
py_with() { # PYTHON-CODE: the first python3 that runs it (bench/run.sh's rule)
	for p in ${PYTHON:-} python3 /usr/bin/python3; do
		"$p" -c "$1" >/dev/null 2>&1 && { echo "$p"; return 0; }
	done
	return 1
}
PY=$(py_with 'import numpy, torch') || PY=$(py_with 'import numpy') || PY=python3
export PYTHON=$PY
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
cat "$R/card.txt"
if [ "$MODE" != sweep ]; then
	# gemm's GPU tests first: a wrong kernel makes every timing below moot
	TEST_FILTER='test_gemm*' timeout 60 "$P/tests/gles/test_spatial" >"$R/test_spatial_gemm.txt" 2>&1
	echo "test_spatial (test_gemm*): rc $?" | tee -a "$R/tests.txt"
	TEST_FILTER='test_gemm' timeout 60 "$P/tests/gles/test_deconv" >"$R/test_deconv_gemm.txt" 2>&1
	echo "test_deconv (test_gemm): rc $?" | tee -a "$R/tests.txt"
	grep -h "caps:\|gemm.* L2 \|FAIL" "$R/test_spatial_gemm.txt" | head -20
	REPEAT=${REPEAT:-10} timeout 150 sh bench/conv_bench.sh "$B" "$W" >"$R/conv.jsonl" 2>"$R/conv.err"
	echo "conv_bench.sh: rc $?"
	RUNS=30 timeout 60 "$PY" bench/conv_peer_torch.py "$W" >"$R/peer.jsonl" 2>"$R/peer.err"
	echo "conv_peer_torch.py: rc $?"
	# gemm's outputs (precisions 3 and 2) against PyTorch in float64
	X="$W/conv_x.npy" WT="$W/conv_w.npy"
	fftbloom conv2d --input "$X" --weight "$WT" --padding 1 --algorithm gemm -o "$W/gemm_p3.npy" 2>>"$R/check.err"
	fftbloom conv2d --input "$X" --weight "$WT" --padding 1 --algorithm gemm --precision 2 -o "$W/gemm_p2.npy" 2>>"$R/check.err"
	fftbloom conv2d --input "$X" --weight "$WT" --padding 1 --algorithm winograd -o "$W/wino_p3.npy" 2>>"$R/check.err"
	fftbloom conv2d --input "$X" --weight "$WT" --padding 1 --algorithm winograd --precision 2 -o "$W/wino_p2.npy" 2>>"$R/check.err"
	fftbloom conv2d-transpose --input "$W/deconv_x_k3.npy" --weight "$W/deconv_w_k3.npy" --stride 2 \
		--padding 1 --output-padding 1 --method subkernel --conv-algorithm gemm -o "$W/gemm_dk3.npy" 2>>"$R/check.err"
	timeout 60 "$PY" - "$W" >"$R/check.txt" 2>&1 <<'PY'
import os, sys
import numpy as np
import torch
import torch.nn.functional as F
d = sys.argv[1]
ld = lambda n: torch.from_numpy(np.load(os.path.join(d, n))).double().cuda()
x, w = ld('conv_x.npy'), ld('conv_w.npy')
ref = F.conv2d(x, w, padding=1).cpu().numpy()
dref = F.conv_transpose2d(ld('deconv_x_k3.npy'), ld('deconv_w_k3.npy'), stride=2, padding=1,
                          output_padding=1).cpu().numpy()
for name, r in (('gemm_p3', ref), ('gemm_p2', ref), ('wino_p3', ref), ('wino_p2', ref),
                ('gemm_dk3', dref)):
    p = os.path.join(d, name + '.npy')
    if not os.path.exists(p):
        print('%-9s missing' % name)
        continue
    y = np.load(p).astype(np.float64)
    print('%-9s rel_l2 %.3e  max_abs %.3e  (reference rms %.3e)' % (
        name, np.linalg.norm(y - r) / np.linalg.norm(r), np.abs(y - r).max(), np.sqrt((r * r).mean())))
PY
	cat "$R/check.txt"
	"$PY" - "$R/conv.jsonl" "$R/peer.jsonl" <<'PY' | tee "$R/summary.txt"
import json, sys
ms = {}
for path in sys.argv[1:]:
    for line in open(path):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        v = (d.get('metrics') or {}).get('ms')
        det = d.get('detail') or {}
        if v:
            how = det.get('algorithm') or '%s/%s' % (det.get('method'), det.get('conv_algorithm'))
            ms[(d['id'], d['impl'], d['variant'])] = (v, how)
ids = sorted({k[0] for k in ms})
old = {'conv': ('batch4', 'interp', 'planes4', 'shared'),
       'deconv': ('zero-insert', 'overlap-add', 'subkernel')}
print('%-30s %-22s %9s %9s %9s %9s %9s %9s %9s  %s' % (
    'workload', 'old best', 'ms', 'gemm32', 'gemm-p2', 'winograd', 'auto', 'auto-p2', 'cudnn32',
    'gemm32/cudnn gemm-p2/cudnn wino/cudnn auto/cudnn auto-p2/cudnn'))
for i in ids:
    kind = 'deconv' if '.deconv_' in i else 'conv'
    cand = [(ms[(i, 'fftbloom', a)][0], ms[(i, 'fftbloom', a)][1] if kind == 'deconv' else a)
            for a in old[kind] if (i, 'fftbloom', a) in ms]
    best = min(cand) if cand else (float('nan'), '?')
    g32 = ms.get((i, 'fftbloom', 'subkernel-gemm' if kind == 'deconv' else 'gemm'), (float('nan'),))[0]
    g16 = ms.get((i, 'fftbloom', 'gemm-precision2'), (float('nan'),))[0]
    au = ms.get((i, 'fftbloom', 'auto'), (float('nan'), None))
    ap2 = ms.get((i, 'fftbloom', 'precision2'), (float('nan'), None))
    cu = ms.get((i, 'cudnn', 'fp32'), (float('nan'),))[0]
    wg = ms.get((i, 'fftbloom', 'winograd'), (float('nan'),))[0]
    print('%-30s %-22s %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f  %6.2fx %6.2fx %6.2fx %6.2fx %6.2fx   auto: %s, p2: %s' % (
        i, best[1], best[0], g32, g16, wg, au[0], ap2[0], cu, g32 / cu, g16 / cu, wg / cu,
        au[0] / cu, ap2[0] / cu, au[1], ap2[1]))
PY
fi
if [ "$MODE" != table ]; then
	Q=; [ "${QUICK:-0}" = 1 ] && Q=--quick
	timeout 100 "$B/bench/conv_tiles" $Q --runs "${RUNS:-5}" --warmup 1 >"$R/tiles.jsonl" 2>"$R/tiles.txt"
	echo "conv_tiles: rc $?"
	"$PY" - "$R/tiles.jsonl" <<'PY' | tee "$R/tiles_best.txt"
import json, sys
best = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    v = (d.get('metrics') or {}).get('ms')
    key = (d['id'], d['detail']['precision'])
    if v and (key not in best or v < best[key][0]):
        best[key] = (v, d['variant'], d['detail'].get('tile'))
    if d['variant'].startswith('gemm-t0-'):
        print('%-30s p%d rule   %9.4f ms  tile %s' % (d['id'], d['detail']['precision'], v or -1,
                                                       d['detail'].get('tile')))
for (i, p), (v, var, tile) in sorted(best.items()):
    print('%-30s p%d best   %9.4f ms  %s (%s)' % (i, p, v, var, tile))
PY
fi
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r
