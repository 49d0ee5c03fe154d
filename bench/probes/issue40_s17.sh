#!/bin/bash
# Issue 40, the bloom's rows measured with their ends in both kinds of rounds (2026-11-29): since
# issue40_s16.sh each invocation count is also measured in the other kind of rounds (two vec2
# rounds or four float rounds; the rule's FFT_FLOAT_ROUNDS_TO is the H200's). PACK/noio holds
# the pack's fftbloom, fftbloom-bench and fftbloomd built with the shipped ends lines left out.
#  A. noio on an empty wisdom file: the bloom suite's blooms once, each plan's rows measured at
#     its first frame (w.txt, tune.log);
#  B. two rounds alternated, a process each: the product (shipped wisdom, nothing measured)
#     against noio on w.txt (blooms.txt, blooms.jsonl);
#  C. the daemon's idle path (noio fftbloomd, nothing cached, an empty wisdom file): a 256x256
#     kernel registered, a 1920x1080 float frame (PFM) bloomed, then requests 2.5 s apart (past
#     the tuner's 2 s) while idle steps measure the rows: each request's time (the extra over the
#     fastest is what the measuring costs a request), the log's measuring and rebuild lines, and
#     the answer after the rebuild against the first (daemon.txt, d.log).
# usage (repository root, a pack in .carry with noio/): bash bench/probes/issue40_s17.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/s17; mkdir -p "$R"
M=${MACHINE:-h200}
curl() { LD_LIBRARY_PATH= command curl "$@"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
IDS=bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.k256.fp16,bloom.1080p.full.fp32,bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.2160p.k512.fp16
B="--suite bloom --only $IDS --variant default --machine $M --program-cache none"
: >"$R/w.txt"
timeout 300 "$P/noio/fftbloom" bench $B --runs 5 --verbose --fft-wisdom "$R/w.txt" \
	>"$R/tune.jsonl" 2>"$R/tune.log"
echo "tune rc $?" >>"$R/tune.log"
grep -E "FFT wisdom: the bloom|tune rc" "$R/tune.log"
cat "$R/w.txt"
for round in 1 2; do
	for who in product noio; do
		if [ $who = product ]; then
			timeout 150 "$P/bin/fftbloom" bench $B --runs 30 --fft-wisdom none
		else
			timeout 150 "$P/noio/fftbloom" bench $B --runs 30 --fft-wisdom "$R/w.txt"
		fi >>"$R/blooms.jsonl" 2>"$R/blooms-$who-$round.txt"
		echo "== $who round $round rc $?"
		grep -E "^bloom\." "$R/blooms-$who-$round.txt"
	done
done | tee "$R/blooms.txt"
# C: the daemon
python3 - "$R" <<'EOF'
import array, math, random, sys
def pfm(path, w, h, f):
    a = array.array('f', (f(x, y, c) for y in range(h) for x in range(w) for c in range(3)))
    with open(path, 'wb') as o:
        o.write(b'PF\n%d %d\n-1.0\n' % (w, h)); a.tofile(o)
random.seed(1)
pfm(sys.argv[1] + '/k256.pfm', 256, 256,
    lambda x, y, c: math.exp(-((x - 128) ** 2 + (y - 128) ** 2) / (2 * 40.0 ** 2)))
pfm(sys.argv[1] + '/frame.pfm', 1920, 1080, lambda x, y, c: random.random() * 2)
EOF
export __GL_SHADER_DISK_CACHE=0
rm -rf /tmp/h17; mkdir -p /tmp/h17
: >"$R/dw.txt"
PORT=8097 U=http://127.0.0.1:8097
HOME=/tmp/h17 XDG_CACHE_HOME=/tmp/h17 "$P/noio/fftbloomd" --listen 127.0.0.1 --port $PORT \
	--log-level debug --program-cache none --driver-cache none --fft-wisdom "$R/dw.txt" \
	>"$R/d.log" 2>&1 &
pid=$!
for i in $(seq 6000); do curl -s -o /dev/null -w '%{http_code}' $U/readyz | grep -q 200 && break; sleep 0.01; done
Q='kernel=k256&threshold=0.5&intensity=2&format=pfm'
req() { # OUT: one bloom; prints "ms status Server-Timing"
	curl -s -o "$1" -D /tmp/h17/hdr -w '%{time_total} %{http_code}' --data-binary @"$R/frame.pfm" \
		"$U/v1/bloom?$Q" | awk '{printf "%.1f ms %s", $1 * 1000, $2}'
	printf ' %s\n' "$(grep -i '^server-timing' /tmp/h17/hdr | tr -d '\r' | cut -c 16-)"
}
{
	echo "kernel PUT: $(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary @"$R/k256.pfm" $U/v1/kernels/k256)"
	echo "first: $(req "$R/first.pfm")"
	echo "second: $(req /tmp/h17/o.pfm)"
	for k in $(seq 10); do sleep 2.5; echo "+2.5 s: $(req /tmp/h17/o.pfm)"; done
	for k in $(seq 40); do grep -q "rebuilt with measured" "$R/d.log" && break; sleep 0.5; done
	sleep 1
	echo "after the rebuild: $(req "$R/after.pfm")"
	python3 - "$R/first.pfm" "$R/after.pfm" <<'EOF'
import array, sys
def rd(p):
    b = open(p, 'rb').read(); parts = b.split(b'\n', 3)
    a = array.array('f'); a.frombytes(parts[3]); return a
x, y = rd(sys.argv[1]), rd(sys.argv[2])
print("answer after the rebuild against the first: %d samples, max |diff| %.3g, max |first| %.3g"
      % (len(x), max(abs(p - q) for p, q in zip(x, y)), max(abs(p) for p in x)))
EOF
} >"$R/daemon.txt" 2>&1
kill $pid; wait $pid 2>/dev/null
cat "$R/daemon.txt"
grep -E "measuring the rows|FFT wisdom: the bloom|rebuilt with measured|idle step.*[0-9]{2,}\.[0-9] ms" "$R/d.log" | head -30
cat "$R/dw.txt"
rm -f "$R/frame.pfm" "$R/first.pfm" "$R/after.pfm"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s17 && rm -rf "$R"
