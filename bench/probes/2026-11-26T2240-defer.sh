set -u
O=$OUT/r; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
F=.carry/bench/frames/1920x1080
Q='kernel_preset=gaussian:sigma=8&format=jpeg'
fargs=""; for f in $F/*.jpg; do fargs="$fargs -f $f"; done
run() { v=$1; b=$2; shift 2
  env BUILD=$b E2E_FRAMES=.carry/bench/frames E2E_SIZE=1920x1080 E2E_NEW_SIZE=2560x1440 E2E_COLD=0 E2E_SECONDS=6 E2E_CLIENTS="32 64 32" E2E_VARIANT=$v E2E_OUT=$O/e2e-$v.jsonl sh .carry/bench/e2e.sh "$@" > $O/e2e-$v.out 2> $O/e2e-$v.err
  grep "^e2e" $O/e2e-$v.err | head -4
}
ready() { i=0; until .carry/bin/fftbloomd --health-check http://127.0.0.1:$1/readyz >/dev/null 2>&1; do sleep 0.05; i=$((i+1)); [ $i -gt 3000 ] && return 1; done; }
restart() { v=$1; b=$2; pc=/tmp/pc-$v; dc=/tmp/dc-$v; rm -rf $pc $dc; mkdir -p $dc
  for phase in fill restart; do
    __GL_SHADER_DISK_CACHE_PATH=$(mktemp -d) $b/fftbloomd --listen 127.0.0.1 --port 8095 --codec-threads 16 --queue-size 256 --log-level debug --program-cache $pc > $O/rs-$v-$phase.log 2>&1 &
    p=$!; ready 8095
    if [ $phase = fill ]; then sleep 12; else
      sleep 1
      $b/bench/loadgen -c 2 -d 300 -n 20 -t 120 -u "http://127.0.0.1:8095/v1/bloom?$Q" $fargs >/dev/null 2>&1
      $b/bench/loadgen -c 32 -d 6 -t 120 -u "http://127.0.0.1:8095/v1/bloom?$Q" $fargs --json --label rs-$v 2>/dev/null | tail -n 1 > $O/rs-$v.json
      echo "restart $v: $(sed 's/.*"rps":\([0-9.]*\).*"p99_ms":\([0-9.]*\).*/\1 req\/s p99 \2/' $O/rs-$v.json) | $(grep -o 'rehearsed in idle time ([0-9.]* ms)' $O/rs-$v-$phase.log | tr '\n' ' ') | stalls: $(grep -o 'held the thread [0-9.]* ms' $O/rs-$v-$phase.log | awk '{print $4}' | tr '\n' ' ')"
    fi
    kill $p; wait $p 2>/dev/null
  done
}
run new-a .carry/bin
run base-a .carry/base
run base-b .carry/base
run new-b .carry/bin
restart new-1 .carry/bin
restart base-1 .carry/base
restart base-2 .carry/base
restart new-2 .carry/bin
cd $OUT && tar czf r.tgz r && rm -rf r
