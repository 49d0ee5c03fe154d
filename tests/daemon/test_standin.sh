#!/bin/sh
# --cpu-standin: frames sent while the GPU thread is held by idle work run on the CPU engine
# (tests/daemon/standin_test.py; needs build/faults/fftbloomd from make faults). Last line:
# "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (the stand-in stands in for a GPU thread); FFTBLOOM_ENGINE in the environment
# overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/standin_test.py" "$BUILD"
