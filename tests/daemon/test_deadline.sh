#!/bin/sh
# Sizes that cannot wrap, GPU work past --gpu-timeout abandoned, SIGTERM that always ends the
# process (tests/daemon/deadline_test.py; the hung-GL-call check needs build/faults/fftbloomd from
# make faults). Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (conv2d's GPU work stopped between dispatches); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/deadline_test.py" "$BUILD"
