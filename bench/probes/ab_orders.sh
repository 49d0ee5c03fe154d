#!/bin/bash
# fftbloom bench with a boolean bloom context option against its default frame by frame in one
# process (--ab), ROUNDS (default 2) processes, then the other order (the option given, --ab
# its =false), one process: the table lines to stdout and R/LABEL.txt, each run's JSON lines and
# stderr as alternate.sh writes them (LABEL and LABELrev). (issue40_s35.sh, s36, s37, s41)
# usage: bash bench/probes/ab_orders.sh R LABEL BINARY FLAG -- BENCH_ARGS...
R=$1 L=$2 BIN=$3 FLAG=$4
shift 4
[ "$1" = "--" ] && shift
{
	bash "$(dirname "$0")/alternate.sh" "$R" "$L" "new=$BIN@none" -- "$@" --ab "$FLAG"
	ROUNDS=1 bash "$(dirname "$0")/alternate.sh" "$R" "${L}rev" "new=$BIN@none" -- "$@" "$FLAG" \
		--ab "$FLAG=false"
} | tee "$R/$L.txt"
