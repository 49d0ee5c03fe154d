#!/bin/sh
# `make bench` on this machine: fftbloom's GPU stages (bench --quick, sized for llvmpipe), the
# FFTW peer (the quick sizes beside them, then the full sizes), the codec ceiling and the answer
# formats' encode costs at 1920x1080, and bench/e2e.sh at a small frame size. JSON lines under $BUILD/bench/, a table at the end.
# BENCH_E2E_SIZE (640x360), BENCH_E2E_SECONDS (10) and BENCH_FFTW_FULL (1) size it.
set -eu
BUILD=${BUILD:-build}
out=$BUILD/bench
mkdir -p "$out"
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
log=$out/bench.txt
echo "make bench $date on $(uname -n), $(nproc) cores" | tee "$log"

echo "== fftbloom bench --quick" | tee -a "$log"
"$BUILD/fftbloom" bench --quick >"$out/fftbloom_quick.jsonl" 2>"$out/fftbloom_quick.txt"
tee -a "$log" <"$out/fftbloom_quick.txt"

echo "== FFTW peer (quick sizes, then full sizes)" | tee -a "$log"
"$BUILD/bench/fftw_peer" --quick --wisdom "$out/fftw.wisdom" >"$out/fftw_quick.jsonl" 2>"$out/fftw_quick.txt"
tee -a "$log" <"$out/fftw_quick.txt"
if [ "${BENCH_FFTW_FULL:-1}" != 0 ]; then
	"$BUILD/bench/fftw_peer" --max-seconds 5 --wisdom "$out/fftw.wisdom" >"$out/fftw.jsonl" 2>"$out/fftw.txt"
	tee -a "$log" <"$out/fftw.txt"
fi

echo "== codec ceiling (1920x1080, one thread, protocol/image decode + encode)" | tee -a "$log"
"$BUILD/bench/codec_ceiling" --max-seconds 15 --label 1920x1080 bench/frames/1920x1080/*.jpg \
	>"$out/codec.jsonl" 2>"$out/codec.txt"
tee -a "$log" <"$out/codec.txt"

echo "== answer formats (1920x1080, one thread each: JPEG, PNG, WebP, AVIF encode)" | tee -a "$log"
"$BUILD/bench/encode_formats" --runs 5 --max-seconds 20 --label 1920x1080 \
	bench/frames/1920x1080/*.jpg >"$out/formats.jsonl" 2>"$out/formats.txt"
tee -a "$log" <"$out/formats.txt"

echo "== end to end (bench/e2e.sh, ${BENCH_E2E_SIZE:-640x360} frames)" | tee -a "$log"
BUILD=$BUILD E2E_SIZE=${BENCH_E2E_SIZE:-640x360} E2E_SECONDS=${BENCH_E2E_SECONDS:-10} \
	E2E_OUT="$out/e2e.jsonl" sh bench/e2e.sh >/dev/null 2>"$out/e2e.txt"
tee -a "$log" <"$out/e2e.txt"

echo "JSON lines: $out/fftbloom_quick.jsonl $out/fftw_quick.jsonl $out/fftw.jsonl $out/codec.jsonl $out/formats.jsonl $out/e2e.jsonl; this log: $log"
