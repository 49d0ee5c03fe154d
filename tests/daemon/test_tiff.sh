#!/bin/sh
# TIFF and HEIC over HTTP (tiff_test.py): posted to /v1/bloom, answered as TIFF by format= and by
# Accept, at every depth, the same pixels as the PNG of the same codes; HEIC answered as JPEG by
# default; broken files 422; /v1/info lists both. Last line: "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/tiff_test.py" "$BUILD"
