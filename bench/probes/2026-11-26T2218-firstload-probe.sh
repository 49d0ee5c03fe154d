# Probe: (1) program binary load times on this driver, (2) does another PROCESS compiling
# stall a loaded daemon, against compiles inside the daemon (fresh start).
set -u
B=.carry/bin
F=.carry/bench/frames/1920x1080
LG=$B/bench/loadgen
O=$OUT/r; mkdir -p $O
Q='kernel_preset=gaussian:sigma=8&format=jpeg'
fargs=""; for f in $F/*.jpg; do fargs="$fargs -f $f"; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
start() { # port log opts...
  p=$1; l=$2; shift 2
  $B/fftbloomd --listen 127.0.0.1 --port $p --codec-threads 16 --queue-size 256 "$@" > $l 2>&1 &
  echo $!
}
ready() { i=0; until $B/fftbloomd --health-check http://127.0.0.1:$1/readyz >/dev/null 2>&1; do sleep 0.05; i=$((i+1)); [ $i -gt 3000 ] && return 1; done; }
load() { # port label secs
  $LG -c 32 -d ${3:-8} -t 120 -u "http://127.0.0.1:$1/v1/bloom?$Q" $fargs --json --label $2 2>/dev/null | tail -n 1 >> $O/loads.jsonl
  tail -n 1 $O/loads.jsonl | sed 's/.*"rps":\([0-9.]*\).*"p99_ms":\([0-9.]*\).*/\1 \2/' ; }
export __GL_SHADER_DISK_CACHE=0
t0=$(date +%s.%N)
A=$(start 8080 $O/a1.log --program-cache /tmp/pcA --log-level debug); ready 8080
echo "A fresh ready after $(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}') s"
sleep 25; kill $A; wait $A 2>/dev/null
t0=$(date +%s.%N)
A=$(start 8080 $O/a2.log --program-cache /tmp/pcA --log-level debug); ready 8080
echo "A cached ready after $(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}') s"
sleep 8; kill $A; wait $A 2>/dev/null
A=$(start 8080 $O/a3.log --program-cache /tmp/pcA); ready 8080; sleep 3
$LG -c 2 -d 300 -n 20 -t 120 -u "http://127.0.0.1:8080/v1/bloom?$Q" $fargs >/dev/null 2>&1
for r in 1 2; do
echo "base$r: $(load 8080 base$r)"
# another process compiling its warm-up and spare plans from nothing, while A is loaded
Bp=$(start 8081 $O/b$r.log --program-cache none --log-level debug)
echo "other-proc$r: $(load 8080 otherproc$r)"
kill $Bp; wait $Bp 2>/dev/null
done
kill $A; wait $A 2>/dev/null
# the same in-process: a fresh daemon (no program cache) loaded at once after ready
for r in 1 2; do
C=$(start 8082 $O/c$r.log --program-cache none); ready 8082
$LG -c 2 -d 300 -n 20 -t 120 -u "http://127.0.0.1:8082/v1/bloom?$Q" $fargs >/dev/null 2>&1
echo "fresh-inproc$r: $(load 8082 fresh$r)"
echo "fresh-after$r: $(load 8082 freshafter$r)"
kill $C; wait $C 2>/dev/null
done
grep -h "loaded from its binary\|: built in" $O/a2.log | sed 's/.*program //' | awk '{print}' > $O/binload.txt
grep -c "built in" $O/a1.log $O/b1.log $O/c1.log
grep -h "loaded from its binary" $O/a2.log | sed 's/.* in \([0-9.]*\) ms.*/\1/' | sort -n | awk '{a[NR]=$1} END {print "binary loads:", NR, "min", a[1], "median", a[int(NR/2)+1], "max", a[NR]}'
grep -h ": built in" $O/a1.log | sed 's/.* in \([0-9.]*\) ms.*/\1/' | sort -n | awk '{a[NR]=$1} END {print "compiles:", NR, "min", a[1], "median", a[int(NR/2)+1], "max", a[NR]}'
cd $OUT && tar czf r.tgz r && rm -rf r
