#!/bin/bash
# Issue 42's CPU-engine gaps in one device call on a many-core GPU host (the GPU unused), under 3
# minutes: (1) end-to-end req/s of fftbloomd --engine cpu at 1080p JPEG (bench/loadgen, 32
# clients, 10 s), several frames at once (--cpu-frames 0, the default) against one at a time
# (--cpu-frames 1, the old worker; ROUNDS=2 alternates twice); (2) why 1080p was 1.45-1.72x
# plain FFTW on 16 threads: the engine's stages on all threads beside fftw_peer's, the engine
# with FFTW's own threads instead of the pool's callback (cpu_bloom --fftw-own-threads), with one
# FFT batched over 3 planes (--batched-plans: FFTW may split it 3 ways) against the default, one
# plane's FFT run on each plane (the default since it won on an H200 host), and on 4 threads
# (what a 1080p frame gets beside others);
# (3) conv2d on one thread and on all (the engine's own GEMM, side by side); (4) the engine
# against plain FFTW at 480x270 and 2160p on all threads (1080p: part 2; 2160p last: its
# FFTW_MEASURE planning takes ~40 s a program). Result lines and logs under $OUT/r, a summary on
# stdout (and $OUT/r/summary.txt, with the ratios).
# usage (from the repository root, a pack in .carry: make all build/bench/cpu_bloom
#        build/bench/cpu_conv_bench; sh bench/pack.sh):  bash bench/probes/issue42_cpu_daemon.sh
#   here, on the build tree:  LOCAL=1 bash bench/probes/issue42_cpu_daemon.sh  (THREADS=all cores)
#   PARTS picks parts (default 1234; 5: the threads sweep; 6: the pool's A/B); BASE=path/to/fftbloomd
#   adds an older daemon's lanes to part 1, NO_ONE=1 leaves out the one-frame-at-a-time daemon,
#   LANES="0 16" the --cpu-frames values part 1 runs (default 0, the lanes' own count);
#   BASE_BENCH=dir (an older build's cpu_bloom) is part 6's other side
if [ -n "${LOCAL:-}" ]; then
	B=${BUILD:-build}; FR=bench/frames; DB=$B; DAEMON=$B/fftbloomd
else
	P=$PWD/.carry
	. "$P/bench/remote_env.sh" "$P"
	B=$P/bin; FR=$P/bench/frames; DB=$P/bin; DAEMON=$P/bin/fftbloomd
fi
T=${THREADS:-$(nproc)}
SIZE=${SIZE:-1920x1080}   # the e2e frames' size
PARTS=${PARTS:-1234}      # which of the parts below run (5: the threads sweep)
SECONDS_LOAD=${SECONDS_LOAD:-10}
ROUNDS=${ROUNDS:-1}       # e2e rounds (each: lanes, then one frame at a time)
PORT=${PORT:-8093}
R=${OUT:-/tmp}/r; mkdir -p "$R"; W=$(mktemp -d /tmp/issue42-XXXXXX)
{ nproc; lscpu | grep -i 'model name'; date -u; cat "${P:-.}/COMMIT" 2>/dev/null || git describe --always --dirty; } >"$R/host.txt" 2>&1
say() { echo "$*" | tee -a "$R/summary.txt"; }

# (1) the daemon, several frames at once against one at a time
load() { # NAME CPU_FRAMES
	"$DAEMON" --engine cpu --port $PORT --queue-size 256 --max-per-ip 0 --cpu-frames "$2" \
		--program-cache none --fft-wisdom "$W/daemon-$1.wisdom" >"$R/daemon-$1.log" 2>&1 & local pid=$!
	for i in $(seq 100); do curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/readyz | grep -q 200 && break; sleep 0.2; done
	local url="http://127.0.0.1:$PORT/v1/bloom?kernel_preset=gaussian:sigma=8&format=jpeg"
	local files=$(for f in "$FR"/$SIZE/*.jpg; do printf -- '-f %s ' "$f"; done)
	# warm: every lane plans the size; then 3 s idle, in which the daemon measures its plans
	timeout 30 "$DB/bench/loadgen" -c 16 -d 2 $files -u "$url" >/dev/null 2>&1
	sleep 3
	timeout $((SECONDS_LOAD + 20)) "$DB/bench/loadgen" -c 32 -d "$SECONDS_LOAD" --json --label "e2e-cpu-$1" \
		--server-pid $pid --metrics-url http://127.0.0.1:$PORT/metrics -u "$url" $files \
		>>"$R/e2e.jsonl" 2>"$R/e2e-$1.txt"
	curl -s http://127.0.0.1:$PORT/v1/info >"$R/info-$1.json"
	kill $pid; wait $pid 2>/dev/null
	say "e2e $SIZE $1 (--cpu-frames $2): $(grep -m1 'req/s' "$R/e2e-$1.txt")"
	say "    $(grep -m1 'Server-Timing' "$R/e2e-$1.txt")"
}
case $PARTS in *1*)
	for r in $(seq "$ROUNDS"); do
		for l in ${LANES:-0}; do
			if [ "$l" = 0 ]; then load lanes-$r 0; else load lanes$l-$r "$l"; fi
		done
		# BASE: an older fftbloomd beside (its lanes), e.g. before a scheduling change
		[ -n "${BASE:-}" ] && { NEW=$DAEMON; DAEMON=$BASE; load base-lanes-$r 0; DAEMON=$NEW; }
		[ -n "${NO_ONE:-}" ] || load one-$r 1
	done ;;
esac

# (2) 1080p: where the engine's time goes on T threads, and on fewer
bloom() { # LABEL PROGRAM ARGS...
	local label=$1; shift
	timeout 60 "$@" >>"$R/bloom.jsonl" 2>"$R/bloom-$label.txt"
	say "$label: $(grep -E '^(fftw_peer )?bloom\.' "$R/bloom-$label.txt" | sed 's/  */ /g')"
}
ID=bloom.1080p.k256.fp32
case $PARTS in *2*)
bloom engine-$T "$B/bench/cpu_bloom" --threads $T --only $ID --max-seconds 2 --wisdom "$W/cpu.wisdom" --print-plan
grep -A400 'FFTW plans' "$R/bloom-engine-$T.txt" >"$R/plan-1080p-$T.txt"
say "the 1080p plans at $T threads, FFTW's thread splits (-xN: N pieces; whole plans in $R/plan-1080p-$T.txt):"
grep -o '[a-z0-9]*-thr-[^ ]*' "$R/plan-1080p-$T.txt" | sort | uniq -c | sort -rn | head -8 | tee -a "$R/summary.txt"
bloom peer-$T "$B/bench/fftw_peer" --threads $T --only $ID --max-seconds 2 --wisdom "$W/peer.wisdom"
bloom engine-own-threads-$T "$B/bench/cpu_bloom" --threads $T --fftw-own-threads --only $ID --max-seconds 2 --wisdom "$W/cpu.wisdom"
bloom engine-batched-plans-$T "$B/bench/cpu_bloom" --threads $T --batched-plans --only $ID --max-seconds 2 --wisdom "$W/cpu.wisdom"
[ 4 -lt "$T" ] && bloom engine-4 "$B/bench/cpu_bloom" --threads 4 --only $ID --max-seconds 2 --wisdom "$W/cpu.wisdom"
;; esac

# (3) conv2d: the GEMM shape on one thread and on all (OpenBLAS's AVX-512 kernels)
case $PARTS in *3*)
OPENBLAS_CORETYPE=SkylakeX timeout 40 "$B/bench/cpu_conv_bench" --runs 1 --only conv.conv2d_b16_c128_k3_128 \
	>"$R/conv.jsonl" 2>"$R/conv.txt"
say "conv2d: $(grep -c . "$R/conv.jsonl") lines"; grep -E ' ms ' "$R/conv.txt" | tee -a "$R/summary.txt"
;; esac

# (5) threads against time: 480x270 and 1080p on 1..T threads, the engine (one plane's plan on
#     each plane, and batched) beside plain FFTW on as many (what a size's thread rule should be)
case $PARTS in *5*)
for t in 1 2 4 8 16 32 64; do
	[ "$t" -le "$T" ] || continue
	for id in bloom.270p.k64.fp32 bloom.1080p.k256.fp32; do
		q=; [ $id = bloom.270p.k64.fp32 ] && q=--quick
		bloom sweep-engine-$t-$id "$B/bench/cpu_bloom" --threads $t --only $id --max-seconds 1 --wisdom "$W/cpu.wisdom"
		bloom sweep-batched-$t-$id "$B/bench/cpu_bloom" --threads $t --batched-plans --only $id --max-seconds 1 --wisdom "$W/cpu.wisdom"
		bloom sweep-peer-$t-$id "$B/bench/fftw_peer" $q --threads $t --only $id --max-seconds 1 --wisdom "$W/peer.wisdom"
	done
done ;;
esac

# (6) the pool's A/B: this build's cpu_bloom against BASE_BENCH's at 480x270 and 1080p on all
#     threads, the frame's threads by the rule and on every thread, alternated ROUNDS times
case $PARTS in *6*)
for r in $(seq "$ROUNDS"); do
	for side in new base; do
		X=$B/bench/cpu_bloom; [ $side = base ] && X=${BASE_BENCH:?the bench dir of an older build}/cpu_bloom
		for ppt in 0 -1; do
			bloom pool-$side-ppt$ppt-$r-270p "$X" --threads $T --pixels-per-thread $ppt --only bloom.270p.k64.fp32 --max-seconds 1 --wisdom "$W/cpu.wisdom"
		done
		bloom pool-$side-$r-1080p "$X" --threads $T --only bloom.1080p.k256.fp32 --max-seconds 2 --wisdom "$W/cpu.wisdom"
	done
	bloom pool-peer-$r-270p "$B/bench/fftw_peer" --quick --threads $T --only bloom.270p.k64.fp32 --max-seconds 1 --wisdom "$W/peer.wisdom"
	bloom pool-peer-$r-1080p "$B/bench/fftw_peer" --threads $T --only bloom.1080p.k256.fp32 --max-seconds 2 --wisdom "$W/peer.wisdom"
done ;;
esac

# (4) the ratios at the three sizes
case $PARTS in *4*)
bloom engine-270p "$B/bench/cpu_bloom" --threads $T --only bloom.270p.k64.fp32 --max-seconds 2 --wisdom "$W/cpu.wisdom"
bloom peer-270p "$B/bench/fftw_peer" --quick --threads $T --only bloom.270p.k64.fp32 --max-seconds 2 --wisdom "$W/peer.wisdom"
bloom engine-2160p "$B/bench/cpu_bloom" --threads $T --only bloom.2160p.k512.fp32 --max-seconds 3 --wisdom "$W/cpu.wisdom"
bloom peer-2160p "$B/bench/fftw_peer" --threads $T --only bloom.2160p.k512.fp32 --max-seconds 3 --wisdom "$W/peer.wisdom"
;; esac
[ -f "$R/bloom.jsonl" ] && python3 - "$R/bloom.jsonl" <<'EOF' | tee -a "$R/summary.txt"
import json, sys
best = {}
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    det = d.get("detail", {})
    key = (d.get("id"), d.get("impl"), det.get("threads"))
    ms = d.get("metrics", {}).get("ms")
    if ms is not None:
        best[key] = min(ms, best.get(key, ms))
for (wl, impl, th), ms in sorted(best.items(), key=lambda x: (str(x[0][0]), str(x[0][1]), str(x[0][2]))):
    peer = [v for (w2, i2, t2), v in best.items() if w2 == wl and i2 != impl and "fftw" in str(i2) and "fftbloom" not in str(i2)]
    ratio = " engine/peer %.2f" % (ms / min(peer)) if peer and "fftbloom" in str(impl) else ""
    print("%-24s %-28s threads %-4s %9.3f ms%s" % (wl, impl, th, ms, ratio))
EOF
rm -rf "$W"
[ -n "${LOCAL:-}" ] || { tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" r && rm -rf "$R"; }
