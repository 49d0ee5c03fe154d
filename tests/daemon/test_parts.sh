#!/bin/sh
# fftbloomd's multipart part limit over HTTP (tests/daemon/parts_test.py). Last line:
# "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/parts_test.py" "$BUILD"
