set -u
O=$OUT/r; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
B=.carry/bench
for r in 1 2; do for v in new old; do
  if [ $v = new ]; then F=.carry/bin/fftbloom; else F=.carry/baseline/fftbloom; fi
  $F bench --suite bloom --only bloom.1080p.k256.fp32,bloom.2160p.k512.fp32 --runs 20 > $O/calls-$v-$r.jsonl 2> $O/calls-$v-$r.err
  grep "whole call" $O/calls-$v-$r.err | sed "s/^/$v $r /"
done; done
for v in new old; do
  if [ $v = new ]; then F=.carry/bin/fftbloom; else F=.carry/baseline/fftbloom; fi
  $F bench --suite big --runs 3 --warmup 1 > $O/big-$v.jsonl 2> $O/big-$v.err
  $F bench --suite big --only big.4320p.k129.fp32,big.8k2.k129.fp32 --gpu-frame-memory 512M --runs 3 --warmup 1 > $O/big512-$v.jsonl 2> $O/big512-$v.err
  grep "whole call" $O/big-$v.err $O/big512-$v.err | sed "s/^/$v /" | cut -c1-200
done
# the daemon's JPEG path unchanged: one short load
env BUILD=.carry/bin E2E_FRAMES=$B/frames E2E_SIZE=1920x1080 E2E_NEW_SIZE=1280x720 E2E_SECONDS=6 E2E_COLD=0 \
  E2E_CLIENTS="32 64" E2E_OUT=$O/e2e.jsonl sh $B/e2e.sh > /dev/null 2> $O/e2e.err
grep "^e2e" $O/e2e.err | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
