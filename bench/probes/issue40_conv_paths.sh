#!/bin/bash
# Issue 40 (Deliver 3): does an explicitly chosen conv algorithm run what `auto` runs when it picks
# the same one? One device call under 2 minutes (bench/README.md, "On another host"). For the
# conv suite's conv2d shapes (bench/conv_bench.sh: B16 128->128 3x3 128², the 1080p 4-image
# batch with a 5x5 and a 15x15 kernel) each path in a process of its own, as the harness runs
# them: auto, then every algorithm asked for explicitly, at precision 3 (and auto and gemm at
# precision 2 for the B16 shape), the CLI's median of REPEAT runs. Per path: the algorithm that
# ran, gpu ms (pack + conv), conv ms (the convolution alone: it writes the output buffer), pack
# ms (texture algorithms: reads the input buffer) and wall ms. Explicit = auto means the paths
# are one; an explicit conv stage that grows with the output's bytes and not with the kernel
# (gemm: K = 25 or 225 alike) means the output buffer lives in host memory.
# With a baseline in the pack (BASELINE=<its build folder> sh bench/pack.sh) auto, batch4 and gemm
# run on it first, in the same call on the same card: a build of a030a6a shows the gap before the
# fixes (the output mapped for reading, host-written buffers), one of ddb60fa isolates the last
# one (the shaders' buffers as immutable storage without map flags). Then bench/conv_tiles times precision 2's gemm
# tiles on the B16 shape (tile 12: A as halves) beside tile 1 at precision 3.
# usage (from the repository root, a pack in .carry: make all tests; [BASELINE=...] sh bench/pack.sh):
#   bash bench/probes/issue40_conv_paths.sh      REPEAT (default 5); BUDGET (default 95): seconds
#                                                after which the remaining rows are skipped (and
#                                                said so); QUICK=1: the suite's quick shapes (a
#                                                dry run on llvmpipe)
# Summary on stdout and in $OUT/r/summary.txt; each run's JSON line in $OUT/r/paths.jsonl.
P=${PACK:-$PWD/.carry}
set -- "$P"
[ -f "$P/bench/remote_env.sh" ] && . "$P/bench/remote_env.sh" "$P" >&2
R=${OUT:-/tmp}/r; mkdir -p "$R"
W=/tmp/issue40_conv_paths
REPEAT=${REPEAT:-5}
py_with() { # PYTHON-CODE: the first python3 that runs it (bench/run.sh's rule)
	for p in ${PYTHON:-} python3 /usr/bin/python3; do
		"$p" -c "$1" >/dev/null 2>&1 && { echo "$p"; return 0; }
	done
	return 1
}
PY=$(py_with 'import numpy') || { echo "no python3 with numpy" >&2; exit 1; }
export PYTHON=$PY
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
cat "$R/card.txt"
INPUTS_ONLY=1 QUICK=${QUICK:-0} sh "$P/bench/conv_bench.sh" "$P/bin" "$W" || exit 1
X="$W/conv_x.npy" WT="$W/conv_w.npy" IX="$W/image_x.npy"
: >"$R/paths.jsonl"
# one FB BUILD SHAPE VARIANT ARGS...: one process, its JSON line tagged
one() {
	fb=$1 build=$2 shape=$3 variant=$4
	shift 4
	if [ "$SECONDS" -gt "${BUDGET:-95}" ]; then # the tile sweep and the packing still fit 2 minutes
		printf '%s\t%s\t%s\t%s\n' "$build" "$shape" "$variant" "skipped: past ${BUDGET:-95} s" >>"$R/paths.jsonl"
		return
	fi
	line=$(timeout 20 "$fb" conv2d "$@" --engine gpu --repeat "$REPEAT" -o "$W/y.npy" 2>&1 >/dev/null | tail -1)
	printf '%s\t%s\t%s\t%s\n' "$build" "$shape" "$variant" "$line" >>"$R/paths.jsonl"
}
# rows FB BUILD ALL: every path (ALL 1) or auto, batch4 and gemm only (the baseline's rows)
rows() {
	fb=$1 name=$2 all=$3
	algs="batch4 gemm"
	[ "$all" = 1 ] && algs="batch4 interp planes4 shared gemm"
	one "$fb" "$name" conv2d_b16 auto --input "$X" --weight "$WT" --padding 1
	for a in $algs; do
		one "$fb" "$name" conv2d_b16 "$a" --input "$X" --weight "$WT" --padding 1 --algorithm $a
	done
	one "$fb" "$name" conv2d_b16 auto-p2 --input "$X" --weight "$WT" --padding 1 --precision 2
	one "$fb" "$name" conv2d_b16 gemm-p2 --input "$X" --weight "$WT" --padding 1 --precision 2 \
		--algorithm gemm
	for k in 5 15; do
		[ "$all" = 1 ] || [ $k = 5 ] || continue
		one "$fb" "$name" image_k$k auto --input "$IX" --weight "$W/image_w$k.npy" --padding $((k / 2))
		for a in $algs; do
			one "$fb" "$name" image_k$k "$a" --input "$IX" --weight "$W/image_w$k.npy" \
				--padding $((k / 2)) --algorithm $a
		done
	done
}
[ -x "$P/baseline/fftbloom" ] && rows "$P/baseline/fftbloom" "baseline-$(cat "$P/baseline/COMMIT" 2>/dev/null)" 0
rows "$P/bin/fftbloom" current 1
"$PY" - "$R/paths.jsonl" <<'PY' | tee "$R/summary.txt"
import json, sys
rows = {}
print('%-22s %-11s %-9s %-8s %9s %9s %9s %9s  %s' % ('build', 'shape', 'path', 'ran', 'gpu_ms',
                                                      'conv_ms', 'pack_ms', 'wall_ms', 'vs auto'))
for line in open(sys.argv[1]):
    build, shape, variant, js = line.rstrip('\n').split('\t', 3)
    try:
        d = json.loads(js)
    except ValueError:
        print('%-22s %-11s %-9s %s' % (build[:22], shape, variant,
                                        js[:80] if js.startswith('skipped') else 'failed: ' + js[:80]))
        continue
    g, c, w = d.get('gpu_ms', float('nan')), d.get('conv_ms', float('nan')), d.get('wall_ms', 0)
    auto_key = (build, shape, 'auto-p2' if variant.endswith('-p2') else 'auto')
    rows[(build, shape, variant)] = (d.get('algorithm'), g)
    ref = rows.get(auto_key)
    rel = ''
    if ref and ref[1] > 0 and variant not in ('auto', 'auto-p2'):
        rel = '%.2fx%s' % (g / ref[1], ' (auto ran this one)' if ref[0] == d.get('algorithm') else '')
    print('%-22s %-11s %-9s %-8s %9.4f %9.4f %9.4f %9.2f  %s' % (
        build[:22], shape, variant, d.get('algorithm'), g, c, g - c, w, rel))
PY
# precision 2's gemm tiles on the B16 shape: the rule's (1), BK 16 (10: half the float16-to-float32
# flushes), 128-invocation groups (2, 3: more groups an SM under the register budget), and A as
# halves on tiles 1, 2 and 10 (12, 13, 14), beside tile 1 at precision 3
Q=; [ "${QUICK:-0}" = 1 ] && Q=--quick
timeout 40 "$P/bin/bench/conv_tiles" $Q --only 'conv.conv2d_*' --runs 5 --warmup 1 --precision 2 \
	--tiles 1,2,3,10,12,13,14 >"$R/tiles.jsonl" 2>"$R/tiles.txt"
timeout 15 "$P/bin/bench/conv_tiles" $Q --only 'conv.conv2d_*' --runs 5 --warmup 1 --precision 3 \
	--tiles 1 >>"$R/tiles.jsonl" 2>>"$R/tiles.txt"
grep -h "gemm-t" "$R/tiles.txt"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r
