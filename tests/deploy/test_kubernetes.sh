#!/bin/sh
# deploy/kubernetes/: every manifest against the daemon's option table, OpenAPI paths and
# metrics, and a run of that configuration (kubernetes_test.py).
# Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/kubernetes_test.py" "$BUILD"
