#!/bin/sh
# Stored source images and the GET render URLs over real HTTP (tests/daemon/store_test.py): ETags,
# 304s without GPU work, caching headers, limits, --image-dir and SIGHUP, signed URLs. Last line:
# "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: cpu (stored images, GET renders, ETags, signed URLs against numpy: no GPU behaviour); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-cpu}"
exec /usr/bin/python3 "$(dirname "$0")/store_test.py" "$BUILD"
