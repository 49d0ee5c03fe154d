#!/bin/sh
# The duplicate-code check of the product's C (tests/build/duplicates_test.py, jscpd from
# tests/js). Last line: "SCRIPT: N passed, N failed".
# lane: beside
exec /usr/bin/python3 "$(dirname "$0")/duplicates_test.py"
