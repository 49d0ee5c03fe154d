#!/bin/sh
# make install DESTDIR=... PREFIX=/usr lays out a tree whose fftbloomd runs (install_test.py).
# Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/install_test.py" "$BUILD"
