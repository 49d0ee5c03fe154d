#!/bin/sh
# Runs every test: the cmocka binaries given after BUILD (the Makefile passes the ones its
# folders list; with none, every test_* binary under BUILD/tests) and each tests/*/test_*.sh
# script. Prints one closing line "N passed, N failed" summed over all of them; exits 1 on any
# failure. Before it, the twelve slowest with their seconds and CPU seconds (the CPU its processes
# used: a test far below its seconds waits), to keep CI's 15 minutes in view. TEST_LANES: how
# many cmocka binaries run at once (default 2); scripts marked "# lane: beside" run in a lane
# beside the others.
BUILD=${1:-build}
[ $# -gt 0 ] && shift
bins="$*"
[ -n "$bins" ] || bins=$(find "$BUILD/tests" -type f -name 'test_*' ! -name '*.o' ! -name '*.d' 2>/dev/null | sort)
export CMOCKA_MESSAGE_OUTPUT=stdout
# fftbloom and fftbloomd keep compiled programs and FFT wisdom in the user's cache directory by
# default: a fresh one for each run, so that no run reads what an earlier one left
XDG_CACHE_HOME=$(mktemp -d /tmp/fftbloom-test-cache-XXXXXX)
export XDG_CACHE_HOME
unset CACHE_DIRECTORY
times=$(mktemp /tmp/fftbloom-test-times-XXXXXX)
tms=$(mktemp /tmp/fftbloom-test-tms-XXXXXX)
lane_dir=$(mktemp -d /tmp/fftbloom-test-lanes-XXXXXX)
trap 'rm -rf "$XDG_CACHE_HOME" "$times" "$tms" "$lane_dir"' EXIT
# CPU seconds (user + system) of this shell's finished children, as `times >"$tms"` wrote them
# (times runs in this shell: in a command substitution it would count the subshell's)
tms_cpu() { awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] } printf "%d", n }' "$tms"; }
passed=0; failed=0; failed_names=""
# count NAME RC: adds up the output in $out of a test that exited RC
count() {
	name=$1; rc=$2
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	sp=$(printf '%s\n' "$out" | sed -n 's/^SCRIPT: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' | tail -1)
	sf=$(printf '%s\n' "$out" | sed -n 's/^SCRIPT: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' | tail -1)
	p=$((p + ${sp:-0})); f=$((f + ${sf:-0}))
	if [ $rc -ne 0 ] && [ $f -eq 0 ]; then f=1; fi
	if [ $p -eq 0 ] && [ $f -eq 0 ]; then f=1; echo "$name: ran no test"; fi
	passed=$((passed + p)); failed=$((failed + f))
	[ $f -ne 0 ] && failed_names="$failed_names $name"
}
run_one() {
	name=$1; shift
	echo "=== $name"
	t0=$(date +%s)
	times >"$tms"; c0=$(tms_cpu)
	out=$("$@" 2>&1); rc=$?
	times >"$tms"; c1=$(tms_cpu)
	echo "$(( $(date +%s) - t0 )) $name ($((c1 - c0)) s CPU)" >>"$times"
	count "$name" $rc
}
# The cmocka binaries run TEST_LANES at a time (default 2): each is one process of CPU work with
# no timing in its checks, and the GPU ones keep about one core busy on llvmpipe. Their outputs
# are printed and counted in order afterwards. The scripts, which time daemons, run one by one,
# but for those marked to run beside them (below).
lanes=${TEST_LANES:-2}
i=0
for t in $bins; do i=$((i + 1)); echo "$i $t"; done >"$lane_dir/list"
xargs -P "$lanes" -L 1 sh -c 't0=$(date +%s); if [ -x "$2" ]; then "$2"; else false; fi \
	>"$0/$1.out" 2>&1; echo $? >"$0/$1.rc"; echo $(($(date +%s) - t0)) >"$0/$1.s"' \
	"$lane_dir" <"$lane_dir/list"
i=0
for t in $bins; do
	i=$((i + 1))
	echo "=== $t"
	out=$(cat "$lane_dir/$i.out" 2>/dev/null)
	echo "$(cat "$lane_dir/$i.s" 2>/dev/null || echo 0) $t (in $lanes lanes)" >>"$times"
	count "$t" "$(cat "$lane_dir/$i.rc" 2>/dev/null || echo 1)"
done
# A script with a line "# lane: beside" checks no timing and starts no daemon whose timing a
# check reads (builds, scans, fuzzing, the bench harness's lines): those run one by one in a
# lane of their own beside the others, and are printed and counted after them.
all_scripts=$(ls tests/*/test_*.sh 2>/dev/null | sort)
beside=$(grep -l '^# lane: beside$' $all_scripts 2>/dev/null)
(
	for s in $beside; do
		t0=$(date +%s)
		env BUILD="$BUILD" sh "$s" >"$lane_dir/$(echo "$s" | tr / _).out" 2>&1
		echo $? >"$lane_dir/$(echo "$s" | tr / _).rc"
		echo "$(($(date +%s) - t0)) $s (beside)" >>"$lane_dir/beside.times"
	done
) &
beside_pid=$!
for s in $all_scripts; do
	case " $(echo $beside) " in *" $s "*) continue ;; esac
	run_one "$s" env BUILD="$BUILD" sh "$s"
done
wait $beside_pid
for s in $beside; do
	echo "=== $s (beside)"
	out=$(cat "$lane_dir/$(echo "$s" | tr / _).out" 2>/dev/null)
	count "$s" "$(cat "$lane_dir/$(echo "$s" | tr / _).rc" 2>/dev/null || echo 1)"
done
cat "$lane_dir/beside.times" >>"$times" 2>/dev/null
echo "slowest (seconds):"
sort -rn "$times" | head -12 | sed 's/^/  /'
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
