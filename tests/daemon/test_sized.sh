#!/bin/sh
# Sized outputs over real HTTP (sized_test.py): each fit mode's size for several boxes, width or
# height alone, dpr; resize=after against a float64 Lanczos-3 reference; the bloom's kernel rule
# at half size; limits (400, 413 output_too_large); ETags by size. Last line: "SCRIPT: N passed,
# N failed".
# lane: beside
# engine: auto (the CPU engine where there is no GPU: CI); FFTBLOOM_ENGINE=gpu runs it on the GPU
# engine, as it was checked on llvmpipe (sized_test.py compares with numpy either way)
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/sized_test.py" "$BUILD"
