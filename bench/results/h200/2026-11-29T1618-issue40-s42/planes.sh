#!/bin/sh
exec /work/main/.carry/bin/fftbloom "$@" --shader-dir /work/main/.carry/shaders_planes
