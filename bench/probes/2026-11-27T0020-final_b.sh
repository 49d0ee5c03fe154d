set -u
O=$OUT/r; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
B=.carry/bench
sh $B/run.sh peers --peers torch,vkfft --results $O > $O/peers.out 2> $O/peers.err
grep -i "fft.2d\|bloom\|copy\|error" $O/peers.err | head -30
# end to end: 1080p against clients, with a cold start's first results; then 2160p
env BUILD=.carry/bin E2E_FRAMES=$B/frames E2E_SIZE=1920x1080 E2E_NEW_SIZE=2560x1440 E2E_SECONDS=8 \
  E2E_CLIENTS="1 8 32 64 128" E2E_OUT=$O/e2e-1080p.jsonl sh $B/e2e.sh > /dev/null 2> $O/e2e-1080p.err
grep "^e2e\|loadgen c\|p50\|first" $O/e2e-1080p.err | cut -c1-220 | head -40
env BUILD=.carry/bin E2E_FRAMES=$B/frames E2E_SIZE=3840x2160 E2E_NEW_SIZE=2560x1440 E2E_SECONDS=8 E2E_COLD=0 \
  E2E_CLIENTS="8 32 64" E2E_OUT=$O/e2e-2160p.jsonl sh $B/e2e.sh > /dev/null 2> $O/e2e-2160p.err
grep "^e2e\|loadgen c\|p50" $O/e2e-2160p.err | cut -c1-220 | head -20
cd $OUT && tar czf r.tgz r && rm -rf r
