#!/bin/sh
# fftbloomd against hostile clients and faults (tests/daemon/hostile_test.py). Last line:
# "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (program cache bounds, new padded sizes per client, GPU timeouts); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/hostile_test.py" "$BUILD"
