set -u
O=$OUT/r; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
B=.carry/bench
# the blooms, this build against bcd2d05's (no untimed back-to-back warm-up), one process a workload, rounds interleaved
sh $B/run.sh bloom --only bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.fp32 --variant default --repeat 3 --baseline .carry/baseline --results $O > $O/b2b.out 2> $O/b2b.err
grep "GPU" $O/b2b.err | cut -c1-140
# goal 1 again: no flags / built-in rules / tuned file, with the warm-up
BENCH_FRAMES=$B/frames sh $B/fast_default.sh --repeat 2 --no-e2e --bin .carry/bin --results $O > $O/fd.out 2> $O/fd.err
grep -A12 "workload (median" $O/fd.err
cd $OUT && tar czf r.tgz r && rm -rf r
