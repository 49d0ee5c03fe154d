#!/bin/sh
# fftbloomd and fftbloom quiet and looking right by default (look_test.py): bloom's defaults by
# the input's kind, one rule for NaN and infinity in inputs, X-Image-Lost and the CLI's
# warnings only for real losses, stage timings that add up. Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: cpu (the defaults, warnings and non-finite refusals: no GPU behaviour); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-cpu}"
exec /usr/bin/python3 "$(dirname "$0")/look_test.py" "$BUILD"
