#!/bin/sh
# Runs libFuzzer targets one after another: run.sh BUILD SECONDS NAME... Each target fuzzes a
# scratch corpus (BUILD/fuzz/work/NAME) seeded from the committed one (tests/fuzz/corpus/NAME,
# never modified), with tests/fuzz/NAME.dict when there is one; crash, leak, timeout and oom
# inputs land in BUILD/fuzz/crash/NAME/. Prints one line per target (executions, seconds,
# corpus units, crash files) and writes the same as a table to BUILD/fuzz/summary.md (appended,
# one line per target, to BUILD/fuzz/history.tsv). Exits 1 if any target failed.
BUILD=${1:-build}
SECS=${2:-60}
shift 2
DIR=$BUILD/fuzz
mkdir -p "$DIR/log"
SUMMARY=$DIR/summary.md
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%dT%H:%MZ)
{
	echo "fuzz run $date, commit $commit, $SECS s per target, $(nproc) cores, $(uname -m)"
	echo
	echo "| target | executions | seconds | exec/s | corpus units (seeds) | new files | crash files | result |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$SUMMARY"
failed=0
for t in "$@"; do
	bin=$DIR/fuzz_$t
	seeds=tests/fuzz/corpus/$t
	work=$DIR/work/$t
	crash=$DIR/crash/$t
	log=$DIR/log/$t.log
	mkdir -p "$work" "$crash"
	case $t in
	query|apiutil) maxlen=4096 ;;
	*) maxlen=65536 ;;
	esac
	dict=
	[ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
	nseeds=$(ls "$seeds" 2>/dev/null | wc -l)
	before=$(ls "$work" | wc -l)
	crashes_before=$(ls "$crash" | wc -l)
	echo "=== fuzz_$t for $SECS s ($nseeds seeds${dict:+, dictionary})"
	t0=$(date +%s)
	if [ "${FUZZ_CLOCK:-wall}" = cpu ]; then
		# SECS of the fuzzer's own CPU time: it may share the cores (nice) and still fuzz as
		# long as asked. SIGINT makes libFuzzer print its final stats and exit 72.
		"$bin" -max_total_time=$((SECS * 50)) -timeout=10 -rss_limit_mb=2048 -max_len=$maxlen \
			-print_final_stats=1 -artifact_prefix="$crash/" $dict "$work" "$seeds" >"$log" 2>&1 &
		pid=$!
		tck=$(getconf CLK_TCK)
		used=0
		while kill -0 "$pid" 2>/dev/null; do
			sleep 5
			now=$(awk -v t="$tck" '{ print int(($14 + $15) / t) }' "/proc/$pid/stat" 2>/dev/null)
			[ -n "$now" ] && used=$now
			[ "${used:-0}" -ge "$SECS" ] && kill -INT "$pid" 2>/dev/null
		done
		wait "$pid"
		rc=$?
		[ $rc -eq 72 ] && rc=0
		echo "cpu seconds: ${used:-?}" >>"$log"
	else
		"$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=$maxlen \
			-print_final_stats=1 -artifact_prefix="$crash/" $dict "$work" "$seeds" >"$log" 2>&1
		rc=$?
	fi
	t1=$(date +%s)
	execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\)/\1/p' "$log" | tail -1)
	corp=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
	new=$(( $(ls "$work" | wc -l) - before ))
	crashes=$(( $(ls "$crash" | wc -l) - crashes_before ))
	secs=$((t1 - t0))
	rate=$(( ${execs:-0} / (secs > 0 ? secs : 1) ))
	result=ok
	if [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
		result="FAIL (rc $rc; log $log)"
		failed=1
		tail -30 "$log"
	fi
	printf 'fuzz_%s: %s executions in %s s (%s/s), corpus %s units (%s seeds), %s new files, %s crash files: %s\n' \
		"$t" "${execs:-?}" "$secs" "$rate" "${corp:-?}" "$nseeds" "$new" "$crashes" "$result"
	echo "| $t | ${execs:-?} | $secs | $rate | ${corp:-?} ($nseeds) | $new | $crashes | $result |" >>"$SUMMARY"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$date" "$commit" "$t" "${execs:-?}" "$secs" \
		"${corp:-?}" "$nseeds" "$crashes" "$result" >>"$DIR/history.tsv"
done
echo "summary: $SUMMARY"
exit $failed
