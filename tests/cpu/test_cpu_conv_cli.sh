#!/bin/sh
# fftbloom conv2d and conv2d-transpose on --engine cpu through the CLI (npy files in and out)
# against PyTorch's float64 convolutions (tests/cpu/conv_cli_test.py), and one case on
# --engine gpu beside them. Last line: "SCRIPT: N passed, N failed".
# lane: beside
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/conv_cli_test.py" "$BUILD"
