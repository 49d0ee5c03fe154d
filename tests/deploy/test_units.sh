#!/bin/sh
# The systemd units: systemd-analyze verify and security (exposure <= 2.5), and their flags and
# FFTBLOOM_* variables against the daemon's option table (units_test.py).
# Last line: "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/units_test.py" "$BUILD"
