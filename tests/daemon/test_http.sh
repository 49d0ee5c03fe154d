#!/bin/sh
# fftbloomd over real HTTP: starts $BUILD/fftbloomd on free loopback ports, talks to it with curl
# and Python's http.client, compares answers with the fftbloom CLI and a numpy reference, and
# stops it. Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (GPU JPEG planes, DCT and entropy coding, upload leases, conv2d); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/http_test.py" "$BUILD"
