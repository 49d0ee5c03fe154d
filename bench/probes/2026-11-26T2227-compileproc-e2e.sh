set -u
O=$OUT/r; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
run() { # variant opts...
  v=$1; shift
  env BUILD=.carry/bin E2E_FRAMES=.carry/bench/frames E2E_SIZE=1920x1080 E2E_NEW_SIZE=2560x1440 E2E_COLD=0 E2E_SECONDS=6 E2E_CLIENTS="32 64 32" E2E_VARIANT=$v E2E_OUT=$O/e2e-$v.jsonl E2E_LOG_DIR=$O/logs-$v sh .carry/bench/e2e.sh --log-level debug "$@" > $O/e2e-$v.out 2> $O/e2e-$v.err
  tail -n 12 $O/e2e-$v.err
}
( while sleep 2; do nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader; done > $O/smi.txt 2>&1 ) &
S=$!
run proc-a
run thread-a --compile-process off
run thread-b --compile-process off
run proc-b
kill $S
sort -u $O/smi.txt | head -20
cd $OUT && tar czf r.tgz r && rm -rf r
