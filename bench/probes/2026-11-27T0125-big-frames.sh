set -u
O=$OUT/r; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
PY=${PYTHON:-python3}
timeout 560 $PY .carry/bench/big_frames.py --bin .carry/bin --work /tmp/big --sizes 7680x4320,16384x16384 --budgets 256M --ops convolve,bloom > $O/big-frames.jsonl 2> $O/big-frames.err
echo "rc=$?"
tail -20 $O/big-frames.err
cd $OUT && tar czf r.tgz r && rm -rf r
