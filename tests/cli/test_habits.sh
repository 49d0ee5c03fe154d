#!/bin/sh
# The CLI's one rule set across its subcommands (docs/cli.md, "Habits"), table-driven
# (tests/cli/habits_test.py). Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (conv2d and the GPU stage summary); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/habits_test.py" "$BUILD"
