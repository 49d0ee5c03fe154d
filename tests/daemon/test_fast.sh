#!/bin/sh
# fftbloomd fast by default over real HTTP: the cache directory's programs and FFT wisdom, and
# new sizes answered at once with their FFT shapes measured in idle time (fast_test.py).
# Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (program cache, FFT wisdom measured in idle time, compile threads); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/fast_test.py" "$BUILD"
