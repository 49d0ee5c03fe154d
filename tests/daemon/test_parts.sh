#!/bin/sh
# fftbloomd's multipart part limit over HTTP (tests/daemon/parts_test.py). Last line:
# "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: cpu (multipart parts and fields: no GPU behaviour); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-cpu}"
exec /usr/bin/python3 "$(dirname "$0")/parts_test.py" "$BUILD"
