set -u
O=$OUT/r; mkdir -p $O
B=.carry/bin
ready() { i=0; until $B/fftbloomd --health-check http://127.0.0.1:$1/readyz >/dev/null 2>&1; do sleep 0.05; i=$((i+1)); [ $i -gt 3000 ] && return 1; done; }
one() { l=$1; pc=$2; secs=$3; shift 3
  dc=$(mktemp -d)
  __GL_SHADER_DISK_CACHE_PATH=$dc $B/fftbloomd --listen 127.0.0.1 --port 8090 --log-level debug --program-cache $pc --fft-idle-tune off "$@" > $O/$l.log 2>&1 &
  p=$!; ready 8090; sleep $secs; kill $p; wait $p 2>/dev/null
  echo "$l: $(grep -o 'rehearsed in idle time ([0-9.]* ms)' $O/$l.log | tr '\n' ' ') | builds: $(grep -c 'built in' $O/$l.log) loads: $(grep -c 'loaded from its binary' $O/$l.log)"
}
one proc /tmp/pcp 12
one proc-restart /tmp/pcp 8
run() { v=$1; shift
  env BUILD=.carry/bin E2E_FRAMES=.carry/bench/frames E2E_SIZE=1920x1080 E2E_NEW_SIZE=2560x1440 E2E_COLD=0 E2E_SECONDS=6 E2E_CLIENTS="32 64 32" E2E_VARIANT=$v E2E_OUT=$O/e2e-$v.jsonl E2E_LOG_DIR=$O/logs-$v sh .carry/bench/e2e.sh --log-level debug "$@" > $O/e2e-$v.out 2> $O/e2e-$v.err
  grep "^e2e" $O/e2e-$v.err | head -4
  grep -o "rehearsed in idle time ([0-9.]* ms)\|a 2560x1440 job held the thread [0-9.]* ms ([^)]*)" $O/logs-$v/*.log | head -5
}
run proc-a
run thread-a --compile-process off
run thread-b --compile-process off
run proc-b
cd $OUT && tar czf r.tgz r && rm -rf r
