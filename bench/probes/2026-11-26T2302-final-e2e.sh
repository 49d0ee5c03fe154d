set -u
O=$OUT/r; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
env BUILD=.carry/bin E2E_FRAMES=.carry/bench/frames E2E_SIZE=1920x1080 E2E_NEW_SIZE=2560x1440 E2E_COLD=0 E2E_SECONDS=6 E2E_CLIENTS="32 64 32" E2E_VARIANT=final E2E_OUT=$O/e2e-final.jsonl sh .carry/bench/e2e.sh > $O/e2e-final.out 2> $O/e2e-final.err
grep "^e2e\|server decode" $O/e2e-final.err | head -8
cd $OUT && tar czf r.tgz r && rm -rf r
