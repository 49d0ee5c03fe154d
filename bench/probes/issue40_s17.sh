#!/bin/bash
# Issue 40, the bloom's rows measured with their ends in both kinds of rounds (2026-11-29): since
# issue40_s16.sh each invocation count is also measured in the other kind of rounds (two vec2
# rounds or four float rounds; the rule's FFT_FLOAT_ROUNDS_TO is the H200's). PACK/noio holds
# the pack's fftbloom, fftbloom-bench and fftbloomd built with the shipped ends lines left out.
#  A. noio on an empty wisdom file: the bloom suite's blooms once, each plan's rows measured at
#     its first frame (w.txt, tune.log);
#  B. two rounds alternated, a process each: the product (shipped wisdom, nothing measured)
#     against noio on w.txt (blooms.txt, blooms.jsonl);
#  C. the daemon's idle path (rows_tune_daemon.sh; at T0555 inline, ten requests, which ended
#     before the rows were measured): noio fftbloomd, nothing cached, an empty wisdom file, a
#     1920x1080 float frame bloomed with a registered 256x256 kernel, then requests 2.5 s apart
#     while idle steps measure the rows (daemon.txt, d.log).
# usage (repository root, a pack in .carry with noio/): bash bench/probes/issue40_s17.sh
P=$PWD/.carry
. "$P/bench/remote_env.sh" "$P"
R=${OUT:-/tmp}/s17; mkdir -p "$R"
M=${MACHINE:-h200}
curl() { LD_LIBRARY_PATH= command curl "$@"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; date -u; cat "$P/COMMIT"; } >"$R/card.txt" 2>&1
IDS=bloom.1080p.k256.fp32,bloom.1080p.k256.gray.fp32,bloom.1080p.k256.fp16,bloom.1080p.full.fp32,bloom.2160p.k512.fp32,bloom.2160p.k512.gray.fp32,bloom.2160p.k512.fp16
B="--suite bloom --only $IDS --variant default --machine $M --program-cache none"
# shellcheck disable=SC2086
bash "$(dirname "$0")/measure_empty.sh" "$R" "$P/noio/fftbloom" "FFT wisdom: the bloom" -- $B
# shellcheck disable=SC2086
bash "$(dirname "$0")/alternate.sh" "$R" blooms "product=$P/bin/fftbloom@none" \
	"noio=$P/noio/fftbloom@$R/w.txt" -- $B --runs 30
# C: the daemon (since issue40_s18.sh in rows_tune_daemon.sh, which waits for the rows' line)
bash "$(dirname "$0")/rows_tune_daemon.sh" "$P" "$P/noio/fftbloomd" "$R"
tar czf "${OUT:-/tmp}/r.tgz" -C "$(dirname "$R")" s17 && rm -rf "$R"
