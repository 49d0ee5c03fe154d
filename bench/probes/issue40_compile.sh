#!/bin/bash
# Issue 40, item 4 (no request waits for a compile), in one device call under 3 minutes
# (bench/README.md "On another host"; a pack in .carry built with `make all build/bench/compile_probe`):
#  A. bench/compile_probe with the driver's disk cache off: (a) does a compile in flight block the
#     dispatches of the same context and of the process's other contexts (a loop of tiny
#     dispatches, glFinish each, on the GPU thread while programs compile (8 of 24 rounds, then
#     6 of 64): blocking on it, with GL_KHR_parallel_shader_compile on it, on a compile thread of
#     the share group or of its own context, each blocking or with the extension); (b) does
#     polling COMPLETION_STATUS let the loop go on (par-same-*: the loop polls between
#     iterations); (c) a program loaded from a
#     binary in a new process: its first dispatch cold, and after a warm-up dispatch of no work
#     groups (direct, indirect), of an empty range, or of an empty range on a compile thread.
#  B. the issue's two rows with each --compile-mode (parallel, thread, inline), each daemon with
#     nothing cached (--program-cache none, --fft-wisdom none, --driver-cache none,
#     __GL_SHADER_DISK_CACHE=0, an empty HOME):
#     fresh: start -> /readyz 200 (ms; on a GPU the 1920x1080 start plan is built before), then
#       the first 1080p request sent after it (curl's time_total and Server-Timing), then two
#       more, and a first 1280x720 request (a new size: borrows the start plan).
#     idle: a 1080p request, a 1280x720 one (a new size: borrows, its plan wanted in idle time),
#       then 1080p requests 0.7 s apart (past the 0.5 s idle grace: each may meet a wanted
#       plan's compiles) and 2.5 s apart (past the tuner's 2 s: its candidates' compiles);
#       its figure: the slowest of those 1080p requests less the fastest (the extra wait).
#     One "figure ..." line per figure at the end of summary.txt (and on stdout).
#     With --compile-mode process (MODES=process; auto on a GPU) the idle row goes on a request a second until a
#     successor has taken over (TAKEOVER_S, default 120, at most), then four more.
# MODES (default "parallel thread inline") picks the modes of B, ROUNDS (default 1) repeats its
# idle row (labels idle-MODE, idle-MODE2, ...), NO_PROBE=1 leaves out A, NO_FRESH=1 the fresh
# row. FRAME (default 1920x1080) and NEW (default 1280x720) pick the rows' frames from
# bench/frames. EXTRA_OPTS are passed to every daemon (4a54632's --cpu-standin was measured so).
# Here (no pack, llvmpipe): HERE=1 bash bench/probes/issue40_compile.sh runs B alone on build/
#   (the GPU engine) with frames made by cjpeg, of HERE_FRAME (480x270) and HERE_NEW (320x180):
#   llvmpipe takes a minute for a first 1080p bloom. A software renderer builds no start plan:
#   --warm-sizes HERE_FRAME is passed instead, so that the rows say the same thing.
# Results: $OUT/r.tgz (compile_probe's JSON lines, the daemons' logs and a summary.txt).
# usage (from the repository root, the pack in .carry): bash bench/probes/issue40_compile.sh
R=${OUT:-/tmp}/r; mkdir -p "$R"
S=$R/summary.txt
# the host's curl with the host's libraries: a pack's lib/, first in LD_LIBRARY_PATH for the
# packed binaries, may hold an older libcurl than the host's curl needs
curl() { LD_LIBRARY_PATH= command curl "$@"; }
export __GL_SHADER_DISK_CACHE=0 MESA_SHADER_CACHE_DISABLE=true
if [ -n "${HERE:-}" ]; then
	FL=${HERE_FRAME:-480x270} NL=${HERE_NEW:-320x180}
	P=$PWD B=$PWD/build EXTRA="--warm-sizes $FL"
	export FFTBLOOM_ENGINE=gpu # auto picks the CPU engine on a software renderer
	for s in $FL $NL; do
		/usr/bin/python3 -c "import sys, numpy as np; w, h = map(int, sys.argv[1].split('x')); \
a = (np.random.default_rng(1).random((h, w, 3)) * 255).astype(np.uint8); \
sys.stdout.buffer.write(b'P6 %d %d 255 ' % (w, h) + a.tobytes())" $s | cjpeg -quality 90 >"$R/$s.jpg"
	done
	F=$R/$FL.jpg N=$R/$NL.jpg
	{ nproc; date -u; git rev-parse HEAD; } >"$R/card.txt" 2>&1
else
P=$PWD/.carry
set -- "$P"
. "$P/bench/remote_env.sh" "$P"
B=$P/bin EXTRA=
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
CP=$B/bench/compile_probe
# A: the probe (with the pack only)
if [ -z "${HERE:-}" ] && [ -z "${NO_PROBE:-}" ]; then
timeout 45 "$CP" --programs 8 --size 24 >"$R/probe_r24.jsonl" 2>"$R/probe_r24.err"
timeout 30 "$CP" --programs 6 --size 64 --scenario par-same-link,thread-shared,thread-shared-par,thread-other-par \
	>"$R/probe_r64.jsonl" 2>"$R/probe_r64.err"
rm -rf /tmp/p40bin
timeout 15 "$CP" --programs 15 --size 24 --save /tmp/p40bin 2>"$R/probe_save.err"
timeout 20 "$CP" --programs 15 --size 24 --load /tmp/p40bin >"$R/probe_load.jsonl" 2>"$R/probe_load.err"
python3 - "$R"/probe_*.jsonl >>"$S" <<'EOF'
import json, sys
for f in sys.argv[1:]:
    for l in open(f):
        try: d = json.loads(l)
        except ValueError: continue
        m, x = d.get("metrics", {}), d.get("detail", {})
        keys = ["loop_median_ms", "loop_p99_ms", "loop_max_ms", "loop_lost_ms", "compile_window_ms",
                "poll_max_ms", "submit_max_ms", "ready_after_max_ms", "build_median_ms",
                "first_dispatch_median_ms", "warm_median_ms", "second_dispatch_median_ms"]
        v = {k: round(float(m.get(k, x.get(k))), 2) for k in keys if k in m or k in x}
        print(d["id"], v)
EOF
fi
FW=${FRAME:-1920x1080} NL=${NEW:-1280x720}
FL=$FW; [ "$FW" = 1920x1080 ] && FL=1080p
F=$P/bench/frames/$FW/$(ls "$P/bench/frames/$FW" | head -n 1)
N=$P/bench/frames/$NL/$(ls "$P/bench/frames/$NL" | head -n 1)
fi
# B: the daemon rows
Q='kernel_preset=gaussian:sigma=8&format=jpeg'
PORT=8097
start() { # LABEL OPTIONS...: a daemon with nothing cached; sets pid and ready_ms
	local label=$1; shift
	rm -rf /tmp/h40; mkdir -p /tmp/h40
	local t0; t0=$(date +%s%N)
	HOME=/tmp/h40 XDG_CACHE_HOME=/tmp/h40 "$B/fftbloomd" --listen 127.0.0.1 --port $PORT --log-level debug \
		--program-cache none --fft-wisdom none --driver-cache none $EXTRA ${EXTRA_OPTS:-} "$@" >"$R/d-$label.log" 2>&1 &
	pid=$!
	for i in $(seq 12000); do
		curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/readyz 2>/dev/null | grep -q 200 && break
		sleep 0.005
	done
	ready_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}
req() { # FILE: one request; prints "ms status Server-Timing"
	curl -s -o /tmp/p40.out -D /tmp/p40.hdr -w '%{time_total} %{http_code}' --data-binary @"$1" \
		-H 'Content-Type: image/jpeg' "http://127.0.0.1:$PORT/v1/bloom?$Q" |
		awk '{printf "%.1f ms %s", $1 * 1000, $2}'
	printf ' %s\n' "$(grep -i '^server-timing' /tmp/p40.hdr | tr -d '\r' | cut -c 16-)"
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null; }
fresh() { # LABEL OPTIONS...
	local label=$1; shift
	start "fresh-$label" "$@"
	local first; first=$(req "$F")
	{ echo "fresh $label ($*): ready after $ready_ms ms"; echo "  request 1: $first"
	  for k in 2 3; do echo "  request $k: $(req "$F")"; done
	  echo "  $NL (new size): $(req "$N")"; } >>"$S"
	echo "figure fresh $label: ready $ready_ms ms, first $FL request after ready ${first%% ms*} ms" >>"$R/figures.txt"
	sleep 1; stop
}
idle() { # LABEL OPTIONS...
	local label=$1; shift
	start "idle-$label" "$@"
	local t=$R/idle-$label.ms r
	: >"$t"
	{
		echo "idle $label ($*): ready after $ready_ms ms"
		echo "  $FL: $(req "$F")"; echo "  $NL (new size): $(req "$N")"
		for k in 1 2 3 4 5 6 7 8; do sleep 0.7; r=$(req "$F"); echo "${r%% ms*}" >>"$t"; echo "  +0.7 s $FL: $r"; done
		for k in 1 2 3 4; do sleep 2.5; r=$(req "$F"); echo "${r%% ms*}" >>"$t"; echo "  +2.5 s $FL: $r"; done
		if grep -q "idle work in a successor process" "$R/d-idle-$label.log"; then
			# --compile-mode process (or auto on a GPU): requests a second apart until a successor has taken over
			# (TAKEOVER_S, default 120, at most), then four more: the new worker's first ones
			local k=0
			until grep -q "serves device" "$R/d-idle-$label.log" || [ $k -ge "${TAKEOVER_S:-120}" ]; do
				sleep 1; k=$((k + 1)); r=$(req "$F"); echo "${r%% ms*}" >>"$t"; echo "  +1 s $FL: $r"
			done
			grep "serves device\|plans built and idle work done" "$R/d-idle-$label.log" | sed 's/^/  log: /'
			for k in 1 2 3 4; do sleep 1; r=$(req "$F"); echo "${r%% ms*}" >>"$t"; echo "  after the takeover +1 s $FL: $r"; done
		fi
	} >>"$S"
	stop
	grep -c ': built in\|built on the compile thread\|submitted in parallel' "$R/d-idle-$label.log" | sed 's/^/  programs built: /' >>"$S"
	sort -n "$t" | awk -v l="$label" -v f="$FL" 'NR == 1 {lo = $1} {hi = $1} END {printf "figure idle %s: %s requests during idle work %.1f-%.1f ms, extra %.1f ms\n", l, f, lo, hi, hi - lo}' >>"$R/figures.txt"
}
: >"$R/figures.txt"
MODES=${MODES:-parallel thread inline}
[ -n "${NO_FRESH:-}" ] || for m in $MODES; do fresh "$m" --compile-mode "$m"; done
for r in $(seq "${ROUNDS:-1}"); do
	for m in $MODES; do idle "$m${r#1}" --compile-mode "$m"; done
done
cat "$R/figures.txt" >>"$S"
cat "$S"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r && rm -rf "$R"
