#!/bin/sh
# fftbloom's client mode (--server) against a running fftbloomd and a fake server, and the
# version facts (fftbloomd --version, fftbloom --version, fftbloom info), over real HTTP
# (tests/daemon/client_test.py). Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/client_test.py" "$BUILD"
