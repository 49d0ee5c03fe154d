#!/bin/sh
# The e2e suite's runner (bench/run.sh e2e calls it; it runs alone as well): JPEG frames through
# fftbloomd's POST /v1/bloom under several client counts (loadgen), the GPU threads' busy
# fraction and the queue depth from /metrics, the host's codec ceiling on the same frames, and
# the time to a first result from a cold start without and with persisted programs. Result lines
# (bench/README.md) on stdout and in E2E_OUT; a table on stderr.
#
# usage: [VAR=value ...] sh bench/e2e.sh [fftbloomd options ...]
#   The options go to every daemon this script starts (e.g. --gpus all, --codec-threads 16);
#   --listen/--port/--program-cache are the script's own. The daemon also reads FFTBLOOM_*.
#   Every client connects from loopback, so the daemons run with --max-per-ip 0 (its default,
#   64, would refuse the clients past 64 and loadgen's /metrics samples beside 64 clients).
#   BUILD=build            binaries: $BUILD/fftbloomd, $BUILD/fftbloom, $BUILD/bench/{loadgen,codec_ceiling}
#   E2E_SIZE=1920x1080     frame size; frames are $E2E_FRAMES/$E2E_SIZE/*.jpg (make bench-frames)
#   E2E_FRAMES=bench/frames
#   E2E_NEW_SIZE=1280x720  a size first seen after the load (480x270 when E2E_SIZE is smaller)
#   E2E_CLIENTS="8 32 64"  concurrent clients, one run each
#   E2E_SECONDS=10         seconds per run
#   E2E_QUERY='kernel_preset=gaussian:sigma=8&format=jpeg'
#   E2E_PLANES=true        --jpeg-planes of the load runs, one daemon each: true (JPEG frames as
#                          YUV planes converted on the GPU: workload variant "default") and/or
#                          false (decoded to float on the codec threads: variant "float")
#   E2E_VARIANT=           a name for the daemon options given (e.g. gpus-all): the variant
#                          becomes it (and NAME-float for the float frames)
#   E2E_COLD=1             0 skips the cold-start measurements (e2e.first.* workloads)
#   E2E_IDLE_S=5           idle seconds before the new size's third request (after_idle_ms)
#   E2E_IDLE_PROBES=0      then this many more of the new size's requests, one every 0.7 s (past
#                          the daemon's 0.5 s grace, so each may meet a step of idle work):
#                          their times and queue waits, in the line's detail and the table
#   E2E_DRIVER_CACHE=0     each cold start and each load daemon gets the driver's shader disk
#                          cache in a new empty folder (MESA_SHADER_CACHE_DIR,
#                          __GL_SHADER_DISK_CACHE_PATH), so what carries over is fftbloomd's
#                          --program-cache alone (Mesa offers program binaries only with its disk
#                          cache on); 1 leaves the driver's cache to the daemon (the
#                          environment's folder, else --driver-cache auto: driver/ in the cache
#                          directory, which lasts from run to run)
#   E2E_OUT=$BUILD/bench/e2e.jsonl   result lines (also on stdout); the table goes to stderr
#   E2E_LOG_DIR=           keep each daemon's log there (named by the run), e.g. to read what the
#                          idle work did (--log-level debug among the options says more)
#   BENCH_MACHINE=         the machine's name in the lines (default: from the renderer)
# Loopback only; every wait is bounded (E2E_READY_TIMEOUT=300 s to /readyz, 120 s a request).
set -eu

BUILD=${BUILD:-build}
E2E_SIZE=${E2E_SIZE:-1920x1080}
E2E_FRAMES=${E2E_FRAMES:-bench/frames}
E2E_CLIENTS=${E2E_CLIENTS:-8 32 64}
E2E_SECONDS=${E2E_SECONDS:-10}
E2E_QUERY=${E2E_QUERY:-kernel_preset=gaussian:sigma=8&format=jpeg}
E2E_COLD=${E2E_COLD:-1}
E2E_IDLE_S=${E2E_IDLE_S:-5}
E2E_PLANES=${E2E_PLANES:-true}
E2E_VARIANT=${E2E_VARIANT:-}
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
commit=$("$BUILD/fftbloom" --version 2>/dev/null | sed -n 's/^fftbloom .*(commit \(.*\))$/\1/p')
commit=${commit:-unknown}

# the workloads' size names: 16:9 frames by their height (1080p), others as WxH
sizename() {
	sw=${1%x*} sh=${1#*x}
	if [ $((sw * 9)) -eq $((sh * 16)) ]; then echo "${sh}p"; else echo "$1"; fi
}
sz=$(sizename "$E2E_SIZE")
newsz=$(sizename "$E2E_NEW_SIZE")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftbloom-e2e.XXXXXX")
pid=""
stop_daemon() {
	[ -n "$pid" ] || return 0
	if [ -n "${E2E_LOG_DIR:-}" ]; then
		mkdir -p "$E2E_LOG_DIR"
		cp "$log" "$E2E_LOG_DIR/${E2E_VARIANT:-default}-$(basename "$log")" 2>/dev/null || true
	fi
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
# jget FIELD: the last numeric "FIELD":value of the JSON line on stdin
jget() { sed -n "s/.*\"$1\":\(-\{0,1\}[0-9][0-9.e+-]*\).*/\1/p" | head -n 1; }
# jstr TEXT: TEXT as a JSON string's contents
jstr() { printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g'; }

# start_daemon LOG [extra options]: starts the daemon on a free loopback port, sets $pid, $port,
# $t_start, $ready_s and $dcmd (its command line)
start_daemon() {
	log=$1
	shift
	t_start=$(now)
	dcmd="fftbloomd --queue-size 256 --max-per-ip 0 --drain-timeout 5 $codec_args $* --listen 127.0.0.1 --port 0"
	env $denv "$daemon" --queue-size 256 --max-per-ip 0 --drain-timeout 5 $codec_args "$@" --listen 127.0.0.1 --port 0 \
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
	# the GPU and driver the daemon runs on, from its log: gpu 0: 'RENDERER' (VERSION) on ...
	renderer=$(sed -n "s/.*gpu 0: '\([^']*\)'.*/\1/p" "$log" | head -n 1)
	gldriver=$(sed -n "s/.*gpu 0: '[^']*' (\(.*\)) on .*/\1/p" "$log" | head -n 1)
	ngpus=$(sed -n 's/.*listening on .* (\([0-9]*\) GPU thread.*/\1/p' "$log" | head -n 1)
	ncodec=$(sed -n 's/.* \([0-9]*\) codec threads.*/\1/p' "$log" | head -n 1)
	machine=${BENCH_MACHINE:-}
	if [ -z "$machine" ]; then
		case $renderer in
		*llvmpipe*) machine=llvmpipe ;;
		*) machine=$(echo "$renderer" | sed 's/^NVIDIA //; s/^AMD //; s/[\/(].*//' | tr 'A-Z' 'a-z' |
			sed 's/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//') ;;
		esac
	fi
}

url() { echo "http://127.0.0.1:$port/v1/bloom?$E2E_QUERY"; }
# one_st FRAME: one request's time in ms, then its Server-Timing as decode/queue/gpu(setup)/encode ms
one_st() {
	o=$("$loadgen" -c 1 -d 300 -n 1 -t 120 -u "$(url)" -f "$1" --json 2>/dev/null || true)
	st=$(echo "$o" | sed -n 's/.*"server_timing_median_ms":{\([^}]*\)}.*/\1/p')
	printf '%s %s/%s/%s(%s)/%s\n' "$(echo "$o" | jget p50_ms)" "$(echo "$st" | jget decode)" \
		"$(echo "$st" | jget queue)" "$(echo "$st" | jget gpu)" "$(echo "$st" | jget gpu_setup)" \
		"$(echo "$st" | jget encode)"
}
# one FRAME: one request's time in ms
one() { r=$(one_st "$1"); echo "${r%% *}"; }
emit() { echo "$1" | tee -a "$E2E_OUT"; }
# line ID VARIANT METRICS DETAIL COMMAND: a result line made here (the first-result workloads)
line() {
	emit "{\"suite\":\"e2e\",\"id\":\"$1\",\"impl\":\"fftbloomd\",\"variant\":\"$2\",\"metrics\":{$3},\"detail\":{$4},\"gpu\":\"$(jstr "$renderer")\",\"driver\":\"$(jstr "$gldriver")\",\"commit\":\"$(jstr "$commit")\",\"date\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\"host\":\"$(jstr "$(uname -n)")\",\"machine\":\"$(jstr "$machine")\",\"command\":\"$(jstr "$5")\"}"
}
variant_of() { # PLANES: the load's variant name
	if [ "$1" = true ]; then echo "${E2E_VARIANT:-default}"; else echo "${E2E_VARIANT:+$E2E_VARIANT-}float"; fi
}

mkdir -p "$(dirname "$E2E_OUT")"
: >"$E2E_OUT"
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
		line "e2e.first.$sz.$mode" "${E2E_VARIANT:-default}" \
			"\"start_to_first_result_s\":$to_first,\"start_to_ready_s\":$ready_s,\"first_request_ms\":${first_ms:-null},\"second_request_ms\":${second_ms:-null}" \
			"\"size\":\"$E2E_SIZE\",\"cache_files\":$nbin,\"driver_cache\":$E2E_DRIVER_CACHE" \
			"$dcmd; loadgen -c 1 -n 1 -u URL -f $first (twice)"
	done
fi

# the load daemons, with the program cache (filled above when E2E_COLD=1); with E2E_DRIVER_CACHE=0
# each also gets an empty driver cache, so that the size first seen after the load (e2e.first.*.
# new_size) compiles what a daemon would, not what an earlier run left in the driver's cache
mkdir -p "$cache"
cl=""
for planes in $E2E_PLANES; do
	denv=""
	if [ "$E2E_DRIVER_CACHE" = 0 ]; then
		mkdir -p "$tmp/driver_load_$planes"
		denv="MESA_SHADER_CACHE_DIR=$tmp/driver_load_$planes __GL_SHADER_DISK_CACHE_PATH=$tmp/driver_load_$planes"
	fi
	start_daemon "$tmp/load.log" "$@" --program-cache "$cache" --jpeg-planes="$planes"
	variant=$(variant_of "$planes")

	# the codec ceiling of this host on the same frames, measured once with the daemon idle, at
	# the answers' chroma subsampling
	if [ -z "$cl" ]; then
		sub=${FFTBLOOM_JPEG_SUBSAMPLING:-444}
		case " $* " in *" --jpeg-subsampling 420 "* | *" --jpeg-subsampling=420 "*) sub=420 ;; esac
		cl=$("$ceiling" --max-seconds 10 --subsampling "$sub" --label "$E2E_SIZE" --suite e2e \
			--machine "$machine" $frames 2>/dev/null)
		emit "$cl"
	fi
	ceiling_fps=$(echo "$cl" | jget fps)
	# the ceiling of the path the daemon runs: the frames' inverse DCT and the answers' DCT and
	# entropy coding on the GPU (--jpeg-gpu-idct, --jpeg-gpu-dct and --jpeg-gpu-entropy, the
	# defaults: codec_ceiling's idct_*), not the inverse (coded_*), the answers' DCT only (dct_*),
	# or neither (planes_*); the last two's frames are decoded to planes there whatever
	# --jpeg-gpu-idct says
	path=idct
	case " $* " in *" --jpeg-gpu-idct=false "* | *" --jpeg-gpu-idct false "*) path=coded ;; esac
	[ "${FFTBLOOM_JPEG_GPU_IDCT:-true}" = false ] && path=coded
	case " $* " in *" --jpeg-gpu-entropy=false "* | *" --jpeg-gpu-entropy false "*) path=dct ;; esac
	[ "${FFTBLOOM_JPEG_GPU_ENTROPY:-true}" = false ] && path=dct
	case " $* " in *" --jpeg-gpu-dct=false "* | *" --jpeg-gpu-dct false "*) path=planes ;; esac
	[ "${FFTBLOOM_JPEG_GPU_DCT:-true}" = false ] && path=planes
	planes_ceiling_fps=$(echo "$cl" | jget ${path}_fps)
	parallel_ceiling_fps=$(echo "$cl" | jget ${path}_parallel_fps)
	[ -n "$planes_ceiling_fps" ] || planes_ceiling_fps=$(echo "$cl" | jget planes_fps)
	[ -n "$parallel_ceiling_fps" ] || parallel_ceiling_fps=$(echo "$cl" | jget planes_parallel_fps)

	# warm-up: every frame once, the plan and kernel spectrum built
	"$loadgen" -c 2 -d 300 -n "$nframes" -t 120 -u "$(url)" $fargs >/dev/null 2>&1 || true
	for c in $E2E_CLIENTS; do
		lcmd="loadgen -c $c -d $E2E_SECONDS -t 120 -u '$(url)'$fargs"
		out=$("$loadgen" -c "$c" -d "$E2E_SECONDS" -t 120 -u "$(url)" $fargs --json \
			--label "c$c-planes-$planes" --id "e2e.jpeg.$sz.c$c" --variant "$variant" \
			--suite e2e --machine "$machine" --gpu "$renderer" --driver "$gldriver" \
			--metrics-url "http://127.0.0.1:$port/metrics" --ceiling-fps "${ceiling_fps:-0}" \
			--planes-ceiling-fps "${planes_ceiling_fps:-0}" --server-pid "$pid" \
			--parallel-ceiling-fps "${parallel_ceiling_fps:-0}" \
			--command "$dcmd; $lcmd" 2>"$tmp/lg.err") || true
		cat "$tmp/lg.err" >&2
		[ -n "$out" ] || { echo "e2e.sh: loadgen gave no result" >&2; exit 1; }
		emit "$out"
	done

	# a size first seen on the warm daemon: twice at once (on a borrowed plan, with
	# --borrow-plans), then once more after E2E_IDLE_S of idle time (on its own plan, built
	# meanwhile, if the idle work is done by then)
	n1=$(one_st "$newframe")
	n2=$(one_st "$newframe")
	sleep "$E2E_IDLE_S"
	n3=$(one_st "$newframe")
	new1=${n1%% *} new2=${n2%% *} new3=${n3%% *}
	probes="" pmax=0 qmax=0
	k=0
	while [ "$k" -lt "${E2E_IDLE_PROBES:-0}" ]; do
		sleep 0.7
		pr=$(one_st "$newframe")
		pms=${pr%% *} pq=$(echo "${pr#* }" | cut -d/ -f2)
		probes="$probes${probes:+,}${pms:-null}"
		pmax=$(awk -v a="$pmax" -v b="${pms:-0}" 'BEGIN { print (b > a ? b : a) }')
		qmax=$(awk -v a="$qmax" -v b="${pq:-0}" 'BEGIN { print (b > a ? b : a) }')
		k=$((k + 1))
	done
	pdetail=""
	[ -z "$probes" ] || pdetail=",\"idle_probes_ms\":[$probes],\"idle_probe_max_ms\":$pmax,\"idle_probe_max_queue_ms\":$qmax"
	line "e2e.first.$newsz.new_size" "$variant" \
		"\"first_request_ms\":${new1:-null},\"second_request_ms\":${new2:-null},\"after_idle_ms\":${new3:-null}" \
		"\"size\":\"$E2E_NEW_SIZE\",\"after\":\"the load at $E2E_SIZE\",\"idle_s\":$E2E_IDLE_S,\"server_timing_ms\":\"decode/queue/gpu(setup)/encode: ${n1#* }, ${n2#* }, ${n3#* }\"$pdetail" \
		"$dcmd; loadgen -c 1 -n 1 -u URL -f $newframe (twice, then once after $E2E_IDLE_S s idle)"
	stop_daemon
done

# the table
{
	echo
	echo "fftbloomd end to end, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n), $cores cores, ${ngpus:-?} GPU thread(s) on '$renderer', ${ncodec:-?} codec threads"
	echo "frames: $nframes x $E2E_SIZE JPEG; query: $E2E_QUERY"
	printf '%-26s %-10s %9s %9s %9s %9s %9s %7s  %s\n' workload variant req/s p50_ms p99_ms gpu_busy ceil_frac queue "server medians ms (decode/queue/gpu/encode)"
	grep '"id":"e2e.jpeg' "$E2E_OUT" | while IFS= read -r l; do
		printf '%-26s %-10s %9s %9s %9s %9s %9s %7s  %s/%s/%s/%s\n' \
			"$(echo "$l" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')" \
			"$(echo "$l" | sed -n 's/.*"variant":"\([^"]*\)".*/\1/p')" \
			"$(echo "$l" | jget rps)" "$(echo "$l" | jget p50_ms)" "$(echo "$l" | jget p99_ms)" \
			"$(echo "$l" | jget gpu_busy_fraction)" "$(echo "$l" | jget ceiling_fraction)" \
			"$(echo "$l" | jget queue_depth_mean)" \
			"$(echo "$l" | jget decode)" "$(echo "$l" | jget queue)" "$(echo "$l" | jget gpu)" \
			"$(echo "$l" | jget encode)"
	done
	echo "codec ceiling: $(echo "$cl" | jget ms) ms a frame on one core (decode $(echo "$cl" | jget decode_ms) + encode $(echo "$cl" | jget encode_ms)) -> $ceiling_fps frames/s on $cores cores"
	echo "planes codec ceiling: $(echo "$cl" | jget planes_ms) ms a frame on one core -> $(echo "$cl" | jget planes_fps) frames/s on $cores cores; on all cores at once $(echo "$cl" | jget planes_parallel_fps) frames/s"
	echo "with the answers' DCT on the GPU: $(echo "$cl" | jget dct_ms) ms a frame on one core -> $(echo "$cl" | jget dct_fps) frames/s on $cores cores; on all cores at once $(echo "$cl" | jget dct_parallel_fps) frames/s"
	echo "with their entropy coding on the GPU too: $(echo "$cl" | jget coded_ms) ms a frame on one core -> $(echo "$cl" | jget coded_fps) frames/s on $cores cores; on all cores at once $(echo "$cl" | jget coded_parallel_fps) frames/s"
	echo "and the frames' inverse DCT on the GPU: $(echo "$cl" | jget idct_ms) ms a frame on one core -> $(echo "$cl" | jget idct_fps) frames/s on $cores cores; on all cores at once $(echo "$cl" | jget idct_parallel_fps) frames/s (the fractions are of the $path path's)"
	printf '%-30s %-10s %10s %12s %13s %12s %14s\n' "first result" "variant" "ready_s" "first_ms" "start->1st_s" "second_ms" "after_idle_ms"
	grep '"id":"e2e.first' "$E2E_OUT" | while IFS= read -r l; do
		printf '%-30s %-10s %10s %12s %13s %12s %14s\n' "$(echo "$l" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')" \
			"$(echo "$l" | sed -n 's/.*"variant":"\([^"]*\)".*/\1/p')" \
			"$(echo "$l" | jget start_to_ready_s)" "$(echo "$l" | jget first_request_ms)" \
			"$(echo "$l" | jget start_to_first_result_s)" "$(echo "$l" | jget second_request_ms)" \
			"$(echo "$l" | jget after_idle_ms)"
		st=$(echo "$l" | sed -n 's/.*"server_timing_ms":"\([^"]*\)".*/\1/p')
		[ -z "$st" ] || echo "  server $st"
		pm=$(echo "$l" | jget idle_probe_max_ms)
		[ -z "$pm" ] || echo "  idle probes ms: $(echo "$l" | sed -n 's/.*"idle_probes_ms":\[\([^]]*\)\].*/\1/p'); longest $pm, queue at most $(echo "$l" | jget idle_probe_max_queue_ms)"
	done
} >&2
