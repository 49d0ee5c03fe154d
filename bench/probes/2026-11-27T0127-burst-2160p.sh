set -u
O=$OUT/r; mkdir -p $O/logs
B=.carry/bench
env BUILD=.carry/bin E2E_FRAMES=$B/frames E2E_SIZE=3840x2160 E2E_NEW_SIZE=1280x720 E2E_SECONDS=8 E2E_COLD=0 \
  E2E_CLIENTS="64 64" E2E_LOG_DIR=$O/logs E2E_OUT=$O/e2e-2160p.jsonl sh $B/e2e.sh > /dev/null 2> $O/e2e-2160p.err
grep "^loadgen\|status 5" $O/e2e-2160p.err | cut -c1-200
grep -o '"code": *"[a-z_]*"\|status=503[^"]*' $O/logs/*.log | sort | uniq -c | head
grep -i "budget\|503\|warn\|error" $O/logs/*.log | grep -v "status=200" | cut -c1-250 | sort | uniq -c | sort -rn | head -20
cd $OUT && tar czf r.tgz r && rm -rf r
