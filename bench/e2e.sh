#!/bin/sh
# End-to-end benchmark of fftbloomd: JPEG frames through /v1/bloom under 8 and 32 clients
# (build/bench/loadgen), the GPU busy fraction and queue depth from /metrics, the host's codec ceiling on the same
# frames, and the time to a first result from a cold start without and with persisted programs.
#
# usage: [VAR=value ...] sh bench/e2e.sh [fftbloomd options ...]
#   The options go to every daemon this script starts (e.g. --gpus all, --codec-threads 16);
#   --listen/--port/--program-cache are the script's own. The daemon also reads FFTBLOOM_*.
#   BUILD=build            binaries: $BUILD/fftbloomd, $BUILD/bench/{loadgen,codec_ceiling}
#   E2E_SIZE=1920x1080     frame size; frames are $E2E_FRAMES/$E2E_SIZE/*.jpg (make bench-frames)
#   E2E_FRAMES=bench/frames
#   E2E_NEW_SIZE=1280x720  a size first seen after the load (480x270 when E2E_SIZE is smaller)
#   E2E_CLIENTS="8 32"     concurrent clients, one run each
#   E2E_SECONDS=20         seconds per run
#   E2E_QUERY='kernel_preset=gaussian:sigma=8&format=jpeg'
#   E2E_PLANES="true false"  --jpeg-planes of the load runs: one daemon each (JPEG frames as YUV
#                          planes converted on the GPU, or decoded to float on the codec threads)
#   E2E_COLD=1             0 skips the cold-start measurements
#   E2E_DRIVER_CACHE=0     each cold start gets the driver's shader disk cache in a new empty
#                          folder (MESA_SHADER_CACHE_DIR, __GL_SHADER_DISK_CACHE_PATH), so what
#                          carries over is fftbloomd's --program-cache alone (Mesa offers program
#                          binaries only with its disk cache on); 1 keeps the user's driver cache
#   E2E_OUT=$BUILD/bench/e2e.jsonl   JSON lines (also on stdout); the table goes to stderr
# Loopback only; every wait is bounded (E2E_READY_TIMEOUT=300 s to /readyz, 120 s a request).
set -eu

BUILD=${BUILD:-build}
E2E_SIZE=${E2E_SIZE:-1920x1080}
E2E_FRAMES=${E2E_FRAMES:-bench/frames}
E2E_CLIENTS=${E2E_CLIENTS:-8 32}
E2E_SECONDS=${E2E_SECONDS:-20}
E2E_QUERY=${E2E_QUERY:-kernel_preset=gaussian:sigma=8&format=jpeg}
E2E_COLD=${E2E_COLD:-1}
E2E_PLANES=${E2E_PLANES:-true false}
E2E_DRIVER_CACHE=${E2E_DRIVER_CACHE:-0}
E2E_OUT=${E2E_OUT:-$BUILD/bench/e2e.jsonl}
E2E_READY_TIMEOUT=${E2E_READY_TIMEOUT:-300}
w=${E2E_SIZE%x*}
if [ -z "${E2E_NEW_SIZE:-}" ]; then
	if [ "$w" -ge 1280 ]; then E2E_NEW_SIZE=1280x720; else E2E_NEW_SIZE=480x270; fi
fi

daemon=$BUILD/fftbloomd
loadgen=$BUILD/bench/loadgen
ceiling=$BUILD/bench/codec_ceiling
for b in "$daemon" "$loadgen" "$ceiling"; do
	[ -x "$b" ] || { echo "e2e.sh: no $b (make all $BUILD/bench/loadgen $BUILD/bench/codec_ceiling)" >&2; exit 1; }
done
frames=$(ls "$E2E_FRAMES/$E2E_SIZE"/*.jpg 2>/dev/null || true)
newframe=$(ls "$E2E_FRAMES/$E2E_NEW_SIZE"/*.jpg 2>/dev/null | head -n 1 || true)
[ -n "$frames" ] || { echo "e2e.sh: no frames in $E2E_FRAMES/$E2E_SIZE (make bench-frames)" >&2; exit 1; }
[ -n "$newframe" ] || { echo "e2e.sh: no frame in $E2E_FRAMES/$E2E_NEW_SIZE (make bench-frames)" >&2; exit 1; }
first=$(echo "$frames" | head -n 1)
fargs=""
for f in $frames; do fargs="$fargs -f $f"; done
nframes=$(echo "$frames" | wc -l)
cores=$(nproc)
codec_args=""
[ -n "${FFTBLOOM_CODEC_THREADS:-}" ] || codec_args="--codec-threads $cores"
unset FFTBLOOM_PROGRAM_CACHE FFTBLOOM_LISTEN FFTBLOOM_PORT # the script's own

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftbloom-e2e.XXXXXX")
pid=""
stop_daemon() {
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=""
}
cleanup() { stop_daemon; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
# jget FIELD: the first numeric "FIELD":value of the JSON line on stdin
jget() { sed -n "s/.*\"$1\":\(-\{0,1\}[0-9.e+-]*\).*/\1/p" | head -n 1; }

# start_daemon LOG [extra options]: starts the daemon on a free loopback port, sets $pid, $port,
# $t_start and $ready_s (seconds to /readyz)
start_daemon() {
	log=$1
	shift
	t_start=$(now)
	env $denv "$daemon" --queue-size 256 --drain-timeout 5 $codec_args "$@" --listen 127.0.0.1 --port 0 \
		>"$log" 2>&1 &
	pid=$!
	port=""
	i=0
	while [ -z "$port" ] && [ $i -lt 600 ]; do
		kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "e2e.sh: fftbloomd exited" >&2; pid=""; exit 1; }
		port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -n 1)
		[ -n "$port" ] || sleep 0.05
		i=$((i + 1))
	done
	[ -n "$port" ] || { cat "$log" >&2; echo "e2e.sh: no port in the log" >&2; exit 1; }
	i=0
	until "$daemon" --health-check "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt $((E2E_READY_TIMEOUT * 20)) ] || { echo "e2e.sh: not ready after ${E2E_READY_TIMEOUT}s" >&2; exit 1; }
		kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "e2e.sh: fftbloomd exited" >&2; pid=""; exit 1; }
		sleep 0.05
	done
	ready_s=$(sub "$(now)" "$t_start")
}

url() { echo "http://127.0.0.1:$port/v1/bloom?$E2E_QUERY"; }
# one request with FILE; prints its latency in ms
one() { "$loadgen" -c 1 -d 300 -n 1 -t 120 -u "$(url)" -f "$1" --json 2>/dev/null | jget p50; }
busy() { "$loadgen" --get "http://127.0.0.1:$port/metrics" | awk '/^fftbloom_gpu_busy_seconds_total/ { s += $2 } END { printf "%.6f", s }'; }
# fftbloom_queue_depth every 0.2 s until killed: what an autoscaler on queue depth sees
# (deploy/kubernetes/scaledobject.yaml).
depth_sampler() {
	while :; do
		"$loadgen" --get "http://127.0.0.1:$port/metrics" 2>/dev/null |
			awk '/^fftbloom_queue_depth / { print $2 }'
		sleep 0.2
	done
}
emit() { echo "$1" | tee -a "$E2E_OUT"; }

mkdir -p "$(dirname "$E2E_OUT")"
: >"$E2E_OUT"
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cache=$tmp/programs
denv=""

# time to first result at $E2E_SIZE: no program cache, an empty one (filled), the filled one
if [ "$E2E_COLD" != 0 ]; then
	for mode in no_cache cache_empty cache_filled; do
		if [ "$E2E_DRIVER_CACHE" = 0 ]; then
			mkdir -p "$tmp/driver_$mode"
			denv="MESA_SHADER_CACHE_DIR=$tmp/driver_$mode __GL_SHADER_DISK_CACHE_PATH=$tmp/driver_$mode"
		fi
		if [ $mode = no_cache ]; then
			start_daemon "$tmp/$mode.log" "$@"
		else
			mkdir -p "$cache"
			start_daemon "$tmp/$mode.log" "$@" --program-cache "$cache"
		fi
		first_ms=$(one "$first")
		to_first=$(sub "$(now)" "$t_start")
		second_ms=$(one "$first")
		stop_daemon
		nbin=$(ls "$cache" 2>/dev/null | wc -l)
		emit "{\"workload\":\"first_result\",\"date\":\"$date\",\"mode\":\"$mode\",\"size\":\"$E2E_SIZE\",\"start_to_ready_s\":$ready_s,\"first_request_ms\":${first_ms:-null},\"second_request_ms\":${second_ms:-null},\"start_to_first_result_s\":$to_first,\"cache_files\":$nbin,\"driver_cache\":$E2E_DRIVER_CACHE}"
	done
fi

# the load daemons, with the program cache (filled above when E2E_COLD=1) and the driver's defaults
denv=""
mkdir -p "$cache"
cl=""
for planes in $E2E_PLANES; do
start_daemon "$tmp/load.log" "$@" --program-cache "$cache" --jpeg-planes="$planes"
dlog=$tmp/load.log
renderer=$(sed -n "s/.*gpu 0: '\([^']*\)'.*/\1/p" "$dlog" | head -n 1 | tr -d '"\\')
ngpus=$(sed -n 's/.*listening on .* (\([0-9]*\) GPU thread.*/\1/p' "$dlog" | head -n 1)
ncodec=$(sed -n 's/.* \([0-9]*\) codec threads.*/\1/p' "$dlog" | head -n 1)
emit "{\"workload\":\"e2e_config\",\"date\":\"$date\",\"host\":\"$(uname -n)\",\"cores\":$cores,\"renderer\":\"$renderer\",\"gpus\":${ngpus:-0},\"codec_threads\":${ncodec:-0},\"size\":\"$E2E_SIZE\",\"frames\":$nframes,\"query\":\"$E2E_QUERY\",\"seconds\":$E2E_SECONDS}"

# the codec ceiling of this host on the same frames, measured with the daemon idle
if [ -z "$cl" ]; then
	cl=$("$ceiling" --max-seconds 10 --label "$E2E_SIZE" $frames 2>/dev/null)
	emit "$cl"
fi
ceiling_fps=$(echo "$cl" | jget ceiling_fps)
planes_ceiling_fps=$(echo "$cl" | jget planes_ceiling_fps)

# warm-up: every frame once, the plan and kernel spectrum built
"$loadgen" -c 2 -d 300 -n "$nframes" -t 120 -u "$(url)" $fargs >/dev/null 2>&1 || true
for c in $E2E_CLIENTS; do
	b0=$(busy)
	t0=$(now)
	depth_sampler > "$tmp/depth" &
	dpid=$!
	line=$("$loadgen" -c "$c" -d "$E2E_SECONDS" -t 120 -u "$(url)" $fargs --json --label "c$c-planes-$planes" 2>"$tmp/lg.err") || true
	kill "$dpid" 2>/dev/null || true
	wait "$dpid" 2>/dev/null || true
	t1=$(now)
	b1=$(busy)
	depth=$(awk '{ s += $1; if ($1 > m) m = $1; n++ } END { if (n) printf ",\"queue_depth_mean\":%.2f,\"queue_depth_max\":%d,\"queue_depth_samples\":%d", s / n, m, n; else printf ",\"queue_depth_samples\":0" }' "$tmp/depth")
	cat "$tmp/lg.err" >&2
	[ -n "$line" ] || { echo "e2e.sh: loadgen gave no result" >&2; exit 1; }
	window=$(sub "$t1" "$t0")
	extra=$(awk -v b0="$b0" -v b1="$b1" -v w="$window" -v n="${ngpus:-1}" -v rps="$(echo "$line" | jget rps)" \
		-v ceil="$ceiling_fps" -v pceil="${planes_ceiling_fps:-0}" 'BEGIN {
		if (n < 1) n = 1
		frac = (ceil > 0) ? rps / ceil : 0
		pfrac = (pceil > 0) ? rps / pceil : 0
		printf ",\"gpu_busy_s\":%.3f,\"window_s\":%.3f,\"gpu_busy_fraction\":%.4f,\"gpus\":%d,\"ceiling_fps\":%s,\"ceiling_fraction\":%.4f,\"planes_ceiling_fps\":%s,\"planes_ceiling_fraction\":%.4f,\"planes\":\"'"$planes"'\",\"size\":\"'"$E2E_SIZE"'\",\"date\":\"'"$date"'\"",
		       b1 - b0, w, (b1 - b0) / (w * n), n, ceil, frac, pceil, pfrac }')
	emit "$(echo "$line" | sed "s/}\$/$extra$depth}/")"
done

# a size first seen on the warm daemon
new1=$(one "$newframe")
new2=$(one "$newframe")
emit "{\"workload\":\"first_result\",\"date\":\"$date\",\"mode\":\"new_size_warm_daemon_planes_$planes\",\"size\":\"$E2E_NEW_SIZE\",\"first_request_ms\":${new1:-null},\"second_request_ms\":${new2:-null}}"
stop_daemon
done

# the table
{
	echo
	echo "fftbloomd end to end, $date, $(uname -n), $cores cores, ${ngpus:-?} GPU thread(s) on '$renderer', ${ncodec:-?} codec threads"
	echo "frames: $nframes x $E2E_SIZE JPEG; query: $E2E_QUERY"
	printf '%-18s %9s %9s %9s %9s %7s %9s %9s  %s\n' clients req/s p50_ms p99_ms max_ms non200 gpu_busy ceil_frac "server medians ms (decode/queue/gpu/encode)"
	grep '"workload":"e2e"' "$E2E_OUT" | while IFS= read -r l; do
		printf '%-18s %9s %9s %9s %9s %7s %9s %9s  %s/%s/%s/%s\n' "$(echo "$l" | sed -n 's/.*"label":"\([^"]*\)".*/\1/p')" \
			"$(echo "$l" | jget rps)" "$(echo "$l" | jget p50)" "$(echo "$l" | jget p99)" \
			"$(echo "$l" | jget max)" "$(echo "$l" | jget non200)" \
			"$(echo "$l" | jget gpu_busy_fraction)" "$(echo "$l" | jget ceiling_fraction)" \
			"$(echo "$l" | jget decode)" "$(echo "$l" | jget queue)" "$(echo "$l" | jget gpu)" \
			"$(echo "$l" | jget encode)"
	done
	echo "codec ceiling: $(echo "$cl" | jget codec_ms) ms a frame on one core (decode $(echo "$cl" | jget decode_ms) + encode $(echo "$cl" | jget encode_ms)) -> $ceiling_fps frames/s on $cores cores"
	echo "planes codec ceiling: $(echo "$cl" | jget planes_ms) ms a frame on one core -> $planes_ceiling_fps frames/s on $cores cores"
	printf '%-22s %10s %12s %13s %12s\n' "first result" "ready_s" "first_ms" "start->1st_s" "second_ms"
	grep '"workload":"first_result"' "$E2E_OUT" | while IFS= read -r l; do
		m=$(echo "$l" | sed -n 's/.*"mode":"\([^"]*\)".*/\1/p')
		printf '%-22s %10s %12s %13s %12s\n' "$m" "$(echo "$l" | jget start_to_ready_s)" \
			"$(echo "$l" | jget first_request_ms)" "$(echo "$l" | jget start_to_first_result_s)" \
			"$(echo "$l" | jget second_request_ms)"
	done
} >&2
