#!/bin/sh
# fftbloomd over several GPUs over real HTTP: two worker processes under one supervisor on one
# port (--gpus 0,0), summed /metrics, /readyz per GPU, one named store, a killed and a hung worker
# restarted alone, a clean stop (workers_test.py). Last line: "SCRIPT: N passed, N failed".
BUILD=${BUILD:-build}
# engine: gpu (one worker process per GPU); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
exec /usr/bin/python3 "$(dirname "$0")/workers_test.py" "$BUILD"
