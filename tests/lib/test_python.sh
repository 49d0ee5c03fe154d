#!/bin/sh
# The Python module (python/fftbloom over BUILD/libfftbloom.so.0) against scipy, numpy and
# float64 sums: tests/lib/python_test.py. Last line: "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
if ! /usr/bin/python3 -c 'import numpy, scipy.signal' 2>/dev/null; then
	echo "skip: python3-numpy and python3-scipy are needed (make deps-test)"
	echo "SCRIPT: 0 passed, 0 failed"
	exit 0
fi
# a library built with AddressSanitizer (make sanitize) loads into python3 only after its
# runtime; Python's own allocations are not this project's leaks
if ldd "$BUILD/libfftbloom.so.0" 2>/dev/null | grep -q libasan; then
	LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export LD_PRELOAD ASAN_OPTIONS
fi
exec /usr/bin/python3 "$(dirname "$0")/python_test.py" "$BUILD"
