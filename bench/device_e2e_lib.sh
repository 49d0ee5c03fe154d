# Sourced by the device run scripts (bench/device_run32.sh, device_run33.sh): the end-to-end
# configurations on the GPU machine. Needs O (output folder), W (wisdom file), ngpus; defines
# run NAME PROCS OPTIONS...: PROCS daemons (1: the options as given; 2: one per GPU, or both on
# GPU 0 with one GPU, half the cores each), a warm-up, then 32 and 64 clients (E2E_CLIENTS),
# E2E_SECONDS each; one JSON line per load in $O/e2e.jsonl and a line of medians on stdout.
frames=$(ls ${E2E_FRAMES_DIR:-bench/frames/1920x1080}/*.jpg)
fargs=""
for f in $frames; do fargs="$fargs -f $f"; done
cores=$(nproc)
timeout 120 .carry/bin/bench/codec_ceiling $frames >"$O/ceiling.jsonl" 2>"$O/ceiling.err"
cut -c1-300 "$O/ceiling.jsonl"
P=18080
url="http://127.0.0.1:$P/v1/bloom?kernel_preset=gaussian:sigma=8&format=jpeg"
S=${E2E_SECONDS:-10}
run() {
	name=$1 procs=$2
	shift 2
	pids=""
	for i in $(seq 0 $((procs - 1))); do
		extra="--codec-threads $cores"
		[ "$procs" = 2 ] && extra="--gpus $((i % ngpus)) --codec-threads $((cores / 2))"
		.carry/bin/fftbloomd $extra --queue-size 256 --max-per-ip 0 --fft-wisdom $W \
			--listen 127.0.0.1 --port $P \
			"$@" >"$O/d-$name-$i.log" 2>&1 &
		pids="$pids $!"
		n=0
		until grep -q 'listening on' "$O/d-$name-$i.log" || [ $n -ge 300 ]; do
			sleep 0.1
			n=$((n + 1))
		done
	done
	.carry/bin/bench/loadgen -c 8 -d 60 -n 64 -t 120 -u "$url" $fargs >/dev/null 2>&1
	for c in ${E2E_CLIENTS:-32 64}; do
		.carry/bin/bench/loadgen -c $c -d $S -t 120 -u "$url" $fargs --json --label "$name-c$c" \
			2>"$O/lg.err" >>"$O/e2e.jsonl"
		echo "$name c$c: $(grep -E 'req/s|Server-Timing' "$O/lg.err" | sed 's/.*ok (//; s/ within.*//; s/.*medians ms://' | tr '\n' ' ')"
	done
	sleep 1
	.carry/bin/bench/loadgen --get "http://127.0.0.1:$P/metrics" 2>/dev/null |
		grep -E '^fftbloom_planes_lent' | tr '\n' ' '
	echo
	for p in $pids; do kill -TERM $p; done
	wait
}
