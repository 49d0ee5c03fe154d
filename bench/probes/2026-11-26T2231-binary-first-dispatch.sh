set -u
O=$OUT/r; mkdir -p $O
B=.carry/bin
ready() { i=0; until $B/fftbloomd --health-check http://127.0.0.1:$1/readyz >/dev/null 2>&1; do sleep 0.05; i=$((i+1)); [ $i -gt 3000 ] && return 1; done; }
one() { # exe label cachedir secs opts
  exe=$1; l=$2; pc=$3; secs=$4; shift 4
  dc=$(mktemp -d); 
  __GL_SHADER_DISK_CACHE_PATH=$dc $exe --listen 127.0.0.1 --port 8090 --log-level debug --program-cache $pc --fft-idle-tune off "$@" > $O/$l.log 2>&1 &
  p=$!; ready 8090; sleep $secs; kill $p; wait $p 2>/dev/null
  echo "$l: $(grep -o 'rehearsed in idle time ([0-9.]* ms)' $O/$l.log | tr '\n' ' ') | builds: $(grep -c 'built in' $O/$l.log) loads: $(grep -c 'loaded from its binary' $O/$l.log)"
}
for r in 1 2; do
  one .carry/exp/fftbloomd-finish thread-$r /tmp/pct$r 14 --compile-process off
  one .carry/exp/fftbloomd-finish thread-$r-restart /tmp/pct$r 8 --compile-process off
  one .carry/exp/fftbloomd-nofinish procnf-$r /tmp/pcn$r 14
  one .carry/exp/fftbloomd-nofinish procnf-$r-restart /tmp/pcn$r 8
  one .carry/exp/fftbloomd-finish procf-$r /tmp/pcf$r 14
  one .carry/exp/fftbloomd-finish procf-$r-restart /tmp/pcf$r 8
done
cd $OUT && tar czf r.tgz r && rm -rf r
