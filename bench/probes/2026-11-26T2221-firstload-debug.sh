set -u
B=.carry/bin
F=.carry/bench/frames/1920x1080
LG=$B/bench/loadgen
O=$OUT/r; mkdir -p $O
Q='kernel_preset=gaussian:sigma=8&format=jpeg'
fargs=""; for f in $F/*.jpg; do fargs="$fargs -f $f"; done
start() { p=$1; l=$2; shift 2
  $B/fftbloomd --listen 127.0.0.1 --port $p --codec-threads 16 --queue-size 256 "$@" > $l 2>&1 & echo $!; }
ready() { i=0; until $B/fftbloomd --health-check http://127.0.0.1:$1/readyz >/dev/null 2>&1; do sleep 0.05; i=$((i+1)); [ $i -gt 3000 ] && return 1; done; }
load() { $LG -c 32 -d ${3:-8} -t 120 -u "http://127.0.0.1:$1/v1/bloom?$Q" $fargs --json --label $2 2>/dev/null | tail -n 1 >> $O/loads.jsonl
  tail -n 1 $O/loads.jsonl | sed 's/.*"rps":\([0-9.]*\).*"p99_ms":\([0-9.]*\).*/\1 \2/' ; }
export __GL_SHADER_DISK_CACHE=0
for run in fresh cached; do
  if [ $run = fresh ]; then pc=none; else pc=/tmp/pc; fi
  [ $run = fresh ] && { A=$(start 8080 $O/prime.log --program-cache /tmp/pc); ready 8080; sleep 20; kill $A; wait $A 2>/dev/null; }
  A=$(start 8080 $O/$run.log --program-cache $pc --log-level debug); ready 8080
  echo "$run: ready"; date +%T.%N
  $LG -c 2 -d 300 -n 20 -t 120 -u "http://127.0.0.1:8080/v1/bloom?$Q" $fargs >/dev/null 2>&1
  date +%T.%N
  echo "$run load1: $(load 8080 ${run}1)"; date +%T.%N
  echo "$run load2: $(load 8080 ${run}2)"
  kill $A; wait $A 2>/dev/null
done
cd $OUT && tar czf r.tgz r && rm -rf r
