#!/bin/bash
# The issue-40 blooms' A/B of two builds in one device call (issue40_s6b.sh, issue40_s6c.sh):
# the bloom workloads IDS (default: 1080p k256, 2160p k512, 1080p full-frame, 2160p k512 gray),
# PACK/bin's build ("new") against PACK/baseline's (NAME), each a process of fftbloom bench,
# alternated ROUNDS (3) times. JSON lines to R/ab.jsonl (variant default-new / default-NAME),
# the GPU stage lines to R/ab.txt.
# usage (remote_env.sh sourced): bash bench/probes/bloom_ab.sh PACK R NAME
P=$1 R=$2 NAME=$3 M=${MACHINE:-h200}
IDS=${IDS:-bloom.1080p.k256.fp32,bloom.2160p.k512.fp32,bloom.1080p.full.fp32,bloom.2160p.k512.gray.fp32}
for r in $(seq "${ROUNDS:-3}"); do
	for v in new "$NAME"; do
		b=$P/bin; [ "$v" = "$NAME" ] && b=$P/baseline
		timeout 90 "$b/fftbloom" bench --suite bloom --only "$IDS" --variant default --runs 30 \
			--warmup 5 --warm-seconds 1 --machine "$M" 2>"$R/ab.err" |
			sed "s/\"variant\":\"default\"/\"variant\":\"default-$v\"/" >>"$R/ab.jsonl"
		grep "GPU" "$R/ab.err" | sed "s/^/round $r $v: /" >>"$R/ab.txt"
	done
done
