#!/bin/sh
# The examples of README.md and docs/*.md, run against a daemon and the CLI as a reader would run
# them (tests/docs/run_examples.py: which blocks, how outputs are compared), the links between the
# documents, and docs/configuration.md against the option table. Last line: "SCRIPT: N passed,
# N failed".
# lane: beside
BUILD=${BUILD:-build}
# engine: gpu (the documents' conv2d examples); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/run_examples.py" "$BUILD"
