set -u
O=$OUT/r; mkdir -p $O
B=.carry/bin
F=.carry/bench/frames/1920x1080/frame0.jpg
Q='kernel_preset=gaussian:sigma=8&format=jpeg'
ready() { i=0; until $B/fftbloomd --health-check http://127.0.0.1:$1/readyz >/dev/null 2>&1; do sleep 0.05; i=$((i+1)); [ $i -gt 3000 ] && return 1; done; }
D=/tmp/drv; P=/tmp/prg; rm -rf $D $P; mkdir -p $D
phase() { l=$1; d=$2; p=$3
  __GL_SHADER_DISK_CACHE_PATH=$d __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 $B/fftbloomd --listen 127.0.0.1 --port 8097 --log-level debug --program-cache $p --fft-idle-tune off > $O/$l.log 2>&1 &
  pid=$!; ready 8097; sleep 0.5
  t=$($B/bench/loadgen -c 1 -d 60 -n 1 -t 120 -u "http://127.0.0.1:8097/v1/bloom?$Q" -f $F --json 2>/dev/null | sed 's/.*"p50_ms":\([0-9.]*\).*/\1/')
  sleep 10; kill $pid; wait $pid 2>/dev/null
  echo "$l: first request $t ms | compiles $(grep -h ': built in' $O/$l.log | sed 's/.* in \([0-9.]*\) ms.*/\1/' | sort -n | awk '{a[NR]=$1; s+=$1} END {printf "%d, sum %.0f, median %s", NR, s, a[int(NR/2)+1]}') | binary loads $(grep -c 'loaded from its binary' $O/$l.log) | $(grep -o 'rehearsed in idle time ([0-9.]* ms)' $O/$l.log | tr '\n' ' ')"
}
phase fill $D $P
phase drv-only $D none
phase prog-only $(mktemp -d) $P
phase both $D $P
phase neither $(mktemp -d) none
du -sh $D $P
cd $OUT && tar czf r.tgz r && rm -rf r
