#!/bin/sh
# The CLI's one rule set across its subcommands (docs/cli.md, "Habits"), table-driven
# (tests/cli/habits_test.py). Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/habits_test.py" "$BUILD"
