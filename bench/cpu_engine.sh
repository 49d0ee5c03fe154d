#!/bin/sh
# Issue 42's table: the CPU engine's bloom (build/bench/cpu_bloom, what --engine cpu runs) against
# fftw_peer's plain FFTW bloom on the same cores, and the GPU engine on llvmpipe (fftbloom bench,
# --engine gpu's shaders on the CPU) where --llvmpipe asks, at the bloom workloads' sizes:
# bloom.270p.k64.fp32, bloom.1080p.k256.fp32, bloom.2160p.k512.fp32 (--quick: 270p alone).
# Both FFTW programs plan with FFTW_MEASURE into wisdom files of their own under $OUT, and run
# alternately REPEAT times (the machine's other load shifts between them, not onto one).
# Result lines (bench/bench_json.h) in $OUT/lines.jsonl, the tables on stderr.
#   sh bench/cpu_engine.sh [--quick] [--threads N] [--repeat N] [--llvmpipe] [--out DIR]
# On a 16-core GPU host: sh bench/cpu_engine.sh --threads 16 (the GPU is not used).
set -e
BUILD=${BUILD:-build}
quick=""; threads=0; repeat=2; llvmpipe=0; out=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--threads) threads=$2; shift ;;
	--repeat) repeat=$2; shift ;;
	--llvmpipe) llvmpipe=1 ;;
	--out) out=$2; shift ;;
	*) echo "usage: sh bench/cpu_engine.sh [--quick] [--threads N] [--repeat N] [--llvmpipe] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
make -s "$BUILD/bench/cpu_bloom" "$BUILD/bench/fftw_peer" "$BUILD/fftbloom-bench" >&2
out=${out:-$(mktemp -d /tmp/fftbloom-cpu-engine-XXXXXX)}
mkdir -p "$out"
ids="bloom.270p.k64.fp32"
[ -n "$quick" ] || ids="$ids,bloom.1080p.k256.fp32,bloom.2160p.k512.fp32"
qflag=${quick:+--quick}
peer_ids=$ids
i=0
while [ $i -lt "$repeat" ]; do
	"$BUILD/bench/cpu_bloom" $qflag --threads "$threads" --only "$ids" --wisdom "$out/cpu.wisdom" \
		>> "$out/lines.jsonl"
	# fftw_peer's --quick runs 270p alone; its full list the larger sizes
	if [ -n "$quick" ]; then
		"$BUILD/bench/fftw_peer" --quick --threads "$threads" --only "$peer_ids" \
			--wisdom "$out/peer.wisdom" >> "$out/lines.jsonl"
	else
		"$BUILD/bench/fftw_peer" --quick --threads "$threads" --only bloom.270p.k64.fp32 \
			--wisdom "$out/peer.wisdom" >> "$out/lines.jsonl"
		"$BUILD/bench/fftw_peer" --threads "$threads" --only "$peer_ids" \
			--wisdom "$out/peer.wisdom" >> "$out/lines.jsonl"
	fi
	i=$((i + 1))
done
if [ "$llvmpipe" = 1 ]; then
	# a few runs: a 1080p frame takes seconds there
	FFTBLOOM_ENGINE=gpu "$BUILD/fftbloom-bench" --suite bloom $qflag --variant default \
		--runs 3 --warmup 1 --only "$ids" >> "$out/lines.jsonl"
fi
echo "lines: $out/lines.jsonl" >&2
