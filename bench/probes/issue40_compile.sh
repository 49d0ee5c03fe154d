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
#  B. the issue's two rows, each daemon with nothing cached (--program-cache none, --fft-wisdom
#     none, --driver-cache none, __GL_SHADER_DISK_CACHE=0, an empty HOME):
#     fresh: start -> /readyz 200 (ms), then the first 1080p request sent after it (curl's
#       time_total and Server-Timing), then two more; with the defaults, with
#       --compile-thread off, and with --warm-sizes 1920x1080 (ready after its plan).
#     idle: a 1080p request, a 1280x720 one (a new size: borrows, its plan wanted in idle time),
#       then 1080p requests 0.7 s apart (past the 0.5 s idle grace: each may meet a wanted
#       plan's compiles) and 2.5 s apart (past the tuner's 2 s: its candidates' compiles);
#       with the defaults and with --compile-thread off.
# Results: $OUT/r.tgz (compile_probe's JSON lines, the daemons' logs and a summary.txt).
# usage (from the repository root, the pack in .carry): bash bench/probes/issue40_compile.sh
P=$PWD/.carry
set -- "$P"
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/r; mkdir -p "$R"
B=$P/bin
S=$R/summary.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
export __GL_SHADER_DISK_CACHE=0 MESA_SHADER_CACHE_DISABLE=true
CP=$B/bench/compile_probe
# A: the probe
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
# B: the daemon rows
F=$P/bench/frames/1920x1080/$(ls "$P/bench/frames/1920x1080" | head -n 1)
N=$P/bench/frames/1280x720/$(ls "$P/bench/frames/1280x720" | head -n 1)
Q='kernel_preset=gaussian:sigma=8&format=jpeg'
PORT=8097
start() { # LABEL OPTIONS...: a daemon with nothing cached; sets pid and ready_ms
	local label=$1; shift
	rm -rf /tmp/h40; mkdir -p /tmp/h40
	local t0; t0=$(date +%s%N)
	HOME=/tmp/h40 XDG_CACHE_HOME=/tmp/h40 "$B/fftbloomd" --listen 127.0.0.1 --port $PORT --log-level debug \
		--program-cache none --fft-wisdom none --driver-cache none "$@" >"$R/d-$label.log" 2>&1 &
	pid=$!
	for i in $(seq 6000); do
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
	{ echo "fresh $label ($*): ready after $ready_ms ms"; for k in 1 2 3; do echo "  request $k: $(req "$F")"; done; } >>"$S"
	sleep 1; stop
}
fresh default
fresh gputhread --compile-thread off
fresh warm --warm-sizes 1920x1080
idle() { # LABEL OPTIONS...
	local label=$1; shift
	start "idle-$label" "$@"
	{
		echo "idle $label ($*): ready after $ready_ms ms"
		echo "  1080p: $(req "$F")"; echo "  1280x720 (new size): $(req "$N")"
		for k in 1 2 3 4 5 6 7 8; do sleep 0.7; echo "  +0.7 s 1080p: $(req "$F")"; done
		for k in 1 2 3 4; do sleep 2.5; echo "  +2.5 s 1080p: $(req "$F")"; done
	} >>"$S"
	stop
	grep -c ': built in\|built on the compile thread' "$R/d-idle-$label.log" | sed 's/^/  programs built: /' >>"$S"
}
idle default
idle gputhread --compile-thread off
cat "$S"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r && rm -rf "$R"
