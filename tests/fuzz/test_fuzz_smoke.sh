#!/bin/sh
# CI smoke for the libFuzzer targets (tests/fuzz/, every one fuzz.mk lists): builds them with
# clang, runs each over its whole seed corpus, then fuzzes each for FUZZ_SMOKE_SECONDS (default
# 2) from those seeds in a scratch directory, with its dictionary where it has one. A target
# passes when libFuzzer finds no crash, leak, timeout or sanitizer report. Prints
# "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
SECS=${FUZZ_SMOKE_SECONDS:-2}
passed=0
failed=0
log=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$log" "$work"' EXIT
if ! command -v clang >/dev/null 2>&1; then
	echo "fuzz smoke: clang not found (make deps-test installs it)"
	echo "SCRIPT: 0 passed, 1 failed"
	exit 1
fi
if ! make -s -j"$(nproc 2>/dev/null || echo 1)" -f tests/fuzz/fuzz.mk fuzz-build BUILD="$BUILD" >"$log" 2>&1; then
	cat "$log"
	echo "fuzz smoke: building the fuzz targets failed"
	echo "SCRIPT: 0 passed, 1 failed"
	exit 1
fi
for t in $(make -s -f tests/fuzz/fuzz.mk fuzz-names); do
	bin="$BUILD/fuzz/fuzz_$t"
	seeds="tests/fuzz/corpus/$t"
	n=$(ls "$seeds" | wc -l)
	mkdir -p "$work/$t"
	dict=
	[ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
	if "$bin" -runs=0 -timeout=10 -rss_limit_mb=2048 "$seeds" >"$log" 2>&1 &&
	   "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-artifact_prefix="$work/$t/" $dict "$work/$t" "$seeds" >>"$log" 2>&1; then
		execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1)
		runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -1)
		echo "ok   fuzz_$t: $n seeds, $runs"
		passed=$((passed + 1))
	else
		tail -40 "$log"
		echo "FAIL fuzz_$t (crash input, if any, in $work/$t/ was removed; rerun to keep it)"
		failed=$((failed + 1))
	fi
done
echo "SCRIPT: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
