#!/bin/sh
# The soak's CI version (tests/soak/soak.py): 20 s of mixed valid, invalid and hostile requests at
# saturation against $BUILD/fftbloomd, then the bomb phase, the checks and SIGTERM (two to three
# minutes in all). `make soak` runs the long version. Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
SOAK_SECONDS=${SOAK_SECONDS:-20} exec /usr/bin/python3 "$(dirname "$0")/soak.py" "$BUILD"
