#!/bin/bash
# The GPU test binaries of a pack run on the device (issue40_s6.sh, s6b, s7): each of TESTS
# (PACK/tests/gles/NAME) under a timeout of SECONDS_EACH (default 150) seconds, its output and exit status
# appended to R/tests.txt; the pass and fail lines printed.
# usage: bash bench/probes/gpu_tests.sh PACK R TEST...
P=$1 R=$2; shift 2
for t in "$@"; do
	echo "=== $t" >>"$R/tests.txt"
	timeout "${SECONDS_EACH:-150}" "$P/tests/gles/$t" >>"$R/tests.txt" 2>&1
	echo "=== $t rc $?" >>"$R/tests.txt"
done
grep "^=== \|FAILED\|PASSED" "$R/tests.txt"
