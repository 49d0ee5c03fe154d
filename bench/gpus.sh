#!/bin/sh
# Issue 37's run: on a host with several GPUs, in one run, JPEG blooms (1080p by default) under
# 32, 64 and 128 clients served by three layouts, each with the defaults of the build:
#   one-gpu     fftbloomd --gpus 0
#   service     fftbloomd --gpus all: one service, a worker process a GPU under a supervisor
#   per-gpu     a daemon per GPU, fftbloomd --gpus N --reuse-port, all on one port
# The load generator runs pinned (taskset) to the last GPUS_LOADGEN_CORES cores, the daemons to
# the others: the share is in each line. For each run: req/s, p50/p99 and Server-Timing medians
# (loadgen), the daemons' host CPU core-ms a request (user + system time of every daemon
# process, the workers included, from /proc/PID/stat before and after) and the load generator's,
# and for one-gpu and service the GPU threads' busy fraction per GPU from /metrics
# (fftbloom_gpu_busy_seconds_total). --codec-threads is the daemon cores in every layout (the
# service splits it between its workers; a daemon per GPU gets its share).
#
# usage: sh bench/gpus.sh [RESULTS_DIR]          (default build/bench/gpus)
#   BUILD=build            binaries: $BUILD/fftbloomd, $BUILD/bench/loadgen
#   GPUS_LIST=all          the service's --gpus; per-gpu runs a daemon for each device it lists
#                          (all: the host's GPUs, counted by the service's /readyz, which lists
#                          one worker a device; nvidia-smi -L must agree where it exists).
#                          On llvmpipe: GPUS_LIST=0,0 (two workers on the one device)
#   GPUS_CLIENTS="32 64 128"  GPUS_SECONDS=10
#   GPUS_SIZE=1920x1080    frames: $GPUS_FRAMES/$GPUS_SIZE/*.jpg (make bench-frames)
#   GPUS_FRAMES=bench/frames
#   GPUS_QUERY='kernel_preset=gaussian:sigma=8&format=jpeg'
#   GPUS_LOADGEN_CORES=    cores for the load generator (default a quarter of the host, >= 1)
#   GPUS_LAYOUTS="one-gpu service per-gpu"
#   BENCH_MACHINE=         the machine's name in the lines (default: from the renderer, xN)
# A tiny check on llvmpipe: GPUS_LIST=0,0 GPUS_CLIENTS=2 GPUS_SECONDS=3 GPUS_SIZE=320x180 \
#   GPUS_FRAMES=/tmp/frames sh bench/gpus.sh /tmp/gpus   (frames: sh bench/make_frames.sh
#   /tmp/frames 320x180:4)
# Result lines: RESULTS_DIR/gpus.jsonl (suite e2e, ids e2e.jpeg.SIZE.cN, variant the layout,
# detail: gpus, loadgen_cores, daemon_cores, daemon_core_ms_per_request); the daemons' logs in
# RESULTS_DIR/logs; a table on stderr.
set -eu
BUILD=${BUILD:-build}
OUTDIR=${1:-$BUILD/bench/gpus}
GPUS_LIST=${GPUS_LIST:-all}
GPUS_CLIENTS=${GPUS_CLIENTS:-32 64 128}
GPUS_SECONDS=${GPUS_SECONDS:-10}
GPUS_SIZE=${GPUS_SIZE:-1920x1080}
GPUS_FRAMES=${GPUS_FRAMES:-${BENCH_FRAMES:-bench/frames}}
GPUS_QUERY=${GPUS_QUERY:-kernel_preset=gaussian:sigma=8&format=jpeg}
GPUS_LAYOUTS=${GPUS_LAYOUTS:-one-gpu service per-gpu}
daemon=$BUILD/fftbloomd
loadgen=$BUILD/bench/loadgen
for b in "$daemon" "$loadgen"; do
	[ -x "$b" ] || { echo "gpus.sh: no $b (make all $BUILD/bench/loadgen)" >&2; exit 1; }
done
command -v taskset >/dev/null || { echo "gpus.sh: needs taskset (util-linux)" >&2; exit 1; }
frames=$(ls "$GPUS_FRAMES/$GPUS_SIZE"/*.jpg 2>/dev/null || true)
[ -n "$frames" ] || { echo "gpus.sh: no frames in $GPUS_FRAMES/$GPUS_SIZE (make bench-frames)" >&2; exit 1; }
fargs=""
for f in $frames; do fargs="$fargs -f $f"; done
nframes=$(echo "$frames" | wc -l)
mkdir -p "$OUTDIR/logs"
OUT=$OUTDIR/gpus.jsonl
: >"$OUT"

cores=$(nproc)
lgc=${GPUS_LOADGEN_CORES:-$((cores / 4))}
[ "$lgc" -ge 1 ] || lgc=1
[ "$lgc" -lt "$cores" ] || { echo "gpus.sh: GPUS_LOADGEN_CORES $lgc leaves no core of $cores for the daemons" >&2; exit 1; }
dcores=$((cores - lgc))
daemon_set=0-$((dcores - 1))
loadgen_set=$dcores-$((cores - 1))
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port/v1/bloom?$GPUS_QUERY"
pids=""
stop_daemons() {
	for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $pids; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 600 ]; do i=$((i + 1)); sleep 0.1; done
	done
	pids=""
}
trap stop_daemons EXIT

# start NAME ARGS...: a daemon on the shared port, pinned to the daemon cores
start() {
	name=$1
	shift
	taskset -c "$daemon_set" "$daemon" --listen 127.0.0.1 --port "$port" --queue-size 512 \
		--max-per-ip 0 --drain-timeout 5 "$@" >"$OUTDIR/logs/$name.log" 2>&1 &
	pids="$pids $!"
}

# ready N: waits until /readyz says 200 with N workers listed (0: a single process)
ready() {
	python3 - "$port" "$1" <<'EOF'
import json, sys, time, urllib.request, urllib.error
end = time.time() + 600
while time.time() < end:
    try:
        o = json.load(urllib.request.urlopen("http://127.0.0.1:%s/readyz" % sys.argv[1], timeout=10))
        g = o.get("gpus", [])
        if len(g) == int(sys.argv[2]) and all(x["ready"] for x in g):
            sys.exit(0)
    except (OSError, ValueError, urllib.error.URLError):
        pass
    time.sleep(0.2)
sys.exit(1)
EOF
}

# cpu PIDS: CPU seconds (user + system) of the processes and their children now
cpu() {
	python3 - $pids <<'EOF'
import os, subprocess, sys
tick = os.sysconf("SC_CLK_TCK")
pids = set(sys.argv[1:])
for p in list(pids):
    out = subprocess.run(["pgrep", "-P", p], capture_output=True, text=True).stdout.split()
    pids.update(out)
s = 0
for p in pids:
    try:
        f = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
        s += (int(f[11]) + int(f[12])) / tick
    except OSError:
        pass
print(s)
EOF
}

# run LAYOUT GPUS: the load runs against what is started
run() {
	layout=$1 ngpus=$2
	renderer=$(sed -n "s/.*gpu 0: '\([^']*\)'.*/\1/p" "$OUTDIR/logs/$layout"*.log | head -n 1)
	gldriver=$(sed -n "s/.*gpu 0: '[^']*' (\(.*\)) on .*/\1/p" "$OUTDIR/logs/$layout"*.log | head -n 1)
	machine=${BENCH_MACHINE:-$(echo "$renderer" | sed 's/^NVIDIA //; s/[\/(].*//' | tr 'A-Z' 'a-z' | tr -cd 'a-z0-9')x$NGPU}
	# warm-up: every frame on every GPU a few times (the first frames compile programs)
	taskset -c "$loadgen_set" "$loadgen" -c $((2 * ngpus)) -d 300 -n $((nframes * ngpus * 4)) \
		-t 120 -u "$url" $fargs >/dev/null 2>&1 || true
	murl=""
	[ "$layout" = per-gpu ] || murl="--metrics-url http://127.0.0.1:$port/metrics"
	for c in $GPUS_CLIENTS; do
		c0=$(cpu)
		out=$(taskset -c "$loadgen_set" "$loadgen" -c "$c" -d "$GPUS_SECONDS" -t 120 -u "$url" \
			$fargs --json --id "e2e.jpeg.$GPUS_SIZE.c$c" --variant "$layout" --suite e2e \
			--machine "$machine" --gpu "$renderer" --driver "$gldriver" $murl \
			--command "$dcmd (taskset -c $daemon_set); taskset -c $loadgen_set loadgen -c $c -d $GPUS_SECONDS" \
			2>"$OUTDIR/logs/loadgen-$layout-c$c.err") || true
		c1=$(cpu)
		[ -n "$out" ] || { cat "$OUTDIR/logs/loadgen-$layout-c$c.err" >&2; echo "gpus.sh: loadgen gave no result" >&2; exit 1; }
		python3 - "$out" "$c0" "$c1" "$ngpus" "$lgc" "$dcores" >>"$OUT" <<'EOF'
import json, sys
line = json.loads(sys.argv[1])
c0, c1 = float(sys.argv[2]), float(sys.argv[3])
d = line.setdefault("detail", {})
n = line.get("detail", {}).get("requests") or line.get("metrics", {}).get("requests")
if not n:
    n = line["metrics"]["rps"] * line.get("detail", {}).get("seconds", 0)
d["gpus"] = int(sys.argv[4])
d["loadgen_cores"] = int(sys.argv[5])
d["daemon_cores"] = int(sys.argv[6])
if n:
    line["metrics"]["daemon_core_ms_per_request"] = (c1 - c0) * 1000.0 / n
print(json.dumps(line, separators=(",", ":")))
EOF
		tail -n 1 "$OUT" | python3 -c '
import json, sys
l = json.loads(sys.stdin.read()); m = l["metrics"]
print("%-8s %-28s %9.1f rps  p50 %7.1f ms  p99 %7.1f ms  %6.2f core-ms a request" % (
    l["variant"], l["id"], m["rps"], m.get("p50_ms", 0), m.get("p99_ms", 0),
    m.get("daemon_core_ms_per_request", -1)))' >&2
	done
}

# the service first: it says how many GPUs the host has
NGPU=0
for layout in service $GPUS_LAYOUTS; do
	case " $GPUS_LAYOUTS " in *" $layout "*) ;; *) continue ;; esac
	[ "$layout" != service ] || [ "$NGPU" = 0 ] || continue
	case $layout in
	service)
		dcmd="fftbloomd --gpus $GPUS_LIST --codec-threads $dcores"
		start service --gpus "$GPUS_LIST" --codec-threads "$dcores"
		NGPU=$(python3 - "$port" <<'EOF'
import json, sys, time, urllib.request
for _ in range(3000):
    try:
        o = json.load(urllib.request.urlopen("http://127.0.0.1:%s/readyz" % sys.argv[1], timeout=10))
        print(len(o.get("gpus", [])) or 1)
        break
    except Exception:
        time.sleep(0.2)
else:
    print(0)
EOF
)
		[ "$NGPU" -ge 1 ] || { cat "$OUTDIR/logs/service.log" >&2; exit 1; }
		if smi=$(nvidia-smi -L 2>/dev/null) && [ "$GPUS_LIST" = all ]; then
			[ "$(echo "$smi" | wc -l)" = "$NGPU" ] || echo "gpus.sh: nvidia-smi lists $(echo "$smi" | wc -l) GPUs, EGL $NGPU" >&2
		fi
		[ "$NGPU" -ge 2 ] || echo "gpus.sh: one GPU here: the service runs as one process" >&2
		ready "$([ "$NGPU" -ge 2 ] && echo "$NGPU" || echo 0)" || { cat "$OUTDIR/logs/service.log" >&2; exit 1; }
		run service "$NGPU"
		;;
	one-gpu)
		first=$(echo "$GPUS_LIST" | cut -d, -f1)
		[ "$first" != all ] || first=0
		dcmd="fftbloomd --gpus $first --codec-threads $dcores"
		start one-gpu --gpus "$first" --codec-threads "$dcores"
		ready 0 || { cat "$OUTDIR/logs/one-gpu.log" >&2; exit 1; }
		run one-gpu 1
		;;
	per-gpu)
		if [ "$GPUS_LIST" = all ]; then devs=$(seq 0 $((NGPU - 1))); else devs=$(echo "$GPUS_LIST" | tr , ' '); fi
		n=$(echo $devs | wc -w)
		each=$((dcores / n))
		[ "$each" -ge 1 ] || each=1
		dcmd="${n}x fftbloomd --gpus N --reuse-port --codec-threads $each"
		i=0
		for g in $devs; do
			start "per-gpu-$i" --gpus "$g" --reuse-port --codec-threads "$each"
			i=$((i + 1))
		done
		for l in $(seq 0 $((n - 1))); do
			k=0
			until grep -q 'ready: ' "$OUTDIR/logs/per-gpu-$l.log"; do
				k=$((k + 1)); [ $k -lt 6000 ] || { cat "$OUTDIR/logs/per-gpu-$l.log" >&2; exit 1; }; sleep 0.1
			done
		done
		run per-gpu "$n"
		;;
	esac
	stop_daemons
done
echo "gpus.sh: $cores cores ($dcores for the daemons: $daemon_set; $lgc for loadgen: $loadgen_set), $NGPU GPUs; lines in $OUT" >&2
