#!/bin/bash
# Issue 40, deliver 4 (after the --compile-mode process commit): the compile rows with idle work
# in a successor process against the default (parallel), each daemon with nothing cached:
# fresh (start -> /readyz, the first 1080p request after it) and idle (1080p requests 0.7 and
# 2.5 s apart after a new size's request, for process until the successor took over and four
# after), two rounds (bench/probes/issue40_compile.sh; results in r.tgz, figures at the end).
# usage (repository root, a pack in .carry with bench/frames): bash bench/probes/issue40_s45.sh
MODES=${MODES:-"process parallel"} ROUNDS=${ROUNDS:-2} NO_PROBE=1 bash "$(dirname "$0")/issue40_compile.sh"
