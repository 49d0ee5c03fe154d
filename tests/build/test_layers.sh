#!/bin/sh
# The include graph and the CLI's link (tests/build/layers_test.py). Last line:
# "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/layers_test.py" "$BUILD"
