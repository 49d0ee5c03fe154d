#!/bin/bash
# fftbloom bench under two or more builds or wisdom files, a process each, alternated ROUNDS
# (default 2) times: each WHO is NAME=BINARY@WISDOM (WISDOM as --fft-wisdom takes it: a file,
# none, builtin), the bench's arguments follow "--". JSON lines to R/LABEL.jsonl, each run's
# stderr to R/LABEL-NAME-ROUND.txt, its table lines to stdout and R/LABEL.txt; a run is cut at
# TIMEOUT (default 150) seconds. (issue40_s16.sh, s17.sh, s19.sh)
# usage: bash bench/probes/alternate.sh R LABEL WHO... -- BENCH_ARGS...
R=$1 L=$2
shift 2
whos=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	whos+=("$1")
	shift
done
shift
for round in $(seq "${ROUNDS:-2}"); do
	for w in "${whos[@]}"; do
		name=${w%%=*} rest=${w#*=}
		timeout "${TIMEOUT:-150}" "${rest%@*}" bench "$@" --fft-wisdom "${rest##*@}" \
			>>"$R/$L.jsonl" 2>"$R/$L-$name-$round.txt"
		echo "== $name round $round rc $?"
		grep -E "^(bloom|fft|jpeg|big)\." "$R/$L-$name-$round.txt"
	done
done | tee "$R/$L.txt"
