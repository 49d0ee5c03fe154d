#!/bin/bash
# The daemon's idle path of the bloom's rows measured (issue40_s17.sh, s18): DAEMON (a fftbloomd
# built without the shipped ends lines) with nothing cached and an empty wisdom file; a 256x256
# kernel registered, a 1920x1080 float frame (PFM) bloomed twice, then requests 2.5 s apart
# (past the tuner's 2 s idle grace) until the log has the rows' line and the rebuild after it (at
# most WAIT_S, default 90 s): each request's time and Server-Timing (the extra over the fastest is
# what idle work costs a request), the answer after the rebuild against the first, the log's
# measuring and slow idle-step lines. Writes R/daemon.txt, R/d.log, R/dw.txt.
# usage: bash bench/probes/rows_tune_daemon.sh PACK DAEMON R
P=$1 D=$2 R=$3
curl() { LD_LIBRARY_PATH= command curl "$@"; }
python3 - "$R" <<'PY'
import array, math, random, sys
def pfm(path, w, h, f):
    a = array.array('f', (f(x, y, c) for y in range(h) for x in range(w) for c in range(3)))
    with open(path, 'wb') as o:
        o.write(b'PF\n%d %d\n-1.0\n' % (w, h)); a.tofile(o)
random.seed(1)
pfm(sys.argv[1] + '/k256.pfm', 256, 256,
    lambda x, y, c: math.exp(-((x - 128) ** 2 + (y - 128) ** 2) / (2 * 40.0 ** 2)))
pfm(sys.argv[1] + '/frame.pfm', 1920, 1080, lambda x, y, c: random.random() * 2)
PY
export __GL_SHADER_DISK_CACHE=0
rm -rf /tmp/hrt; mkdir -p /tmp/hrt
: >"$R/dw.txt"
PORT=8097 U=http://127.0.0.1:8097
HOME=/tmp/hrt XDG_CACHE_HOME=/tmp/hrt "$D" --listen 127.0.0.1 --port $PORT --log-level debug \
	--program-cache none --driver-cache none --fft-wisdom "$R/dw.txt" >"$R/d.log" 2>&1 &
pid=$!
for i in $(seq 6000); do curl -s -o /dev/null -w '%{http_code}' $U/readyz | grep -q 200 && break; sleep 0.01; done
Q='kernel=k256&threshold=0.5&intensity=2&format=pfm'
req() { # OUT: one bloom; prints "ms status Server-Timing"
	curl -s -o "$1" -D /tmp/hrt/hdr -w '%{time_total} %{http_code}' --data-binary @"$R/frame.pfm" \
		"$U/v1/bloom?$Q" | awk '{printf "%.1f ms %s", $1 * 1000, $2}'
	printf ' %s\n' "$(grep -i '^server-timing' /tmp/hrt/hdr | tr -d '\r' | cut -c 16-)"
}
rebuilt() { # the rows' line, then a rebuild logged after it
	awk '/FFT wisdom: the bloom.s rows/ {w = 1} w && /rebuilt with measured/ {f = 1} END {exit !f}' "$R/d.log"
}
{
	echo "kernel PUT: $(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary @"$R/k256.pfm" $U/v1/kernels/k256)"
	echo "first: $(req "$R/first.pfm")"
	echo "second: $(req /tmp/hrt/o.pfm)"
	t0=$(date +%s)
	while ! rebuilt && [ $(($(date +%s) - t0)) -lt "${WAIT_S:-90}" ]; do
		sleep 2.5; echo "+2.5 s: $(req /tmp/hrt/o.pfm)"
	done
	rebuilt && echo "rows measured and the plan rebuilt after $(($(date +%s) - t0)) s" ||
		echo "no rebuild after the rows' line within ${WAIT_S:-90} s"
	sleep 1
	echo "after the rebuild: $(req "$R/after.pfm")"
	python3 - "$R/first.pfm" "$R/after.pfm" <<'PY'
import array, sys
def rd(p):
    b = open(p, 'rb').read(); parts = b.split(b'\n', 3)
    a = array.array('f'); a.frombytes(parts[3]); return a
x, y = rd(sys.argv[1]), rd(sys.argv[2])
print("answer after the rebuild against the first: %d samples, max |diff| %.3g, max |first| %.3g"
      % (len(x), max(abs(p - q) for p, q in zip(x, y)), max(abs(p) for p in x)))
PY
} >"$R/daemon.txt" 2>&1
kill $pid; wait $pid 2>/dev/null
cat "$R/daemon.txt"
grep -E "measuring the rows|FFT wisdom: the bloom|rebuilt with measured" "$R/d.log" | head -20
grep -E "idle step.*[0-9]{2,}\.[0-9] ms" "$R/d.log" | sed 's/.*idle step of //' | sort | uniq -c | sort -rn | head -5
cat "$R/dw.txt"
rm -f "$R/frame.pfm" "$R/first.pfm" "$R/after.pfm" "$R/k256.pfm"
