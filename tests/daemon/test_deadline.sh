#!/bin/sh
# Sizes that cannot wrap, GPU work past --gpu-timeout abandoned, SIGTERM that always ends the
# process (tests/daemon/deadline_test.py; the hung-GL-call check needs build/faults/fftbloomd from
# make faults). Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/deadline_test.py" "$BUILD"
