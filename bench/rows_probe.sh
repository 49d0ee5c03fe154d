#!/bin/sh
# bench/rows_probe.sh: issue 20 item 2, the rows' time taken apart. The FFT suite's row
# transforms (shared memory, one dispatch) timed with one part of their program left out at a
# time (fftbloom bench --fft-probe, gles/fft.h enum fft_probe), and with other invocation
# counts per row, each variant in a process of its own, rounds interleaved. What each leaves:
#   probe 0  the transform (the product)
#   probe 1  the loads and stores alone, the same work groups: the memory traffic's time
#   probe 2  loads, shared-memory exchanges and stores, no butterflies or twiddles
#   probe 3  every butterfly and exchange, twiddles without sin and cos
#   probe 4  every butterfly and exchange, no barriers (wrong results; the barriers' cost)
#   probe 5  twiddles as powers of one sin and cos a butterfly (a candidate: correct)
#   t/2, 2t  the product with half / twice the rule's invocations a row (registers and
#            occupancy: fewer invocations hold more values each)
# Only rows_ms of each line is read for the table; the lines keep the rest.
#
# usage: sh bench/rows_probe.sh [--repeat N] [--runs N] [--quick] [--out FILE] [--bin DIR]
#   --repeat N   rounds (default 2); --runs N timed runs a workload (default 30)
#   --quick      the --quick sizes (llvmpipe): 256², 270x480, 512²
#   --out FILE   the JSON lines (default: stdout only)
# Needs build/fftbloom (or bench/pack.sh's folder: bin/fftbloom). Table on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
repeat=2 runs=30 quick=0 out="" bin=""
need() { [ $# -ge 2 ] || { echo "rows_probe.sh: $1 takes a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	--repeat) need "$@"; repeat=$2; shift ;;
	--runs) need "$@"; runs=$2; shift ;;
	--quick) quick=1 ;;
	--out) need "$@"; out=$2; shift ;;
	--bin) need "$@"; bin=$2; shift ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
	*) echo "rows_probe.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "$bin" ]; then
	if [ -x "$root/bin/fftbloom" ]; then bin=$root/bin; else bin=${BUILD:-$root/build}; fi
fi
[ -x "$bin/fftbloom" ] || { echo "rows_probe.sh: no $bin/fftbloom (make all)" >&2; exit 1; }
if [ $quick = 1 ]; then
	ids=fft.2d.256x256.fwd,fft.2d.270x480.fwd,fft.2d.512x512.fwd qflag=--quick
	sizes="256x256 270x480 512x512"
else
	ids=fft.2d.1024x1024.fwd,fft.2d.1080x1920.fwd,fft.2d.2048x2048.fwd,fft.2d.4096x4096.fwd
	ids=$ids,fft.2d.1350x2187.fwd qflag=""
	sizes="1024x1024 1080x1920 2048x2048 4096x4096 1350x2187"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftbloom-rows.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
all=$tmp/all.jsonl
: >"$all"
# The rule's invocations a row at each size, for t/2 and 2t: read off a probe-0 line's plan is
# not printed, so they are given per variant as --fft-threads over every size of the run:
# 128/512 around 256 (rows <= 2048), 256/1024 around 512 (longer rows).
run() { # NAME ARGS...: one process over the sizes
	name=$1
	shift
	"$bin/fftbloom" bench --suite fft $qflag --only "$ids" --variant default --runs "$runs" \
		--warmup 5 --warm-seconds 1 "$@" 2>"$tmp/err" |
		sed "s/\"round\": *[0-9]*/\"round\": $round/; s/}\$/, \"probe_variant\": \"$name\"}/" >>"$all" ||
		{ echo "rows_probe.sh: $name failed:" >&2; cat "$tmp/err" >&2; }
	grep -v '^warm-up' "$tmp/err" | sed "s/^/[$name] /" >&2
}
round=0
while [ $round -lt "$repeat" ]; do
	for p in 0 1 2 3 4 5; do run "probe$p" --fft-probe $p; done
	run t128 --fft-threads 128
	run t256 --fft-threads 256
	run t512 --fft-threads 512
	run t1024 --fft-threads 1024
	round=$((round + 1))
done
[ -n "$out" ] && cp "$all" "$out"
cat "$all"
python3 - "$all" "$sizes" >&2 <<'EOF'
import json, sys, statistics
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith('{')]
sizes = sys.argv[2].split()
by = {}
for l in lines:
    v = l.get('probe_variant')
    size = l.get('detail', {}).get('size')
    ms = l.get('metrics', {}).get('rows_ms')
    if v and size and ms is not None:
        by.setdefault((v, size), []).append(ms)
variants = ['probe0', 'probe1', 'probe2', 'probe3', 'probe4', 'probe5', 't128', 't256', 't512', 't1024']
print('rows_ms, median of the rounds (min-max); copy rate: one read + write of the complex64 rows')
print('| variant | ' + ' | '.join(sizes) + ' |')
print('|---|' + '---|' * len(sizes))
for v in variants:
    cells = []
    for s in sizes:
        xs = by.get((v, s))
        cells.append('%.4f (%.4f-%.4f)' % (statistics.median(xs), min(xs), max(xs)) if xs else '-')
    print('| %s | %s |' % (v, ' | '.join(cells)))
EOF
