#!/bin/sh
# fftbloomd --engine cpu: several frames at once and tiles over HTTP (tests/daemon/lanes_test.py).
# Last line: "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
# engine: cpu (the CPU engine's worker is what this tests); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-cpu}"
exec /usr/bin/python3 "$(dirname "$0")/lanes_test.py" "$BUILD"
