set -u
O=$OUT/r; mkdir -p $O
B=.carry/bin
F=.carry/bench/frames/1920x1080
Q='kernel_preset=gaussian:sigma=8&format=jpeg'
fargs=""; for f in $F/*.jpg; do fargs="$fargs -f $f"; done
ready() { i=0; until $B/fftbloomd --health-check http://127.0.0.1:$1/readyz >/dev/null 2>&1; do sleep 0.05; i=$((i+1)); [ $i -gt 3000 ] && return 1; done; }
__GL_SHADER_DISK_CACHE_PATH=$(mktemp -d) $B/fftbloomd --listen 127.0.0.1 --port 8096 --codec-threads 16 --queue-size 256 --log-level debug --program-cache none > $O/d.log 2>&1 &
p=$!; ready 8096; sleep 10
$B/bench/loadgen -c 2 -d 300 -n 8 -t 120 -u "http://127.0.0.1:8096/v1/bloom?$Q" $fargs >/dev/null 2>&1
date +%T.%N > $O/t0
for c in 1 2 3 4 5 6 7 8 9 10; do
  $B/bench/loadgen -c 32 -d 5 -t 120 -u "http://127.0.0.1:8096/v1/bloom?$Q" $fargs --json --label chunk$c 2>/dev/null | tail -n 1 >> $O/chunks.jsonl
  echo "chunk $c $(date +%T): $(tail -n 1 $O/chunks.jsonl | sed 's/.*"rps":\([0-9.]*\).*"p99_ms":\([0-9.]*\).*/\1 req\/s p99 \2/') gpu $(tail -n 1 $O/chunks.jsonl | sed 's/.*"gpu":\([0-9.]*\).*/\1/')"
done
curl -s http://127.0.0.1:8096/v1/info > $O/info.json 2>/dev/null || $B/bench/loadgen --get http://127.0.0.1:8096/v1/info > $O/info.json
kill $p; wait $p 2>/dev/null
grep -E "plan of|held the thread|idle step of a wanted" $O/d.log | cut -c1-200 | head -60
grep -c "mapped" $O/d.log
cd $OUT && gzip $O/d.log && tar czf r.tgz r && rm -rf r
