#!/bin/sh
# fftbloomd's --max-body at its exact edge, Content-Length and chunked
# (tests/daemon/limits_test.py). Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: cpu (HTTP body limits: no GPU behaviour); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-cpu}"
exec /usr/bin/python3 "$(dirname "$0")/limits_test.py" "$BUILD"
