#!/bin/sh
# No request waits for a compile (compile_test.py): with each --compile-mode, a fresh daemon
# (nothing cached) answers its first request of a new size on the plan built before ready, and
# the requests arriving while that size's plan compiles in idle time, all against numpy's float64
# direct convolution. Last line: "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
# engine: gpu (the compile modes are the GPU engine's)
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/compile_test.py" "$BUILD"
