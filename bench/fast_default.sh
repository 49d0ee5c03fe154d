#!/bin/sh
# bench/fast_default.sh: issue 20 item 1, "fast by default", measured in one run. Through
# bench/run.sh (one fftbloom process a workload, its JSON result lines), rounds interleaved:
#   (a) no flags, an empty HOME: the built-in rules and the wisdom shipped for this GPU
#       (variant "default"; detail.wisdom names the source, e.g. "file HOME/.cache/fftbloom/
#       fft-wisdom (0 shapes) + shipped for NVIDIA H200/PCIe/SSE2 (32 shapes) + built-in rules")
#   (b) the built-in rules alone (FFTBLOOM_FFT_WISDOM=builtin, empty HOME): "default+builtin"
#   (c) the tuned file (--wisdom, default bench/results/h200/wisdom.txt; a copy, to which the
#       CLI adds any shape it lacks, measured before the workload's runs): "default+wisdom"
# on FFT 1024², 1080x1920, 2048², 4096², 1350x2187 forward and the blooms 1080p k256, 2160p k512
# and 1080p full-frame kernel (fp32); then (d) the first request of a new size against a warm
# fftbloomd with no flags and an empty HOME (bench/e2e.sh's e2e.first.*.new_size: a 1280x720
# frame after a short 1080p load; first vs second request), unless --no-e2e.
#
# usage: sh bench/fast_default.sh [--quick] [--repeat N] [--runs N] [--wisdom FILE]
#                                 [--machine NAME] [--save | --results DIR] [--bin DIR] [--no-e2e]
#   --quick      the --quick workloads (llvmpipe): fft 256², 270x480, 512², bloom 270p k64; e2e at
#                640x360 with a 480x270 new size
#   --repeat N   rounds of (a), (b), (c) in turn (default 3; detail.round)
#   --runs N     timed runs a workload (run.sh's default: 30, 10 with --quick)
#   --save       lines to bench/results/MACHINE/STAMP-fast_default.jsonl, tables to .txt
# Needs: make all (build/fftbloom, build/fftbloomd), and for (d) build/bench/loadgen,
# build/bench/codec_ceiling and bench/frames (make bench-frames); or bench/pack.sh's folder.
# Result lines on stdout; progress and tables on stderr. Exit status 0 when every piece ran.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
quick=0 repeat=3 runs="" wisdom=$root/bench/results/h200/wisdom.txt machine="" save=0 results=""
bin="" e2e=1
need() { [ $# -ge 2 ] || { echo "fast_default.sh: $1 takes a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--repeat) need "$@"; repeat=$2; shift ;;
	--runs) need "$@"; runs=$2; shift ;;
	--wisdom) need "$@"; wisdom=$2; shift ;;
	--machine) need "$@"; machine=$2; shift ;;
	--save) save=1 ;;
	--results) need "$@"; results=$2; save=1; shift ;;
	--bin) need "$@"; bin=$2; shift ;;
	--no-e2e) e2e=0 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
	*) echo "fast_default.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ -r "$wisdom" ] || { echo "fast_default.sh: cannot read the tuned wisdom $wisdom" >&2; exit 1; }
if [ -z "$bin" ]; then
	if [ -x "$root/bin/fftbloom" ]; then bin=$root/bin; else bin=${BUILD:-$root/build}; fi
fi
if [ $quick = 1 ]; then
	ids=fft.2d.256x256.fwd,fft.2d.270x480.fwd,fft.2d.512x512.fwd,bloom.270p.k64.fp32
	qflag=--quick
else
	ids=fft.2d.1024x1024.fwd,fft.2d.1080x1920.fwd,fft.2d.2048x2048.fwd,fft.2d.4096x4096.fwd
	ids=$ids,fft.2d.1350x2187.fwd,bloom.1080p.k256.fp32,bloom.2160p.k512.fp32,bloom.1080p.full.fp32
	qflag=""
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftbloom-fast.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
T0=$(date +%s)
say() { echo "[fast_default.sh $(($(date +%s) - T0)) s] $*" >&2; }
[ -n "$machine" ] || machine=$("$bin/fftbloom" info 2>/dev/null | sed -n 's/.*"renderer": *"\([^"]*\)".*/\1/p' |
	sed 's/.*llvmpipe.*/llvmpipe/; s/^NVIDIA //; s/^AMD //; s/[\/(].*//' | tr 'A-Z' 'a-z' |
	sed 's/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//')
[ -n "$machine" ] || { echo "fast_default.sh: no GPU context (fftbloom info failed); --machine NAME" >&2; exit 1; }
stamp=$(date -u +%Y-%m-%dT%H%M)
out=/dev/null
if [ $save = 1 ]; then
	resdir=${results:-$root/bench/results}/$machine
	mkdir -p "$resdir" || exit 1
	out=$resdir/$stamp-fast_default.jsonl
fi
all=$tmp/all.jsonl
: >"$all"
failed=""
# variant NAME ENV...: one run.sh pass over the workloads with a fresh empty HOME and ENV, its
# lines stamped with the round
variant() {
	name=$1
	shift
	h=$tmp/home-$name-$round
	mkdir -p "$h"
	say "round $round: $name"
	env -u XDG_CACHE_HOME -u CACHE_DIRECTORY -u FFTBLOOM_FFT_WISDOM -u FFTBLOOM_PROGRAM_CACHE \
		HOME="$h" "$@" sh "$here/run.sh" fft,bloom $qflag --only "$ids" --variant default \
		--machine "$machine" --bin "$bin" ${runs:+--runs "$runs"} >"$tmp/lines" ||
		failed="$failed $name@$round"
	sed -e "/\"round\":/!s/\"detail\":{}/\"detail\":{\"round\":$round}/" \
		-e "/\"round\":/!s/\"detail\":{/\"detail\":{\"round\":$round,/" \
		-e "s/\"round\":[0-9]*/\"round\":$round/" "$tmp/lines" | tee -a "$all"
}
cp "$wisdom" "$tmp/tuned-wisdom.txt"
round=0
while [ $round -lt "$repeat" ]; do
	variant shipped
	variant builtin FFTBLOOM_FFT_WISDOM=builtin
	variant tuned FFTBLOOM_FFT_WISDOM="$tmp/tuned-wisdom.txt"
	round=$((round + 1))
done
if [ $e2e = 1 ]; then
	h=$tmp/home-e2e
	mkdir -p "$h"
	say "the first request of a new size on a warm fftbloomd (no flags, empty HOME)"
	if [ $quick = 1 ]; then
		set -- E2E_SIZE=640x360 E2E_NEW_SIZE=480x270 E2E_SECONDS=3
	else
		set -- E2E_SIZE=1920x1080 E2E_NEW_SIZE=1280x720 E2E_SECONDS=5
	fi
	env -u XDG_CACHE_HOME -u CACHE_DIRECTORY -u FFTBLOOM_FFT_WISDOM -u FFTBLOOM_PROGRAM_CACHE \
		HOME="$h" BUILD="$bin" "$@" E2E_CLIENTS=8 E2E_COLD=0 E2E_PLANES=true \
		E2E_VARIANT=fast-default E2E_OUT="$tmp/e2e.jsonl" BENCH_MACHINE="$machine" \
		E2E_FRAMES="${BENCH_FRAMES:-$root/bench/frames}" sh "$here/e2e.sh" >/dev/null ||
		failed="$failed e2e"
	[ -r "$tmp/e2e.jsonl" ] && tee -a "$all" <"$tmp/e2e.jsonl"
fi
# the table: each workload's median per variant, against the tuned file's
[ $save = 1 ] && cp "$all" "$out"
if command -v python3 >/dev/null 2>&1; then
	python3 -c '
import json, sys, statistics
rows = {}
for l in sys.stdin:
    try:
        d = json.loads(l)
    except ValueError:
        continue
    m = d.get("metrics", {})
    v = m.get("ms", m.get("gpu_ms"))
    if v is None:
        continue
    rows.setdefault(d["id"], {}).setdefault(d["variant"], []).append(v)
print("%-28s %12s %12s %12s %8s %8s" % ("workload (median ms)", "default", "+builtin", "+wisdom", "def/tuned", "bi/tuned"))
for i, r in rows.items():
    med = {k: statistics.median(x) for k, x in r.items()}
    a, b, c = med.get("default"), med.get("default+builtin"), med.get("default+wisdom")
    f = lambda x: "%12.4f" % x if x is not None else "%12s" % "-"
    q = lambda x: "%8.2f" % (x / c) if x is not None and c else "%8s" % "-"
    print("%-28s %s %s %s %s %s" % (i, f(a), f(b), f(c), q(a), q(b)))
'  <"$all" >"$tmp/table" || true
	cat "$tmp/table" >&2
	[ $save = 1 ] && cp "$tmp/table" "${out%.jsonl}.txt"
fi
[ $save = 1 ] && say "saved: $out"
say "done${failed:+; failed:$failed}"
[ -z "$failed" ]
