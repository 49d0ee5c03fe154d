#!/bin/sh
# fftbloomd over real HTTP: starts $BUILD/fftbloomd on free loopback ports, talks to it with curl
# and Python's http.client, compares answers with the fftbloom CLI and a numpy reference, and
# stops it. Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/http_test.py" "$BUILD"
