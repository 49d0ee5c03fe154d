#!/bin/sh
# A load of two frame sizes at once: the daemon warmed on the first size only, then every
# client sends the first size's frames and, one request in (frames + 1), a frame of a second
# size the daemon has no plan for. The second size borrows a plan (in tiles when it is larger)
# until its own is built between the jobs. Prints loadgen's report, the plan counters of
# /v1/info after the load and the daemon's log lines about the wanted plan. One codec thread a
# core, as bench/e2e.sh.
#
# usage: [VAR=value ...] sh bench/mixed_sizes.sh [fftbloomd options ...]
#   BUILD=build        $BUILD/fftbloomd, $BUILD/bench/loadgen
#   MIX_FRAMES=bench/frames   frames: $MIX_FRAMES/SIZE/*.jpg (make bench-frames, bench/make_frames.sh)
#   MIX_SIZE=1920x1080 MIX_NEW=2560x1440 MIX_CLIENTS=32 MIX_SECONDS=20
#   MIX_QUERY='kernel_preset=gaussian:sigma=8&format=jpeg'
set -eu
BUILD=${BUILD:-build}
MIX_FRAMES=${MIX_FRAMES:-bench/frames}
MIX_SIZE=${MIX_SIZE:-1920x1080}
MIX_NEW=${MIX_NEW:-2560x1440}
MIX_CLIENTS=${MIX_CLIENTS:-32}
MIX_SECONDS=${MIX_SECONDS:-20}
MIX_QUERY=${MIX_QUERY:-kernel_preset=gaussian:sigma=8&format=jpeg}
daemon=$BUILD/fftbloomd
loadgen=$BUILD/bench/loadgen
for b in "$daemon" "$loadgen"; do
	[ -x "$b" ] || { echo "mixed_sizes.sh: no $b" >&2; exit 1; }
done
frames=$(ls "$MIX_FRAMES/$MIX_SIZE"/*.jpg)
new=$(ls "$MIX_FRAMES/$MIX_NEW"/*.jpg | head -n 1)
[ -n "$frames" ] && [ -n "$new" ] || { echo "mixed_sizes.sh: no frames of $MIX_SIZE or $MIX_NEW" >&2; exit 1; }
tmp=$(mktemp -d /tmp/fftbloom-mixed.XXXXXX)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
"$daemon" --queue-size 256 --max-per-ip 0 --codec-threads "$(nproc)" --program-cache "$tmp/programs" "$@" \
	--listen 127.0.0.1 --port 0 \
	>"$tmp/log" 2>&1 &
pid=$!
port=""
i=0
while [ -z "$port" ] && [ $i -lt 600 ]; do
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; exit 1; }
	port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/log" | head -n 1)
	[ -n "$port" ] || sleep 0.1
	i=$((i + 1))
done
url="http://127.0.0.1:$port/v1/bloom?$MIX_QUERY"
until "$daemon" --health-check "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do sleep 0.1; done
fargs=""
for f in $frames; do fargs="$fargs -f $f"; done
"$loadgen" -c 2 -d 300 -n 16 -t 120 -u "$url" $fargs >/dev/null 2>&1 # warm: the first size only
echo "mixed load: $MIX_CLIENTS clients, $MIX_SECONDS s, $(echo "$frames" | wc -l) frames of $MIX_SIZE and one of $MIX_NEW in turn"
"$loadgen" -c "$MIX_CLIENTS" -d "$MIX_SECONDS" -t 120 -u "$url" $fargs -f "$new" \
	--metrics-url "http://127.0.0.1:$port/metrics" --server-pid "$pid" 2>&1 || true
"$loadgen" --get "http://127.0.0.1:$port/v1/info" | tr -d ' \n' |
	sed -n 's/.*"caches":{\([^}]*\)}.*/plan counters after the load: \1\n/p' | tr ',' ' '
grep -E 'idle time|borrow' "$tmp/log" || true
