#!/bin/sh
# The Dockerfile's build stage run as a script from its build context, the runtime stage checked
# against the staged tree (libraries, ENV, the health check over HTTP and HTTPS), and
# deploy/compose.yaml (container_test.py; no Docker engine runs here).
# Last line: "SCRIPT: N passed, N failed".
# lane: beside
# engine: gpu (the image's daemon as a GPU host runs it); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/container_test.py" "$BUILD"
