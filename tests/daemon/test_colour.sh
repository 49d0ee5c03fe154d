#!/bin/sh
# Colour profiles over real HTTP (colour_test.py): a Display P3 PNG and JPEG through a no-op
# bloom answered as sRGB against a float64 reference, and with keep_profile=1 in their profile.
# Last line: "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/colour_test.py" "$BUILD"
