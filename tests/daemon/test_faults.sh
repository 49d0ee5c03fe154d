#!/bin/sh
# Every size on every context and GPU faults survived (tests/daemon/faults_test.py; needs
# build/faults/fftbloomd from make faults). Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (tiles past the storage-buffer limit, GPU faults, the software renderer's warning); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/faults_test.py" "$BUILD"
