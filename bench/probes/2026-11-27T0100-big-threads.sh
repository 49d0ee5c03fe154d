set -u
O=$OUT/r; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
B=.carry/bench
for v in new old; do
  if [ $v = new ]; then F=.carry/bin/fftbloom; else F=.carry/baseline/fftbloom; fi
  $F bench --suite big --runs 3 --warmup 1 > $O/big-$v.jsonl 2> $O/big-$v.err
  $F bench --suite big --only big.4320p.k129.fp32,big.8k2.k129.fp32 --gpu-frame-memory 512M --runs 3 --warmup 1 > $O/big512-$v.jsonl 2> $O/big512-$v.err
  grep "^big\|whole call" $O/big-$v.err $O/big512-$v.err | cut -c1-200
done
# the blooms (back to back after the untimed warm-up; whole calls) and the peers, in one session
sh $B/run.sh bloom --only bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.fp32 --variant default --repeat 2 --results $O > $O/bloom.out 2> $O/bloom.err
grep "GPU\|whole call" $O/bloom.err | cut -c1-160
.carry/baseline/fftbloom bench --suite bloom --only bloom.1080p.k256.fp32,bloom.2160p.k512.fp32 --runs 20 > $O/bloom-old.jsonl 2> $O/bloom-old.err
grep "whole call" $O/bloom-old.err
sh $B/run.sh peers --peers torch,vkfft --results $O > $O/peers.out 2> $O/peers.err
grep "fft.2d\|bloom\." $O/peers.err | head -12
cd $OUT && tar czf r.tgz r && rm -rf r
