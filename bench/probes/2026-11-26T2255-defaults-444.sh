set -u
O=$OUT/r; mkdir -p $O
B=.carry/bin
F=.carry/bench/frames/1920x1080/frame0.jpg
Q='kernel_preset=gaussian:sigma=8&format=jpeg'
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
ready() { i=0; until $B/fftbloomd --health-check http://127.0.0.1:$1/readyz >/dev/null 2>&1; do sleep 0.05; i=$((i+1)); [ $i -gt 3000 ] && return 1; done; }
# the shipped defaults: no driver variables, the cache directory under HOME
H=/tmp/hh; rm -rf $H; mkdir -p $H
for phase in first restart; do
  env -u __GL_SHADER_DISK_CACHE_PATH -u MESA_SHADER_CACHE_DIR -u XDG_CACHE_HOME -u CACHE_DIRECTORY HOME=$H $B/fftbloomd --listen 127.0.0.1 --port 8098 --log-level debug --fft-idle-tune off > $O/dc-$phase.log 2>&1 &
  p=$!; ready 8098; sleep 0.5
  t=$($B/bench/loadgen -c 1 -d 60 -n 1 -t 120 -u "http://127.0.0.1:8098/v1/bloom?$Q" -f $F --json 2>/dev/null | sed 's/.*"p50_ms":\([0-9.]*\).*/\1/')
  sleep 8; kill $p; wait $p 2>/dev/null
  echo "defaults, $phase start: first request $t ms; driver folder $(du -sh $H/.cache/fftbloom/driver | cut -f1), $(find $H/.cache/fftbloom/driver -type f | wc -l) files"
done
grep -h "GL driver's shader cache" $O/dc-first.log
run() { v=$1; shift
  env BUILD=.carry/bin E2E_FRAMES=.carry/bench/frames444 E2E_SIZE=1920x1080 E2E_NEW_SIZE=2560x1440 E2E_COLD=0 E2E_SECONDS=6 E2E_CLIENTS="32 64 32" E2E_VARIANT=$v E2E_OUT=$O/e2e-$v.jsonl sh .carry/bench/e2e.sh "$@" > $O/e2e-$v.out 2> $O/e2e-$v.err
  grep "^e2e\|ceiling" $O/e2e-$v.err | head -9
}
run in444-idct
run in444-planes --jpeg-gpu-idct=false
cd $OUT && tar czf r.tgz r && rm -rf r
