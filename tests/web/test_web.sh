#!/bin/sh
# The web page at / in a real browser: headless Chromium (Debian's chromium, chromium-driver and
# python3-selenium) against $BUILD/fftbloomd on a free port; see web_test.py. Screenshots go to
# $BUILD/web/. Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (the browser page against a GPU-engine daemon, as before); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/web_test.py" "$BUILD"
