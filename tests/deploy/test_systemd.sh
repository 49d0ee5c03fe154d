#!/bin/sh
# The systemd protocol against build/fftbloomd on llvmpipe, this test playing systemd's side:
# NOTIFY_SOCKET (READY=1 after the warm-up, STATUS=, the watchdog fed by the GPU heartbeat,
# STOPPING=1), LISTEN_FDS sockets and the credentials folder (systemd_test.py).
# Last line: "SCRIPT: N passed, N failed".
# engine: gpu (warm sizes planned before READY=1, the GPU thread's heartbeat and watchdog); FFTBLOOM_ENGINE in the environment overrides it
export FFTBLOOM_ENGINE="${FFTBLOOM_ENGINE:-gpu}"
BUILD=${BUILD:-build}
exec /usr/bin/python3 "$(dirname "$0")/systemd_test.py" "$BUILD"
