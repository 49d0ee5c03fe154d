#!/bin/sh
# fftbloomd against hostile clients and faults (tests/daemon/hostile_test.py). Last line:
# "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: cpu for the HTTP, client and budget tests (FFTBLOOM_ENGINE in the environment
# overrides it); the tests of the GPU engine's own bounds (programs, new padded sizes, non-finite
# results, deadlines, GPU entropy decoding) start theirs on gpu (hostile_test.py's GPU)
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-cpu}"
exec /usr/bin/python3 "$(dirname "$0")/hostile_test.py" "$BUILD"
