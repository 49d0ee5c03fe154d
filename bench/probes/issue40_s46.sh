#!/bin/bash
# Issue 40, deliver 4: --compile-mode auto resolving to process on a GPU (44666f6), checked on the
# GPU host: tests/daemon/test_modes (the rule, and this host's renderer: a GPU, so process), then
# daemon test scripts whose daemons (FFTBLOOM_ENGINE=gpu, --compile-mode left at auto) now run
# idle work in successor processes, each with a cache folder of its own (as tests/run.sh gives):
# compile_test.py, workers_test.py (--gpus 0,0: four worker slots on one device), fast_test.py,
# http_test.py. Each script's output in NAME.txt, in $OUT/s46.tgz; $OUT/summary.txt has a line
# each. MODE=parallel sets FFTBLOOM_COMPILE_MODE (the default before 44666f6) for a baseline.
# usage (repository root; a pack in .carry with tests/daemon/test_modes copied in):
#   bash bench/probes/issue40_s46.sh [compile workers fast http]   (LIMIT: seconds a script; an
#   argument with a slash is a script's path: tests/soak/soak.py, tests/deploy/systemd_test.py)
P=$PWD/.carry
ARGS=("$@")
set -- "$P"
. "$P/bench/remote_env.sh" "$P"
export FFTBLOOM_ENGINE=gpu
[ -z "${MODE:-}" ] || export FFTBLOOM_COMPILE_MODE=$MODE
S=$OUT/summary.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u; cat "$P/COMMIT"; git log --oneline -1; echo "FFTBLOOM_COMPILE_MODE=${FFTBLOOM_COMPILE_MODE:-}"; } >"$S" 2>&1
"$P/tests/daemon/test_modes" >"$OUT/test_modes.txt" 2>&1
echo "test_modes rc=$?: $(grep -h 'renderer here' "$OUT/test_modes.txt")" >>"$S"
[ ${#ARGS[@]} -gt 0 ] || ARGS=(compile workers fast http)
for t in "${ARGS[@]}"; do
	t0=$(date +%s)
	f=tests/daemon/${t}_test.py
	case $t in */*) f=$t t=$(basename "$t" .py) ;; esac
	XDG_CACHE_HOME=$(mktemp -d) timeout "${LIMIT:-240}" python3 "$f" "$P/bin" >"$OUT/$t.txt" 2>&1
	rc=$?
	echo "$t rc=$rc $(( $(date +%s) - t0 )) s: $(grep '^SCRIPT:' "$OUT/$t.txt" | tail -1); failed: $(grep -c '^FAIL' "$OUT/$t.txt")" >>"$S"
done
(cd "$OUT" && tar czf s46.tgz ./*.txt && find . -name '*.txt' ! -name summary.txt -delete)
cat "$S"
