#!/bin/sh
# lane: beside
# Rendering from an origin (GET /v1/bloom?src=URL) and the result cache over real HTTP against a
# loopback nginx the script starts on a free port (tests/daemon/origin_test.py): allowed and
# refused origins, redirects, slow, oversized, 404/500 origins, the SSRF list, cache hits and
# evictions, signed URLs, https origins with a private CA (--origin-ca). Last line:
# "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/origin_test.py" "$BUILD"
