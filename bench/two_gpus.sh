#!/bin/sh
# Issue 21's run: on a host with two GPUs, in one run, 1080p JPEG blooms under 8, 32 and 64
# clients served by (a) one daemon on GPU 0, (b) one daemon with --gpus all, (c) one daemon per GPU
# behind one port (--reuse-port: the kernel spreads connections over the two processes), each
# with the defaults of the build; the GPU threads' busy fraction per GPU; the host's codec ceiling.
# (a) and (b) are bench/e2e.sh's load runs (variants gpus-0, gpus-all); (c) is run here: loadgen
# on the shared port, and each daemon's busy seconds from /v1/info (its gpus[].device says which
# process answered) before and after.
#
# usage: sh bench/two_gpus.sh [RESULTS_DIR]     (default build/bench/two-gpus)
#   BUILD (binaries, default build), E2E_FRAMES, E2E_SECONDS (default 10), E2E_CLIENTS; on a
#   packed GPU host: . .carry/bench/remote_env.sh .carry; BUILD=.carry/bin sh .carry/bench/two_gpus.sh $OUT
# Result lines: RESULTS_DIR/e2e-gpus-0.jsonl, e2e-gpus-all.jsonl, e2e-two-procs.jsonl (suite e2e,
# variant two-procs, metrics rps, p50_ms, p99_ms, gpu_busy_fraction per device, queue medians).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build}
OUTDIR=${1:-$BUILD/bench/two-gpus}
export E2E_SECONDS=${E2E_SECONDS:-10}
export E2E_CLIENTS=${E2E_CLIENTS:-8 32 64}
export E2E_FRAMES=${E2E_FRAMES:-${BENCH_FRAMES:-bench/frames}}
export BUILD
mkdir -p "$OUTDIR"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l || echo 0)
[ "$ngpu" -ge 2 ] || { echo "two_gpus.sh: needs two GPUs (nvidia-smi lists $ngpu)" >&2; exit 1; }
cores=$(nproc)

E2E_COLD=0 E2E_VARIANT=gpus-0 E2E_OUT=$OUTDIR/e2e-gpus-0.jsonl sh "$here/e2e.sh" --gpus 0
E2E_COLD=0 E2E_VARIANT=gpus-all E2E_OUT=$OUTDIR/e2e-gpus-all.jsonl sh "$here/e2e.sh" --gpus all

# (c) one daemon per GPU on one port, the cores split between them
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftbloom-2gpu.XXXXXX")
pids=""
cleanup() { for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
for g in 0 1; do
	"$BUILD/fftbloomd" --gpus "$g" --reuse-port --listen 127.0.0.1 --port "$port" \
		--queue-size 256 --max-per-ip 0 --drain-timeout 5 --codec-threads $((cores / 2)) \
		--program-cache "$tmp/programs-$g" >"$tmp/d$g.log" 2>&1 &
	pids="$pids $!"
done
for g in 0 1; do
	i=0
	until grep -q 'listening on' "$tmp/d$g.log"; do
		i=$((i + 1)); [ $i -lt 3000 ] || { cat "$tmp/d$g.log" >&2; exit 1; }; sleep 0.1
	done
done
# the GPU and driver, from daemon 0's log as bench/e2e.sh reads them
renderer=$(sed -n "s/.*gpu 0: '\([^']*\)'.*/\1/p" "$tmp/d0.log" | head -n 1)
gldriver=$(sed -n "s/.*gpu 0: '[^']*' (\(.*\)) on .*/\1/p" "$tmp/d0.log" | head -n 1)
machine=${BENCH_MACHINE:-$(echo "$renderer" | sed 's/^NVIDIA //; s/[\/(].*//' | tr 'A-Z' 'a-z' | tr -cd 'a-z0-9')x2}
frames=$(ls "$E2E_FRAMES/1920x1080"/*.jpg)
fargs=""; for f in $frames; do fargs="$fargs -f $f"; done
url="http://127.0.0.1:$port/v1/bloom?kernel_preset=gaussian:sigma=8&format=jpeg"
# per_device FIELD: {device: FIELD} from /v1/info, asked on new connections until both processes
# (the kernel spreads connections by their addresses) have answered; {} when one never did
per_device() {
	python3 - "$port" "$1" <<'EOF'
import json, sys, urllib.request
seen = {}
for _ in range(200):
    d = json.load(urllib.request.urlopen("http://127.0.0.1:%s/v1/info" % sys.argv[1], timeout=10))
    for g in d["gpus"]:
        seen[g["device"]] = g[sys.argv[2]]
    if len(seen) == 2:
        break
print(json.dumps(seen if len(seen) == 2 else {}))
EOF
}
# warm both processes until each has run jobs (its first job compiles programs, which must not
# fall in a measured window)
w=0
until per_device jobs | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(not d or min(d.values()) < 32)'; do
	w=$((w + 1)); [ $w -le 20 ] || { echo "two_gpus.sh: warm-up did not reach both daemons" >&2; exit 1; }
	"$BUILD/bench/loadgen" -c 16 -d 300 -n 128 -t 120 -u "$url" $fargs >/dev/null 2>&1 || true
done
busy() { per_device busy_s; }
: >"$OUTDIR/e2e-two-procs.jsonl"
for c in $E2E_CLIENTS; do
	b0=$(busy)
	t0=$(date +%s.%N)
	out=$("$BUILD/bench/loadgen" -c "$c" -d "$E2E_SECONDS" -t 120 -u "$url" $fargs --json \
		--id "e2e.jpeg.1080p.c$c" --variant two-procs --suite e2e \
		--machine "$machine" --gpu "$renderer" --driver "$gldriver" \
		--command "2x fftbloomd --gpus N --reuse-port --codec-threads $((cores / 2)); loadgen -c $c -d $E2E_SECONDS")
	t1=$(date +%s.%N)
	b1=$(busy)
	python3 - "$b0" "$b1" "$t0" "$t1" "$out" >>"$OUTDIR/e2e-two-procs.jsonl" <<'EOF'
import json, sys
b0, b1 = json.loads(sys.argv[1]), json.loads(sys.argv[2])
secs = float(sys.argv[4]) - float(sys.argv[3])
line = json.loads(sys.argv[5])
for dev in sorted(b1):
    line["metrics"]["gpu_busy_fraction_device%s" % dev] = (b1[dev] - b0.get(dev, 0)) / secs
print(json.dumps(line, separators=(",", ":")))
EOF
	tail -n 1 "$OUTDIR/e2e-two-procs.jsonl" >&2
done
