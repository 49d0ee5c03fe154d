#!/bin/sh
# bench/fft_shapes.sh: issue 20 item 2, the FFT suite's axes in shapes the rule and the tuner do
# not choose, each against the product's (the rule and shipped wisdom) in the same rounds. A
# shape is fftbloom bench's --fft-rows / --fft-cols TECHNIQUE:THREADS:SIGNALS:SPLIT (SPLIT 1:
# vec2 exchanged through shared memory in two float rounds, half the shared memory a group, so
# that four 2048-long or eight 1350-long columns fit one group and a column runs in one pass).
# Each line of the list runs in a process of its own; rounds interleave the whole list.
#
# usage: sh bench/fft_shapes.sh [--repeat N] [--runs N] [--list FILE] [--out FILE] [--bin DIR]
#   --repeat N   rounds (default 2); --runs N timed runs a workload (default 30)
#   --list FILE  lines "HxW NAME ROWS COLS" (ROWS, COLS: a shape or -), instead of the built-in
#                list below; any size (fftbloom bench --fft-size)
#   --out FILE   the JSON lines (default: stdout only)
# Needs build/fftbloom (or bench/pack.sh's folder: bin/fftbloom). Table on stderr: forward ms,
# rows_ms and cols_ms, median of the rounds (min-max).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
repeat=2 runs=30 list="" out="" bin=""
need() { [ $# -ge 2 ] || { echo "fft_shapes.sh: $1 takes a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	--repeat) need "$@"; repeat=$2; shift ;;
	--runs) need "$@"; runs=$2; shift ;;
	--list) need "$@"; list=$2; shift ;;
	--out) need "$@"; out=$2; shift ;;
	--bin) need "$@"; bin=$2; shift ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
	*) echo "fft_shapes.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "$bin" ]; then
	if [ -x "$root/bin/fftbloom" ]; then bin=$root/bin; else bin=${BUILD:-$root/build}; fi
fi
[ -x "$bin/fftbloom" ] || { echo "fft_shapes.sh: no $bin/fftbloom (make all)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftbloom-shapes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
if [ -z "$list" ]; then
	list=$tmp/list
	# HxW (h rows of w: rows are w long, columns h) NAME ROWS COLS
	cat >"$list" <<'EOF'
1024x1024 product - -
1024x1024 c128x8s - shared:128:8:1
1024x1024 c256x4s - shared:256:4:1
1024x1024 r256s shared:256:0:1 -
1024x1024 r128x2 shared:128:2:0 -
1080x1920 product - -
1080x1920 c128x8s - shared:128:8:1
1080x1920 c256x4s - shared:256:4:1
1080x1920 c256x4 - shared:256:4:0
1080x1920 r256s shared:256:0:1 -
1080x1920 r128x2 shared:128:2:0 -
2048x2048 product - -
2048x2048 c256x4s - shared:256:4:1
2048x2048 c128x4s - shared:128:4:1
2048x2048 c256x2 - shared:256:2:0
2048x2048 r256s shared:256:0:1 -
4096x4096 product - -
4096x4096 c512x2s - shared:512:2:1
4096x4096 c256x2s - shared:256:2:1
4096x4096 r512s shared:512:0:1 -
4096x4096 r256s shared:256:0:1 -
1350x2187 product - -
1350x2187 c128x8s - shared:128:8:1
1350x2187 c256x4s - shared:256:4:1
1350x2187 c256x4 - shared:256:4:0
1350x2187 r512s shared:512:0:1 -
EOF
fi
all=$tmp/all.jsonl
: >"$all"
run() { # SIZE NAME ROWS COLS: one process
	size=$1 name=$2 args=""
	[ "$3" != - ] && args="--fft-rows $3"
	[ "$4" != - ] && args="$args --fft-cols $4"
	if "$bin/fftbloom" bench --fft-size "$size" --runs "$runs" --warmup 5 --warm-seconds 1 \
		$args >"$tmp/out" 2>"$tmp/err"; then
		sed "s/\"round\": *[0-9]*/\"round\": $round/; s/}\$/, \"shape\": \"$name\"}/" \
			"$tmp/out" >>"$all"
	else
		echo "fft_shapes.sh: $size $name failed:" >&2
		cat "$tmp/err" >&2
	fi
	grep -v '^warm-up' "$tmp/err" | sed "s/^/[$size $name] /" >&2
}
round=0
while [ $round -lt "$repeat" ]; do
	while read -r size name rows cols; do
		case $size in '' | '#'*) continue ;; esac
		run "$size" "$name" "$rows" "$cols" </dev/null
	done <"$list"
	round=$((round + 1))
done
[ -n "$out" ] && cp "$all" "$out"
cat "$all"
python3 - "$all" >&2 <<'EOF'
import json, sys, statistics
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith('{')]
by, order = {}, []
for l in lines:
    key = (l.get('detail', {}).get('size'), l.get('shape'))
    if key not in by:
        order.append(key)
    by.setdefault(key, []).append(l.get('metrics', {}))
def cell(ms, k):
    xs = [m[k] for m in ms if m.get(k) is not None]
    return '%.4f (%.4f-%.4f)' % (statistics.median(xs), min(xs), max(xs)) if xs else '-'
print('| size (h x w) | shape | forward ms | rows_ms | cols_ms |')
print('|---|---|---|---|---|')
for key in order:
    ms = by[key]
    print('| %s | %s | %s | %s | %s |' % (key[0], key[1], cell(ms, 'ms'), cell(ms, 'rows_ms'),
                                          cell(ms, 'cols_ms')))
EOF
