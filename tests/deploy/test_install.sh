#!/bin/sh
# make install DESTDIR=... PREFIX=/usr lays out a tree whose fftbloomd runs (install_test.py).
# Last line: "SCRIPT: N passed, N failed".
# engine: gpu (the installed daemon writes its program cache where FFTBLOOM_PROGRAM_CACHE says); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/install_test.py" "$BUILD"
