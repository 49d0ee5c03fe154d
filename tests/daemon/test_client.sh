#!/bin/sh
# fftbloom's client mode (--server) against a running fftbloomd and a fake server, and the
# version facts (fftbloomd --version, fftbloom --version, fftbloom info), over real HTTP
# (tests/daemon/client_test.py). Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (a local run where no EGL context can be made must fail: the GPU engine); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/client_test.py" "$BUILD"
