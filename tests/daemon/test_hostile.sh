#!/bin/sh
# fftbloomd against hostile clients and faults (tests/daemon/hostile_test.py). Last line:
# "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/hostile_test.py" "$BUILD"
