#!/bin/sh
# Stored source images and the GET render URLs over real HTTP (tests/daemon/store_test.py): ETags,
# 304s without GPU work, caching headers, limits, --image-dir and SIGHUP, signed URLs. Last line:
# "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/store_test.py" "$BUILD"
