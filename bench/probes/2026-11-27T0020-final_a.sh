set -u
O=$OUT/r; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > $O/gpu.txt
cat .carry/COMMIT >> $O/gpu.txt
B=.carry/bench
# goal 1: no flags, built-in rules alone, tuned file; rounds interleaved; then a new size's first request
BENCH_FRAMES=$B/frames sh $B/fast_default.sh --repeat 2 --bin .carry/bin --results $O > $O/fd.out 2> $O/fd.err
tail -30 $O/fd.err
# the blooms: built-in rules alone against the default, alternated frame by frame
.carry/bin/fftbloom bench --suite bloom --only bloom.1080p.k256.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.fp32 \
  --repeat 2 --warm-seconds 1 --ab '--fft-wisdom builtin' > $O/ab.jsonl 2> $O/ab.err
grep -v "^{" $O/ab.err | grep "bloom\." | head -20
cd $OUT && tar czf r.tgz r && rm -rf r
